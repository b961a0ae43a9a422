"""Which upstream files of the manifest a data root holds, and which are missing or differ from upstream.

The library side of ``pragmeter data check``: one status per manifest entry, with the pinned upstream URL, so
a user without a prepared data folder can see what to download and where from; and the files under the root that the
manifest does not list (UNKNOWN: a file a user added, or one upstream data the manifest has not caught up with).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pragmeter.data.root import data_root, holds_data, manifest, sha256_of
from pragmeter.errors import DataError

OK, MISSING, MISMATCH, UNKNOWN = "ok", "missing", "checksum mismatch", "unknown"
# Files of a data folder that are not data: its provenance page (tools/make_data_manifest.py reads it)
NOT_DATA = {"SOURCES.md"}


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


def unknown_files(root: str | os.PathLike | None = None, only: Sequence[str] = ()) -> list[str]:
    """The files under the data root (in the folders of the data sets named in ``only``, or anywhere) that the
    manifest does not list, as paths under the root; a download's ``.part`` of a manifest file and the folder's
    SOURCES.md are not counted."""
    require_known(only)
    base = data_root(root)
    known = manifest()
    found = []
    for folder in ([base / name for name in only] if only else [base]):
        for path in folder.rglob("*"):
            relative = path.relative_to(base).as_posix()
            if path.is_file() and relative not in known and relative not in NOT_DATA \
                    and relative.removesuffix(".part") not in known:
                found.append(relative)
    return sorted(found)


def check_report(root: str | os.PathLike | None = None, only: Sequence[str] = ()) -> tuple[list[str], str, bool]:
    """``pragmeter data check``: :func:`check_data_root` as one tab-separated line per file (status, path under the
    root and, unless ok, its upstream URL), then an UNKNOWN line per file the manifest does not list, a summary line
    (counts per status under the root), and whether every manifest file is ok (a file it does not know is reported,
    not an error). A folder that holds none of the manifest's files is a DataError (one line), not a list of every
    file missing."""
    base = data_root(root)
    if not holds_data(base):
        raise DataError(f"{base} holds none of the manifest's files, so it is no data root: fetch them into it "
                        "(`pragmeter data fetch` into this folder), or name the folder that holds them "
                        "(docs/data.md)")
    statuses = check_data_root(base, only)
    unknown = unknown_files(base, only)
    lines = [item.status + "\t" + item.relative + ("" if item.status == OK else "\t" + item.url) for item in statuses]
    lines += [f"{UNKNOWN}\t{relative}" for relative in unknown]
    counts = Counter(item.status for item in statuses)
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    if unknown:
        summary += f"; {len(unknown)} {UNKNOWN} (not in the manifest: see docs/data.md to add a file)"
    return lines, f"{len(statuses)} files under {base}: {summary}", counts[OK] == len(statuses)


def _status(path: Path, relative: str, entry: dict) -> FileStatus:
    if not path.is_file():
        return FileStatus(relative, MISSING, entry["url"])
    # size first: a truncated or replaced file is found without reading it
    same = path.stat().st_size == entry["size"] and sha256_of(path) == entry["sha256"]
    return FileStatus(relative, OK if same else MISMATCH, entry["url"])
