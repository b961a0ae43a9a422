"""Which upstream files of the manifest a data root holds, and which are missing or differ from upstream.

The library side of ``pragmeter data check``: one status per manifest entry, with the pinned upstream URL, so
a user without a prepared data folder can see what to download and where from.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pragmeter.data.root import data_root, manifest, sha256_of
from pragmeter.errors import DataError

OK, MISSING, MISMATCH = "ok", "missing", "checksum mismatch"


@dataclass(frozen=True)
class FileStatus:
    """One manifest entry under a data root: ``status`` is OK, MISSING or MISMATCH (size or sha256 differs)."""

    relative: str
    status: str
    url: str


def datasets() -> list[str]:
    """The data sets of the manifest: the first folder of every path (``inli``, ``ishate``, …)."""
    return sorted({relative.split("/", 1)[0] for relative in manifest()})


def require_known(only: Sequence[str]) -> None:
    """A DataError naming the known data sets when ``only`` names one the manifest does not know."""
    unknown = sorted(set(only) - set(datasets()))
    if unknown:
        raise DataError(f"unknown data set(s) {', '.join(unknown)}; known: {', '.join(datasets())}")


def check_data_root(root: str | os.PathLike | None = None, only: Sequence[str] = ()) -> list[FileStatus]:
    """The status of every manifest file (or of the data sets named in ``only``) under the data root.

    The root resolves as for every command (``--data-root``, ``$PRAGMETER_DATA``, ``../shared/data``); a root
    that does not exist, or a data set the manifest does not know, raises DataError."""
    require_known(only)
    base = data_root(root)
    return [_status(base / relative, relative, entry) for relative, entry in sorted(manifest().items())
            if not only or relative.split("/", 1)[0] in only]


def check_report(root: str | os.PathLike | None = None, only: Sequence[str] = ()) -> tuple[list[str], str, bool]:
    """``pragmeter data check``: :func:`check_data_root` as one tab-separated line per file (status, path under the
    root and, unless ok, its upstream URL), a summary line (counts per status under the root), and whether every
    file is ok."""
    statuses = check_data_root(root, only)
    lines = [item.status + "\t" + item.relative + ("" if item.status == OK else "\t" + item.url) for item in statuses]
    counts = Counter(item.status for item in statuses)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return lines, f"{len(statuses)} files under {data_root(root)}: {summary}", counts[OK] == len(statuses)


def _status(path: Path, relative: str, entry: dict) -> FileStatus:
    if not path.is_file():
        return FileStatus(relative, MISSING, entry["url"])
    # size first: a truncated or replaced file is found without reading it
    same = path.stat().st_size == entry["size"] and sha256_of(path) == entry["sha256"]
    return FileStatus(relative, OK if same else MISMATCH, entry["url"])
