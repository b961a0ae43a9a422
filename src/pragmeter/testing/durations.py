"""The test suite's recorded durations: each test file's seconds on one worker, summed over its tests' setup, call
and teardown as the last recorded run reported them. Handing the longest files to the xdist workers first lets the
workers finish together; the seconds come from a run, never from a hand-kept table.

``PRAGMETER_RECORD_DURATIONS=1 bash tools/test.sh`` rewrites ``tests/durations.json`` (tests/conftest.py); other
runs read it. A file the record does not know counts as 0 s and keeps its place after the known ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

RECORD_ENV = "PRAGMETER_RECORD_DURATIONS"


def file_of(nodeid: str) -> str:
    """The test file of a pytest node id (``tests/x/test_y.py::test_z[p]`` -> ``tests/x/test_y.py``)."""
    return nodeid.split("::", 1)[0]


def sum_by_file(reports: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Seconds per test file from (node id, seconds) of every reported phase, rounded to 0.1 s."""
    totals: dict[str, float] = {}
    for nodeid, seconds in reports:
        totals[file_of(nodeid)] = totals.get(file_of(nodeid), 0.0) + max(0.0, float(seconds))
    return {name: round(value, 1) for name, value in sorted(totals.items())}


def read_durations(path: Path) -> dict[str, float]:
    """A recorded durations file: {test file: seconds}; an unreadable or malformed file (or a bad entry) counts as no
    record for what it cannot give, so the suite runs in collection order rather than not at all."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {name: float(value) for name, value in data.items()
            if isinstance(name, str) and isinstance(value, (int, float)) and not isinstance(value, bool)
            and value >= 0 and value == value}


def write_durations(path: Path, durations: dict[str, float]) -> None:
    """Write the record atomically (sorted by file, one per line, so a re-record reads as a diff)."""
    from pragmeter.io.atomic import atomic_path

    with atomic_path(Path(path)) as tmp:
        tmp.write_text(json.dumps(dict(sorted(durations.items())), indent=0) + "\n", encoding="utf-8")
