"""Edge cases of the analysis commands that used to end in tracebacks or fail a whole run: a profile of one text,
a run folder with several tasks, a file whose type is given by its last suffix."""

from __future__ import annotations

import json

import pandas as pd

from pragmeter.cli import main


def test_profile_of_a_single_scorable_text(tmp_path, throwaway_model, capsys):
    source = tmp_path / "one.csv"
    source.write_text("text\nIt is cold in here.\n   \n", encoding="utf-8")
    assert main(["analyze", "profile", "--input", str(source), "--impscore", throwaway_model, "--output", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "one: n=1 mean=" in out and "sd=n/a diversity=n/a" in out
    payload = json.loads((tmp_path / "out" / "profile_one.json").read_text())
    assert payload["n_texts"] == 1 and payload["overall"]["diversity"]["mean"] is None


def test_run_folder_with_several_tasks_gives_one_table_per_task(tmp_path, throwaway_model, capsys):
    """hate_detection and ishate_implicit log their texts, inli does not: two tables, inli skipped with a reason."""
    from pragmeter.datasets.ishate import load_ishate
    from pragmeter.testing.fake_server import FakeChatServer

    items = load_ishate("implicit", "test")[:20]
    table = tmp_path / "texts.csv"
    pd.DataFrame({"text": [i.text for i in items], "label": [int(i.label != 0) for i in items]}).to_csv(table)
    with FakeChatServer(lambda request: "yes") as fake:
        assert main(["eval", "--tasks", "hate_detection,ishate_implicit,inli", "--limit", "20",
                     "--model-args", f"base_url={fake.url},model=fake-llm", "--task-arg",
                     f"hate_detection.path={table}", "--log-samples", "--no-progress",
                     "--output", str(tmp_path / "run")]) in (0, 1)
    capsys.readouterr()
    assert main(["analyze", "stratify", "--input", str(tmp_path / "run"), "--impscore", throwaway_model]) == 0
    captured = capsys.readouterr()
    for task in ("hate_detection", "ishate_implicit"):
        payload = json.loads((tmp_path / "run" / f"stratified_{task}.json").read_text())
        assert payload["task"] == task and payload["n"] == 20
        assert f"{task}: n=20 accuracy=" in captured.out
    assert not (tmp_path / "run" / "stratified_inli.json").exists()
    assert "skipped" in captured.err and "samples_inli.jsonl" in captured.err and "field 'text' is missing" in captured.err


def test_file_type_comes_from_the_last_suffix(tmp_path):
    from pragmeter.io import read_table

    path = tmp_path / "x.txt.csv"
    path.write_text("text,label\n\"a, b\",1\nc,0\n", encoding="utf-8")
    frame = read_table(path)
    assert list(frame.columns) == ["text", "label"] and frame["text"].tolist() == ["a, b", "c"]


def test_a_difference_from_two_texts_prints_its_sample_sizes(tmp_path, throwaway_model, capsys):
    """A Welch interval over two texts is wide; the line says n so that it reads as such."""
    source = tmp_path / "few.csv"
    source.write_text("text,label\nIt is cold in here.,a\nShut the window.,a\nNice weather.,b\nI am tired.,b\n"
                      "Go home.,b\n", encoding="utf-8")
    assert main(["analyze", "profile", "--input", str(source), "--label-column", "label", "--compare", "a:b",
                 "--impscore", throwaway_model, "--output", str(tmp_path / "out")]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if "label: a − b = " in line)
    assert line.endswith("(n=2 vs 3)")


def test_the_report_shows_drinq_accuracy_as_a_number_with_its_interval(tmp_path, capsys):
    """DRInQ's headline is a mean ± SD over three runs with a bootstrap interval: the page and the console print
    the numbers, not the dictionary they are stored in."""
    from pragmeter.testing.fake_server import FakeChatServer

    with FakeChatServer(lambda request: "A") as fake:
        assert main(["eval", "--tasks", "drinq_vanilla", "--limit", "8", "--model-args",
                     f"base_url={fake.url},model=fake-llm", "--no-progress", "--output", str(tmp_path / "run")]) == 0
    accuracy = json.loads((tmp_path / "run" / "results.json").read_text())["results"]["drinq_vanilla"]["metrics"]["accuracy"]
    low, high = accuracy["ci95"]
    shown = f"{accuracy['mean']:.4f} ± {accuracy['sd']:.4f} [{low:.4f}, {high:.4f}]"
    assert f"drinq_vanilla: accuracy={shown}  items=8" in capsys.readouterr().out
    assert main(["analyze", "report", "--input", str(tmp_path / "run"), "--no-stratify"]) == 0
    page = (tmp_path / "run" / "report" / "fake-llm.html").read_text(encoding="utf-8")
    assert f"<td class=num>{shown}</td>" in page and "{&#x27;mean&#x27;" not in page and "'mean'" not in page


def test_compare_of_a_label_value_not_in_the_data_is_an_error(tmp_path, throwaway_model, capsys):
    """--compare a:zz with no 'zz' used to give no comparison without a word."""
    source = tmp_path / "labels.csv"
    source.write_text("text,label\nIt is cold in here.,a\nShut the window.,b\nNice weather.,a\n", encoding="utf-8")
    assert main(["analyze", "profile", "--input", str(source), "--label-column", "label", "--compare", "a:zz",
                 "--impscore", throwaway_model, "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert f"--compare a:zz: {source}: no 'zz' in label column 'label' (values: a, b)" in err
