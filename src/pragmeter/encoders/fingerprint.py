"""What an encoder *is*, for cache keys: a hash of its weights, tokenizer and config files, not its name or path.

Exports (ONNX, OpenVINO) and embedding caches are keyed by it, so a folder whose weights were replaced never returns
the old numbers. Hashing 440 MB takes about a second, so each file's hash is kept in ``$PRAGMETER_CACHE/
fingerprints.json`` under (path, size, mtime): an unchanged file is never read twice, a replaced one is re-hashed.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from pragmeter.encoders.paths import cache_dir

MEMO_FILE = "fingerprints.json"
# What decides an encoder's numbers: weights, tokenizer, model and pooling configs. Exports that some folders carry
# (onnx/, openvino/) and docs are not the encoder.
_SKIP_DIRS = {"onnx", "openvino", ".git", ".cache"}
_SKIP_SUFFIXES = {".md", ".onnx", ".xml", ".ini"}


def _files(folder: Path) -> list[Path]:
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        found += [Path(root) / n for n in sorted(names) if Path(n).suffix not in _SKIP_SUFFIXES]
    return found


def _file_hash(path: Path) -> str:
    from pragmeter.data.root import sha256_of

    return sha256_of(path)


def folder_fingerprint(folder: str | os.PathLike) -> str:
    """sha256 (hex) over every file of an encoder folder: relative path and content hash, in sorted order."""
    folder = Path(folder).resolve()
    memo_path = cache_dir() / MEMO_FILE
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    changed, digest = False, hashlib.sha256()
    for path in _files(folder):
        stat = path.stat()
        key = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
        if key not in memo:
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
    stamps = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in _files(Path(location)))
    return _cached(str(Path(location).resolve()), stamps)[:16]


def encoder_key(name: str) -> str:
    """A file-name-safe key for caches: the encoder's short name and its content hash."""
    from pragmeter.encoders.registry import canonical_name

    folder = Path(name).expanduser()
    label = folder.resolve().name if folder.is_dir() else canonical_name(name).replace("/", "--")
    return f"{label}-{encoder_fingerprint(name)}"
