"""The analyses' command entry points check the output and their options before any model loads or any request
is sent (the loaders passed in must not be called)."""

from __future__ import annotations

import logging

import pytest

from pragmeter.errors import PragmeterError


def never():
    raise AssertionError("loaded before the checks")


def test_profile_source_refuses_an_existing_profile_before_loading_the_model(tmp_path):
    from pragmeter.analysis.profile import profile_source

    table = tmp_path / "texts.csv"
    table.write_text("text,label\nIt's a bit chilly in here.,a\nClose the window.,b\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "profile_texts.json").write_text("{}")
    with pytest.raises(PragmeterError, match="profile_texts.json exists; pass overwrite=True"):
        list(profile_source(str(table), tmp_path / "out", never, label_columns=["label"]))
    with pytest.raises(PragmeterError, match="n_pairs=0: must be at least 1"):
        list(profile_source(str(table), tmp_path / "out", never, n_pairs=0))


def test_stratify_input_writes_beside_the_input_and_refuses_what_exists(tmp_path):
    from pragmeter.analysis.stratify import stratify_input

    table = tmp_path / "preds.csv"
    table.write_text("text,gold,prediction,impscore\nIt's late.,yes,yes,1.2\nGo home.,no,yes,0.3\n")
    lines = list(stratify_input(table, None, never, name="mine", score_column="impscore"))
    assert lines[0].startswith("mine: n=2 accuracy=0.5000 -> ") and (tmp_path / "stratified_mine.json").is_file()
    with pytest.raises(PragmeterError, match="stratified_mine.json exists"):
        list(stratify_input(table, None, never, name="mine", score_column="impscore"))


def test_generation_check_refuses_bad_runs_and_an_existing_output_before_asking(tmp_path):
    from pragmeter.analysis.generation import run_generation_check

    with pytest.raises(PragmeterError, match="runs=0: must be at least 1"):
        list(run_generation_check(never, never, None, 0, tmp_path))
    (tmp_path / "generation_check.json").write_text("{}")
    with pytest.raises(PragmeterError, match="generation_check.json exists"):
        list(run_generation_check(lambda: object(), never, None, 1, tmp_path))


def test_report_refuses_an_existing_index_then_writes_pages_into_the_default_folder(tmp_path, caplog):
    from pragmeter.analysis.report import make_report
    from pragmeter.analysis.stratify import stratify_input

    results = tmp_path / "results"
    results.mkdir()
    (results / "preds.csv").write_text("text,gold,prediction,impscore\nIt's late.,yes,yes,1.2\nGo home.,no,yes,0.3\n")
    list(stratify_input(results / "preds.csv", None, never, score_column="impscore"))
    (results / "report").mkdir()
    (results / "report" / "index.html").write_text("old")
    with pytest.raises(PragmeterError, match="index.html exists"):
        list(make_report(results, stratify=False))
    caplog.set_level(logging.INFO, logger="pragmeter")
    pages = list(make_report(results, stratify=False, overwrite=True))
    assert len(pages) == 1 and pages[0].parent == results / "report" and pages[0].is_file()
    assert caplog.messages[-1] == f"index: {results / 'report' / 'index.html'}"
