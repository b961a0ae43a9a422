"""The output checks every command runs before its work, and the row report of tables written row by row."""

from __future__ import annotations

import logging

import pytest

from pragmeter.errors import PragmeterError
from pragmeter.io import check_outputs, report_rows


def test_check_outputs_refuses_the_first_existing_file_unless_overwrite(tmp_path):
    (tmp_path / "b.json").write_text("{}")
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    with pytest.raises(PragmeterError, match=r"b\.json exists; pass overwrite=True to replace it"):
        check_outputs(paths, overwrite=False)
    check_outputs(paths, overwrite=True)
    check_outputs(iter([tmp_path / "a.json"]), overwrite=False)  # any iterable; nothing there


def test_report_rows_counts_and_names_the_first_failed_row(caplog):
    caplog.set_level(logging.INFO, logger="pragmeter")
    failed = report_rows(["", "empty text", "", "empty text"], "scored", "out.csv", "impscore_error",
                         lambda row, reason: f"row {row + 1}: {reason}")
    assert failed == 2
    assert [(record.levelname, record.getMessage()) for record in caplog.records] == [
        ("INFO", "scored 2 of 4 rows -> out.csv"),
        ("WARNING", "warning: 2 row(s) not scored (reason in column 'impscore_error'; first: row 2: empty text)")]


def test_report_rows_without_failures_is_one_line(caplog):
    caplog.set_level(logging.INFO, logger="pragmeter")
    assert report_rows(["", ""], "labelled", "out.csv", "error", lambda row, reason: "unused") == 0
    assert caplog.messages == ["labelled 2 of 2 rows -> out.csv"]


def test_an_output_under_a_file_is_refused_before_any_work_naming_the_output(tmp_path):
    from pragmeter.io import check_output
    from pragmeter.io.atomic import atomic_path

    (tmp_path / "scores.csv").write_text("text\n")
    inside = tmp_path / "scores.csv" / "deeper" / "out.csv"
    with pytest.raises(PragmeterError, match=r"out.csv: .*scores.csv is a file, not a folder"):
        check_output(inside, overwrite=False)
    check_output(tmp_path / "new" / "folders" / "out.csv", overwrite=False)  # folders to create are fine
    # writing there anyway fails naming the output, not a hidden temporary file or the parent
    with pytest.raises(OSError) as raised, atomic_path(inside):
        pass
    assert raised.value.filename == str(inside)
