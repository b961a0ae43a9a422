"""The output checks every command runs before its work, and the row report of tables written row by row."""

from __future__ import annotations

import pytest

from pragmeter.errors import PragmeterError
from pragmeter.io import check_outputs, report_rows


def test_check_outputs_refuses_the_first_existing_file_unless_overwrite(tmp_path):
    (tmp_path / "b.json").write_text("{}")
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    with pytest.raises(PragmeterError, match=r"b\.json exists; pass --overwrite to replace it"):
        check_outputs(paths, overwrite=False)
    check_outputs(paths, overwrite=True)
    check_outputs(iter([tmp_path / "a.json"]), overwrite=False)  # any iterable; nothing there


def test_report_rows_counts_and_names_the_first_failed_row(capsys):
    failed = report_rows(["", "empty text", "", "empty text"], "scored", "out.csv", "impscore_error",
                         lambda row, reason: f"row {row + 1}: {reason}")
    assert failed == 2
    assert capsys.readouterr().err.splitlines() == [
        "scored 2 of 4 rows -> out.csv",
        "warning: 2 row(s) not scored (reason in column 'impscore_error'; first: row 2: empty text)"]


def test_report_rows_without_failures_is_one_line(capsys):
    assert report_rows(["", ""], "labelled", "out.csv", "error", lambda row, reason: "unused") == 0
    assert capsys.readouterr().err == "labelled 2 of 2 rows -> out.csv\n"
