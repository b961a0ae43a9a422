"""benchmarks/suite_against.py: the other checkout's tests are found in this one (by id, or by name where a file
moved), and a run of a selection runs only the tests it names."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def suite_against(benchmark_script):
    return benchmark_script("suite_against")


def test_a_moved_test_is_found_by_its_name_and_an_ambiguous_or_gone_one_is_named(suite_against):
    theirs = ["tests/a/test_x.py::test_kept", "tests/a/test_x.py::test_moved[1]", "tests/a/test_x.py::test_twice",
              "tests/a/test_x.py::test_gone"]
    ours = ["tests/a/test_x.py::test_kept", "tests/b/test_x.py::test_moved[1]", "tests/b/test_y.py::test_twice",
            "tests/c/test_y.py::test_twice", "tests/c/test_y.py::test_new"]
    found, missing = suite_against.matched(theirs, ours)
    assert found == ["tests/a/test_x.py::test_kept", "tests/b/test_x.py::test_moved[1]"]
    assert missing == ["tests/a/test_x.py::test_twice", "tests/a/test_x.py::test_gone"]


def test_a_selection_runs_only_the_tests_it_names(suite_against, tmp_path):
    """The plugin that keeps the other checkout's tests, on a small file of this one (two of its tests kept)."""
    here = Path(__file__).parents[2]
    ids = suite_against.collect(here, ["tests/metrics/test_overlap.py"])
    assert len(ids) >= 4 and all(test.startswith("tests/metrics/test_overlap.py::") for test in ids)
    selection = tmp_path / "selection.txt"
    selection.write_text("\n".join(ids[:2]) + "\n", encoding="utf-8")
    run = suite_against.run_suite(here, ["tests/metrics/test_overlap.py"], 1, selection)
    assert run["exit"] == 0 and run["pytest"].startswith("2 passed "), run  # of the file's four or more
