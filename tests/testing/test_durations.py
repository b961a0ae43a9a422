"""The suite's order comes from recorded durations (pragmeter.testing.durations), not a hand-kept table: phases sum
per file, a damaged record reads as no record, and the record in the checkout names files that exist."""

from __future__ import annotations

import json
from pathlib import Path

from pragmeter.testing.durations import file_of, read_durations, sum_by_file, write_durations

CHECKOUT = Path(__file__).resolve().parents[2]


def test_phases_sum_per_file():
    reports = [("tests/a/test_x.py::test_one", 1.25), ("tests/a/test_x.py::test_one", 0.5),
               ("tests/a/test_x.py::test_two[p-1]", 2.0), ("tests/b/test_y.py::test_z", 0.04)]
    assert file_of("tests/a/test_x.py::Test::test_two[a::b]") == "tests/a/test_x.py"
    assert sum_by_file(reports) == {"tests/a/test_x.py": 3.8, "tests/b/test_y.py": 0.0}


def test_a_record_round_trips_and_a_damaged_one_reads_as_none(tmp_path):
    path = tmp_path / "durations.json"
    write_durations(path, {"tests/b.py": 2.5, "tests/a.py": 10.0})
    assert read_durations(path) == {"tests/a.py": 10.0, "tests/b.py": 2.5}
    assert list(json.loads(path.read_text())) == ["tests/a.py", "tests/b.py"]  # sorted: a re-record reads as a diff
    path.write_text('{"tests/a.py": "ten", "tests/b.py": -1, "tests/c.py": 3, "tests/d.py": true, "tests/e.py": NaN}')
    assert read_durations(path) == {"tests/c.py": 3.0}
    path.write_text("[1, 2")
    assert read_durations(path) == {}
    assert read_durations(tmp_path / "missing.json") == {}


def test_the_checked_in_record_covers_the_longest_files_and_names_only_files_that_exist():
    record = read_durations(CHECKOUT / "tests" / "durations.json")
    assert len(record) > 50, "tests/durations.json: record it with PRAGMETER_RECORD_DURATIONS=1 bash tools/test.sh"
    missing = [name for name in record if not (CHECKOUT / name).is_file()]
    assert missing == [], f"tests/durations.json names files that are gone: {missing}; record it again"
