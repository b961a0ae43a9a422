"""Append-only response cache: one JSON line per answer, flushed and fsync'd as each answer arrives.

A run killed at any moment loses at most the line being written; a torn last line is ignored on load and the
next append starts on a fresh line. Keys hash the backend identity, decoding parameters, sample index and
messages, so the same prompt under other settings is a different entry. No secrets are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def cache_key(identity: dict, decoding: dict, messages: list[dict], sample: int = 0) -> str:
    payload = json.dumps({"identity": identity, "decoding": decoding, "sample": sample, "messages": messages},
                         sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._entries: dict[str, dict] = {}
        self._load()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _load(self) -> None:
        if not self.path.exists():
            return
        raw = self.path.read_bytes()
        for line in raw.split(b"\n"):
            try:
                entry = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue  # a torn line from a killed run
            if isinstance(entry, dict) and "key" in entry:
                self._entries[entry["key"]] = entry
        if raw and not raw.endswith(b"\n"):
            with open(self.path, "ab") as handle:
                handle.write(b"\n")

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> dict | None:
        return self._entries.get(key)

    def put(self, key: str, entry: dict) -> None:
        entry = {"key": key, **entry}
        line = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        os.write(self._fd, line)  # one write() on an O_APPEND descriptor: lines never interleave (thread-safe)
        os.fsync(self._fd)
        self._entries[key] = entry

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
