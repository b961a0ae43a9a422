"""Where pragmeter keeps what it computes once: unpacked encoders, ONNX exports, embedding caches; and how the folders
built from a model's content are kept within a size.

Every fine-tuned encoder unpacked from a shipped folder, and every ONNX or OpenVINO graph of an encoder or classifier,
is built once into a folder named by its content (:data:`BUILT_AREAS`). A new model is a new folder, so without a
limit these grow with every model a user (or a test) has ever run. :func:`prune_built` removes the folders used least
recently (a folder's time is set each time it is used, :func:`mark_used`) until the areas together are within
``$PRAGMETER_CACHE_LIMIT_GB`` (:data:`DEFAULT_CACHE_LIMIT_GB`; 0: no limit), never the folder just built and never
one used in the last :data:`UNUSED_FOR_S` seconds (another process may be about to read it). A removed folder is
built again when it is next needed. Embedding caches and the unpacked base encoders are not pruned.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

CACHE_ENV = "PRAGMETER_CACHE"
CACHE_LIMIT_ENV = "PRAGMETER_CACHE_LIMIT_GB"
DEFAULT_CACHE_LIMIT_GB = 16.0
# folders under the cache holding one folder per model content, each built again when missing
BUILT_AREAS = ("openvino", "openvino/classifiers", "onnx", "encoders/finetuned")
UNUSED_FOR_S = 3600

log = logging.getLogger("pragmeter")


def cache_dir() -> Path:
    """Where pragmeter keeps unpacked encoders and embedding caches (``$PRAGMETER_CACHE`` or ~/.cache/pragmeter)."""
    root = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "pragmeter")
    return Path(root)


def embeddings_dir() -> Path:
    """The default embedding cache folder (``$PRAGMETER_CACHE/embeddings``)."""
    return cache_dir() / "embeddings"


def cache_limit_bytes() -> int | None:
    """The size the built folders are kept within (``$PRAGMETER_CACHE_LIMIT_GB``, in GB of 10^9 bytes), None for no
    limit (0); anything but a number of 0 or more is refused naming the variable."""
    from pragmeter.errors import PragmeterError

    raw = os.environ.get(CACHE_LIMIT_ENV, "").strip()
    try:
        gigabytes = float(raw) if raw else DEFAULT_CACHE_LIMIT_GB
    except ValueError:
        gigabytes = -1.0
    if not gigabytes >= 0 or gigabytes == float("inf"):
        raise PragmeterError(f"{CACHE_LIMIT_ENV}={raw!r}: give a size in GB (a number, 0 for no limit)")
    return None if gigabytes == 0 else int(gigabytes * 1e9)


def mark_used(folder: str | os.PathLike) -> None:
    """Set a built folder's time to now: the least recently used folders are pruned first (a read-only cache is left
    as it is)."""
    try:
        os.utime(folder)
    except OSError:
        pass


def built_folders(root: str | os.PathLike | None = None) -> list[Path]:
    """Every folder built from a model's content under the cache ``root`` (default :func:`cache_dir`), as listed in
    :data:`BUILT_AREAS` (links are not followed, files are not folders)."""
    root = Path(root) if root is not None else cache_dir()
    out = []
    for area in BUILT_AREAS:
        for child in sorted((root / area).iterdir()) if (root / area).is_dir() else ():
            if child.is_dir() and not child.is_symlink() and f"{area}/{child.name}" not in BUILT_AREAS:
                out.append(child)
    return out


def _size(folder: Path) -> int:
    total = 0
    for parent, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:  # removed meanwhile
                pass
    return total


def prune_built(keep: str | os.PathLike | None = None, now: float | None = None) -> list[Path]:
    """Remove the least recently used built folders until they are within :func:`cache_limit_bytes` (module notes),
    never ``keep`` nor a folder used in the last :data:`UNUSED_FOR_S` seconds; returns the folders removed."""
    from pragmeter.io.atomic import set_aside

    limit = cache_limit_bytes()
    if limit is None:
        return []
    now = time.time() if now is None else now
    kept = Path(keep).resolve() if keep is not None else None
    found = []
    for folder in built_folders():
        try:
            found.append((folder.stat().st_mtime, folder, _size(folder)))
        except OSError:  # removed meanwhile
            continue
    total, removed = sum(size for _, _, size in found), []
    for used, folder, size in sorted(found, key=lambda entry: entry[0]):
        if total <= limit:
            break
        if folder.resolve() == kept or now - used < UNUSED_FOR_S:
            continue
        if set_aside(folder, remove=True) is not None:
            removed.append(folder)
            total -= size
    if removed:
        log.info(f"pragmeter: removed {len(removed)} built folder(s) not used for the longest, the cache's built "
                 f"folders being over {limit / 1e9:g} GB ({CACHE_LIMIT_ENV}); each is built again when needed")
    return removed
