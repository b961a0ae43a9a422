"""Locating and verifying upstream data files.

The data root is, in order: an explicit argument (the CLI's ``--data-root``), the ``PRAGMETER_DATA``
environment variable, ``../shared/data`` beside the current directory or beside the source checkout.
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
    and no URL to download)."""
    return json.loads(_MANIFEST.read_text(encoding="utf-8"))


def candidate_roots() -> list[Path]:
    """The default data roots, in order: ``../shared/data`` beside the current folder, then beside the checkout."""
    checkout = Path(__file__).resolve().parents[3]  # src/pragmeter/data/root.py -> checkout
    return [Path.cwd() / ".." / "shared" / "data", checkout / ".." / "shared" / "data"]


def data_root(root: str | os.PathLike | None = None) -> Path:
    """Resolve the data root folder; raise DataError with guidance when none is found."""
    if root is None:
        root = os.environ.get(DATA_ROOT_ENV)
    if root is not None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise DataError(f"data root {path} is not a folder (as given, or set by ${DATA_ROOT_ENV})")
        return path.resolve()
    for candidate in candidate_roots():
        if candidate.is_dir():
            return candidate.resolve()
    raise DataError(
        f"no data root found: get the data with `pragmeter data fetch` (into ../shared/data), or give a data "
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
