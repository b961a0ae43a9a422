"""Append-only response cache: one JSON line per answer, flushed and fsync'd as each answer arrives.

A run killed at any moment loses at most the line being written; a torn last line is ignored on load and the
next append starts on a fresh line. Keys hash the backend identity, decoding parameters, sample index and
messages, so the same prompt under other settings is a different entry. No secrets are stored.

The cache never stops a run: a damaged entry is ignored (its prompt is asked again, warned once), and a cache
that cannot be read or written (read-only folder, full disk) is warned about once while the run goes on. The one
exception is what someone else may have put at the cache's name in a shared output folder: a symbolic link, FIFO
or hard-linked file there is refused in one line (pragmeter.io.nofollow), never read or appended to.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

from pragmeter.io.nofollow import open_nofollow
from pragmeter.text import text_hash

log = logging.getLogger("pragmeter")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def cache_key(identity: dict, decoding: dict, messages: list[dict], sample: int = 0) -> str:
    payload = json.dumps({"identity": identity, "decoding": decoding, "sample": sample, "messages": messages},
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return text_hash(payload)


class ResponseCache:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._entries: dict[str, dict] = {}
        self._fd = -1
        self._warned: set[str] = set()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # one descriptor to read and append: the file read is the one written, never a link's target
            self._fd = open_nofollow(self.path, append=True, read=True)
        except OSError as error:  # a run never fails for its cache: it asks again what it cannot store
            self._warn("write", f"cannot be written ({error.strerror or error}); going on without storing answers")
            self._load_readonly()
            return
        self._load(self._fd)

    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            log.warning("response cache %s: %s", self.path, message)

    def _load_readonly(self) -> None:
        """Read the entries of a cache that cannot be written (a read-only folder), if it is a regular file."""
        try:
            fd = os.open(self.path, os.O_RDONLY | _NOFOLLOW)
        except FileNotFoundError:
            return
        except OSError as error:
            self._warn("read", f"cannot be read ({error.strerror or error}); every prompt is asked again")
            return
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                self._load(fd)
        finally:
            os.close(fd)

    def _load(self, fd: int) -> None:
        try:
            raw = _read_all(fd)
        except OSError as error:
            self._warn("read", f"cannot be read ({error.strerror or error}); every prompt is asked again")
            return
        bad = 0
        for line in raw.split(b"\n"):
            try:
                entry = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                bad += bool(line.strip())  # a torn line from a killed run, or a damaged one
                continue
            if _valid(entry):
                self._entries[entry["key"]] = entry
            else:
                bad += 1
        if bad > 1 or (bad and raw.endswith(b"\n")):  # one torn last line is the normal trace of a kill
            self._warn("corrupt", f"{bad} damaged entr{'y' if bad == 1 else 'ies'} ignored; those prompts are "
                                  "asked again")
        if raw and not raw.endswith(b"\n") and fd == self._fd:
            try:
                os.write(fd, b"\n")
            except OSError as error:
                self._warn("write", f"cannot be written ({error.strerror or error}); going on without storing "
                                    "answers")
                self.close()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> dict | None:
        return self._entries.get(key)

    def put(self, key: str, entry: dict) -> None:
        entry = {"key": key, **entry}
        self._entries[key] = entry
        if self._fd < 0:
            return
        line = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            os.write(self._fd, line)  # one write() on an O_APPEND descriptor: lines never interleave (thread-safe)
            os.fsync(self._fd)
        except OSError as error:  # full disk: the answer is still used by this run
            self._warn("write", f"cannot be written ({error.strerror or error}); going on without storing answers")
            self.close()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _valid(entry: object) -> bool:
    """An entry a run can use: a key and the answer's text (anything else is asked again)."""
    return (isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("text"), str)
            and isinstance(entry.get("finish_reason"), (str, type(None))))


def _read_all(fd: int) -> bytes:
    chunks, offset = [], 0
    while chunk := os.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)
