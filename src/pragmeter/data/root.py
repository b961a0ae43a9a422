"""Locating and verifying upstream data files.

The data root is, in order: an explicit argument (the CLI's ``--data-root``), the ``PRAGMETER_DATA``
environment variable, ``../shared/data`` beside the current directory or beside the source checkout. A default
folder counts only when it holds data (at least one manifest file): one holding nothing but empty folders is not a
data root, so a fetch that got nothing never passes for data.
Every file is verified against the sha256 recorded in ``manifest.json`` (built from SOURCES.md) the first
time it is read in a process; a missing file's error names its pinned upstream URL so users can fetch it.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from pragmeter.errors import DataError

DATA_ROOT_ENV = "PRAGMETER_DATA"
_MANIFEST = Path(__file__).with_name("manifest.json")
_verified: set[Path] = set()


@cache
def manifest() -> dict[str, dict]:
    """Relative path -> {"sha256", "size", "url", "licence", "source"} for every known upstream file ("source": the
    repository and commit, ``owner/name@commit``; a file prepared from others has "from", the files it is made of,
    and no URL to download). Every path is checked to stay inside the data root (:func:`check_paths`)."""
    entries = json.loads(_MANIFEST.read_text(encoding="utf-8"))
    check_paths(entries, _MANIFEST)
    return entries


def inside_root(relative: object) -> bool:
    """Whether ``relative`` names a file inside a data root: a relative POSIX path of plain parts (no empty part,
    ``.``, ``..``, backslash, drive or control character), so joined to the root it cannot leave it."""
    if not isinstance(relative, str) or not relative or relative.startswith("/") or len(relative) > 4096:
        return False
    if any(ord(char) < 32 or char in "\\\x7f" for char in relative) or ":" in relative.split("/", 1)[0]:
        return False
    return all(part not in ("", ".", "..") for part in relative.split("/"))


def check_paths(entries: dict, source: str | os.PathLike) -> None:
    """A DataError naming the entry when a path of the manifest ``entries`` (read from ``source``), or a file one
    is prepared ``from``, is not inside the data root (:func:`inside_root`): a manifest may be the user's own."""
    for relative, entry in entries.items():
        for path in (relative, *(entry.get("from", ()) if isinstance(entry, dict) else ())):
            if not inside_root(path):
                raise DataError(f"{source}: entry {relative!r} names {path!r}, not a path inside the data root "
                                "(a relative path without '..'); refused")


def candidate_roots() -> list[Path]:
    """The default data roots, in order: ``../shared/data`` beside the current folder, then beside the checkout."""
    checkout = Path(__file__).resolve().parents[3]  # src/pragmeter/data/root.py -> checkout
    return [Path.cwd() / ".." / "shared" / "data", checkout / ".." / "shared" / "data"]


def holds_data(path: Path) -> bool:
    """Whether ``path`` holds at least one file of the manifest (a folder of empty sub-folders holds none)."""
    return any((path / relative).is_file() for relative in manifest())


def data_root(root: str | os.PathLike | None = None) -> Path:
    """Resolve the data root folder; raise DataError with guidance when none is found (a default folder without any
    manifest file is not found)."""
    if root is None:
        root = os.environ.get(DATA_ROOT_ENV)
    if root is not None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise DataError(f"data root {path} is not a folder (as given, or set by ${DATA_ROOT_ENV})")
        return path.resolve()
    empty = []
    for candidate in candidate_roots():
        if candidate.is_dir():
            if holds_data(candidate):
                return candidate.resolve()
            empty.append(str(candidate.resolve()))
    without = f" ({', '.join(dict.fromkeys(empty))} holds no data file)" if empty else ""
    raise DataError(
        f"no data root found{without}: get the data with `pragmeter data fetch` (into ../shared/data), or give a data "
        f"root or set ${DATA_ROOT_ENV}; the files and their URLs are listed in pragmeter/data/manifest.json"
    )


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, relative: str) -> None:
    """Check size and sha256 of ``path`` against the manifest entry ``relative`` (once per process)."""
    path = path.resolve()
    if path in _verified:
        return
    entry = manifest().get(relative)
    if entry is None:
        raise DataError(f"{relative} is not a known data file (see pragmeter/data/manifest.json)")
    size = path.stat().st_size
    if size != entry["size"] or sha256_of(path) != entry["sha256"]:
        raise DataError(
            f"{path}: checksum mismatch (expected sha256 {entry['sha256'][:12]}…, {entry['size']} bytes); "
            f"re-download it from {entry['url']}"
        )
    _verified.add(path)


def data_file(relative: str, root: str | os.PathLike | None = None, verify: bool = True) -> Path:
    """Path of a known data file under the data root, verified by checksum."""
    entry = manifest().get(relative)
    if entry is None:
        raise DataError(f"{relative} is not a known data file (see pragmeter/data/manifest.json)")
    path = data_root(root) / relative
    if not path.is_file():
        raise DataError(f"{path} is missing; download it from {entry['url']} (sha256 {entry['sha256']})")
    if verify:
        verify_file(path, relative)
    return path


def dataset_checksums(relatives: list[str]) -> dict[str, str]:
    """sha256 of each named file as recorded in the manifest (for results files)."""
    return {rel: manifest()[rel]["sha256"] for rel in relatives}
