"""What an encoder *is*, for cache keys: a hash of its weights, tokenizer and config files, not its name or path.

Exports (ONNX, OpenVINO) and embedding caches are keyed by it, so a folder whose weights were replaced never returns
the old numbers. Hashing an encoder's weights on every use would cost more than the use, so each file's hash is kept
in ``$PRAGMETER_CACHE/fingerprints.json`` under its identity and stamps (device, inode, size, mtime, ctime): an
unchanged file is never read twice, a rewritten one is hashed again (its ctime moves with any write, and no one can
set it back).

A folder pragmeter builds from others (a fine-tuned encoder, an OpenVINO export) is sealed when it is built
(:func:`seal`: what it was built from and the hash of every file, in ``pragmeter-seal.json``) and checked against
its seal each time it is used (:func:`sealed`), at the cost of a few ``stat`` calls when nothing changed.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from pragmeter.encoders.paths import cache_dir
from pragmeter.errors import DataError

MEMO_FILE = "fingerprints.json"
SEAL_FILE = "pragmeter-seal.json"
# What decides an encoder's numbers: weights, tokenizer, model and pooling configs. Exports that some folders carry
# (onnx/, openvino/) and docs are not the encoder.
_SKIP_DIRS = {"onnx", "openvino", ".git", ".cache"}
_SKIP_SUFFIXES = {".md", ".onnx", ".xml", ".ini"}


MAX_ENTRIES = 2000  # files and folders an encoder folder may hold (a few dozen in any real one): more is refused
MAX_BYTES = 64 * 2**30  # what its files may weigh together


def _files(folder: Path, everything: bool = False) -> list[tuple[Path, os.stat_result]]:
    """The files that decide an encoder's numbers, each with its ``stat`` (links followed: a Hugging Face cache's
    snapshot links to its blobs). A folder is someone else's: a DataError for an entry that is not a regular file (a
    FIFO would be read forever, a device without end) and for more than MAX_ENTRIES entries or MAX_BYTES in all (a
    config naming ``/etc`` or ``/`` is not walked and hashed), said before any file is read."""
    import stat


    found, entries, total = [], 0, 0
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if everything or d not in _SKIP_DIRS)
        entries += len(dirs) + len(names)
        if entries > MAX_ENTRIES:
            raise DataError(f"{folder}: more than {MAX_ENTRIES} files and folders, not an encoder folder; refused")
        for name in sorted(names):
            if (not everything and Path(name).suffix in _SKIP_SUFFIXES) or name == SEAL_FILE:
                continue
            path = Path(root) / name
            try:
                info = path.stat()
            except OSError as error:
                raise DataError(f"{path}: cannot be read ({error.strerror or error}); an encoder folder's files "
                                "must all be readable") from None
            if not stat.S_ISREG(info.st_mode):
                raise DataError(f"{path}: not a regular file (a FIFO, device or socket) in an encoder folder; "
                                "refused")
            total += info.st_size
            if total > MAX_BYTES:
                raise DataError(f"{folder}: its files hold more than {MAX_BYTES // 2**30} GiB, not an encoder "
                                "folder; refused")
            found.append((path, info))
    return found


def _file_hash(path: Path) -> str:
    """sha256 of a regular file, opened without blocking (a file swapped for a FIFO since it was listed is refused,
    not waited on)."""
    import stat


    digest = hashlib.sha256()
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise DataError(f"{path}: not a regular file (a FIFO, device or socket) in an encoder folder; refused")
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _stamps(stat: os.stat_result) -> str:
    """A file's identity and stamps: any write changes them (ctime cannot be set back), a rename of its folder not."""
    return f"{stat.st_dev}:{stat.st_ino}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ctime_ns}"


def folder_fingerprint(folder: str | os.PathLike, everything: bool = False) -> str:
    """sha256 (hex) over every file of an encoder folder: relative path and content hash, in sorted order; with
    ``everything``, exports and docs too (a built folder's seal)."""
    folder = Path(folder).resolve()
    memo_path = cache_dir() / MEMO_FILE
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    if not isinstance(memo, dict):
        memo = {}
    changed, digest = False, hashlib.sha256()
    for path, info in _files(folder, everything):
        key = _stamps(info)
        if not isinstance(memo.get(key), str):
            memo[key], changed = _file_hash(path), True
        digest.update(f"{path.relative_to(folder).as_posix()}\0{memo[key]}\n".encode())
    if changed:
        _write_memo(memo_path, memo)
    return digest.hexdigest()


def _write_memo(path: Path, memo: dict) -> None:
    # Best effort (a read-only cache only costs a re-hash next time); atomic so a reader never sees half a file.
    from pragmeter.io.atomic import atomic_path

    try:
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps(memo, sort_keys=True), encoding="utf-8")
    except OSError:
        pass


@cache
def _cached(location: str, size_mtimes: tuple) -> str:
    return folder_fingerprint(location)


def encoder_fingerprint(name: str) -> str:
    """Short content hash (16 hex) of the encoder ``name`` loads (folder or packaged model); for a hub name that is
    not on disk, the name itself is all there is to key by."""
    from pragmeter.encoders.registry import require_encoder

    location = require_encoder(name)
    if not Path(location).is_dir():
        return "hub-" + hashlib.sha256(location.encode()).hexdigest()[:12]
    # In-process memo on the files' (size, mtime): a long-lived process still sees a folder replaced under it.
    stamps = tuple((str(path), _stamps(info)) for path, info in _files(Path(location)))
    return _cached(str(Path(location).resolve()), stamps)[:16]


def encoder_key(name: str) -> str:
    """A file-name-safe key for caches: the encoder's short name and its content hash."""
    from pragmeter.encoders.registry import canonical_name

    folder = Path(name).expanduser()
    label = folder.resolve().name if folder.is_dir() else canonical_name(name).replace("/", "--")
    return f"{label}-{encoder_fingerprint(name)}"


def seal(folder: Path, built_from: str) -> None:
    """Record in ``folder`` what it was built from and the hash of its files (every one), as it is now."""
    from pragmeter.io.atomic import atomic_path

    record = json.dumps({"built_from": built_from, "content": folder_fingerprint(folder, everything=True)}) + "\n"
    with atomic_path(folder / SEAL_FILE) as tmp:
        tmp.write_text(record, encoding="utf-8")


def seal_problem(folder: Path, built_from: str) -> str | None:
    """Why ``folder`` is not what :func:`seal` recorded for ``built_from``: no seal, built from something else (a
    folder copied or swapped in), or files that changed since (damaged, truncated, replaced); None when it is."""
    try:
        recorded = json.loads((folder / SEAL_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"no readable {SEAL_FILE}"
    if not isinstance(recorded, dict) or recorded.get("built_from") != built_from:
        return "built from something else"
    try:
        content = folder_fingerprint(folder, everything=True)
    except OSError as error:
        return f"unreadable ({error.strerror or error})"
    except DataError as error:
        return str(error)
    return None if recorded.get("content") == content else "files changed since it was built"
