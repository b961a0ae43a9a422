"""``pragmeter data check``: a data root with one file missing and one corrupted is reported file by file."""

from __future__ import annotations

import shutil

import pytest

from pragmeter.cli import main
from pragmeter.data.check import MISMATCH, MISSING, OK, UNKNOWN, check_data_root, check_report
from pragmeter.data.root import manifest
from pragmeter.errors import DataError

SET = "r3_sarcasm"
FILES = sorted(relative for relative in manifest() if relative.startswith(SET + "/"))


@pytest.fixture
def damaged_root(tmp_path, data_root):
    """A copy of the r3_sarcasm files with the first missing and the second one byte longer."""
    root = tmp_path / "data"
    for relative in FILES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(data_root / relative, root / relative)
    (root / FILES[0]).unlink()
    with open(root / FILES[1], "ab") as handle:
        handle.write(b"x")
    return root


def test_each_file_gets_its_status_and_upstream_url(damaged_root):
    statuses = {item.relative: item for item in check_data_root(damaged_root, [SET])}
    assert [statuses[f].status for f in FILES] == [MISSING, MISMATCH] + [OK] * (len(FILES) - 2)
    assert statuses[FILES[0]].url == manifest()[FILES[0]]["url"]


def test_the_command_prints_one_line_per_file_and_exits_2(damaged_root, capsys):
    code = main(["data", "check", SET, "--data-root", str(damaged_root)])
    out, err = capsys.readouterr()
    assert code == 2
    lines = [line.split("\t") for line in out.splitlines()]
    assert lines[0] == [MISSING, FILES[0], manifest()[FILES[0]]["url"]]
    assert lines[1] == [MISMATCH, FILES[1], manifest()[FILES[1]]["url"]]
    assert all(line == [OK, f] for line, f in zip(lines[2:], FILES[2:]))
    assert f"{len(FILES)} files under {damaged_root.resolve()}: 1 checksum mismatch, 1 missing, {len(FILES) - 2} ok" in err


def test_a_complete_root_passes(data_root, capsys):
    assert main(["data", "check", SET, "--data-root", str(data_root)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{OK}\t{f}" for f in FILES]


def test_an_unknown_data_set_is_one_line_naming_the_known_ones(data_root, capsys):
    assert main(["data", "check", "nosuchset", "--data-root", str(data_root)]) == 2
    assert "unknown data set(s) nosuchset; known: absa_implicit" in capsys.readouterr().err
    with pytest.raises(DataError, match="unknown data set"):
        check_data_root(data_root, ["nosuchset"])


def test_the_report_has_a_line_per_file_a_summary_and_a_verdict(damaged_root, data_root):
    lines, summary, ok = check_report(damaged_root, [SET])
    assert lines[0] == f"{MISSING}\t{FILES[0]}\t{manifest()[FILES[0]]['url']}" and lines[2] == f"{OK}\t{FILES[2]}"
    assert summary.endswith(f": 1 checksum mismatch, 1 missing, {len(FILES) - 2} ok") and not ok
    assert check_report(data_root, [SET])[2]


def test_a_file_the_manifest_does_not_know_is_reported_not_an_error(tmp_path, data_root, capsys):
    root = tmp_path / "data"
    for relative in FILES:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(data_root / relative, root / relative)
    (root / SET / "my-notes.txt").write_text("mine\n", encoding="utf-8")
    (root / "SOURCES.md").write_text("the folder's provenance\n", encoding="utf-8")
    (root / (FILES[0] + ".part")).write_bytes(b"half a download")
    assert main(["data", "check", SET, "--data-root", str(root)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [f"{OK}\t{f}" for f in FILES] + [f"{UNKNOWN}\t{SET}/my-notes.txt"]
    assert err.strip().endswith(f"{len(FILES)} ok; 1 unknown (not in the manifest: see docs/data.md to add a file)")


def test_a_folder_without_any_manifest_file_is_one_line_not_every_file_missing(tmp_path, capsys):
    empty = tmp_path / "data"
    (empty / SET / "data").mkdir(parents=True)  # what a fetch that got nothing used to leave
    assert main(["data", "check", "--data-root", str(empty)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [f"pragmeter data: error: {empty.resolve()} holds none of the manifest's files, so it "
                                "is no data root: fetch them into it (`pragmeter data fetch` into this folder), or "
                                "name the folder that holds them (docs/data.md)"]
