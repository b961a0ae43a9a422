"""Accuracy by implicitness on synthetic predictions with known per-bin accuracy and counts, and on harness
per-sample logs written by `pragmeter eval` against the fake server."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pragmeter.analysis.stratify import assign_bins
from pragmeter.cli import main

# Per bin [0, .25) … [1.75, 2]: (items, correct). Scores include the bin edges themselves.
KNOWN = [(10, 10), (20, 18), (30, 24), (40, 30), (40, 20), (30, 12), (20, 4), (10, 0)]


def synthetic(tmp_path) -> tuple:
    rng = np.random.default_rng(3)
    rows = []
    for index, (n, k) in enumerate(KNOWN):
        low = 0.25 * index
        scores = np.concatenate([[low], rng.uniform(low, low + 0.25, n - 1)])  # the left edge belongs here
        if index == len(KNOWN) - 1:
            scores[-1] = 2.0  # the last bin is closed
        correct = rng.permutation([True] * k + [False] * (n - k))
        for i, (score, ok) in enumerate(zip(scores, correct)):
            gold = "yes" if i % 2 else "no"
            prediction = gold if ok else ("no" if gold == "yes" else None)  # a missing prediction is wrong
            rows.append({"text": f"item {index}-{i}", "gold": gold, "prediction": prediction, "impscore": score})
    frame = pd.DataFrame(rows).sample(frac=1, random_state=0)  # order must not matter
    path = tmp_path / "predictions.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_synthetic_predictions_reproduce_known_bins_exactly(tmp_path, capsys):
    path, _ = synthetic(tmp_path)
    assert main(["analyze", "stratify", "--input", str(path), "--score-column", "impscore", "--output", str(tmp_path / "out")]) == 0
    payload = json.loads((tmp_path / "out" / "stratified_predictions.json").read_text())
    assert [(b["n"], b["correct"]) for b in payload["bins"]] == KNOWN
    assert [b["accuracy"] for b in payload["bins"]] == [k / n for n, k in KNOWN]
    assert payload["n"] == sum(n for n, _ in KNOWN) and payload["correct"] == sum(k for _, k in KNOWN)
    assert payload["trend"]["spearman_bin_centre_vs_accuracy"]["rho"] == pytest.approx(-1.0)
    assert payload["trend"]["logistic_slope_per_score_unit"]["ci_high"] < 0
    for b in payload["bins"]:
        assert b["ci_low"] <= b["accuracy"] <= b["ci_high"]
    assert (tmp_path / "out" / "stratified_predictions.png").stat().st_size > 10_000


def test_gold_filter_and_correct_column(tmp_path):
    path, frame = synthetic(tmp_path)
    frame["ok"] = (frame["gold"] == frame["prediction"]).astype(int)
    frame.to_csv(path, index=False)
    assert main(["analyze", "stratify", "--input", str(path), "--correct-column", "ok", "--score-column", "impscore",
                 "--gold-value", "yes", "--name", "yes_only", "--output", str(tmp_path)]) == 0
    payload = json.loads((tmp_path / "stratified_yes_only.json").read_text())
    hateful = frame[frame["gold"] == "yes"]
    counts = np.bincount(assign_bins(hateful["impscore"].to_numpy()), minlength=8)
    assert [b["n"] for b in payload["bins"]] == counts.tolist()
    assert payload["correct"] == int(hateful["ok"].sum()) and payload["filter"] == "gold=yes"


def test_bad_rows_are_named(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"text": ["a", "b"], "gold": [1, 0], "prediction": [1, 1], "impscore": [0.3, None]}).to_csv(path)
    assert main(["analyze", "stratify", "--input", str(path), "--score-column", "impscore"]) == 2
    assert "data row 2" in capsys.readouterr().err


def test_harness_samples_are_stratified(tmp_path, throwaway_model, data_root):
    """`pragmeter eval --log-samples` on real ISHate texts (fake server), then stratify the results folder."""
    from pragmeter.datasets.ishate import load_ishate
    from pragmeter.testing.fake_server import FakeChatServer

    items = load_ishate("implicit", "test")[:60]
    table = tmp_path / "texts.csv"
    pd.DataFrame({"text": [i.text for i in items], "label": [int(i.label != 0) for i in items]}).to_csv(table)
    answers = {i.text: ("yes" if n % 3 else "maybe") for n, i in enumerate(items)}  # "maybe" = invalid
    with FakeChatServer(lambda request: answers[request["messages"][-1]["content"]]) as fake:
        assert main(["eval", "--tasks", "hate_detection", "--model-args", f"base_url={fake.url},model=fake-llm",
                     "--task-arg", f"hate_detection.path={table}", "--log-samples", "--no-progress",
                     "--output", str(tmp_path / "run")]) == 0
    assert main(["analyze", "stratify", "--input", str(tmp_path / "run"), "--impscore", throwaway_model]) == 0
    payload = json.loads((tmp_path / "run" / "stratified_hate_detection.json").read_text())
    expected = sum(1 for n, i in enumerate(items) if n % 3 and i.label != 0)  # "yes" on a hateful text
    assert payload["n"] == 60 and payload["correct"] == expected
    assert payload["model"]["model"] == "fake-llm" and payload["task"] == "hate_detection"
    items_file = pd.read_parquet(tmp_path / "run" / payload["items_file"])
    assert items_file["impscore"].between(0, 2).all() and sum(b["n"] for b in payload["bins"]) == 60


def test_items_without_a_gold_label_are_left_out_and_named(tmp_path, throwaway_model, capsys):
    """A missing prediction is a wrong answer; a missing gold label is no item to grade: left out of the accuracy,
    its rows named in one warning line (table and per-sample log alike)."""
    table = tmp_path / "predictions.csv"
    table.write_text("text,gold,prediction,sc\nhello,yes,yes,0.1\nsecond one,yes,no,0.6\nthird,,yes,1.1\n"
                     "fourth,yes,,1.4\nfifth,no,no,1.9\n", encoding="utf-8")
    assert main(["analyze", "stratify", "--input", str(table), "--score-column", "sc", "--output", str(tmp_path)]) == 0
    payload = json.loads((tmp_path / "stratified_predictions.json").read_text())
    assert (payload["n"], payload["correct"]) == (4, 2)  # 'fourth' (no prediction) is wrong, 'third' is left out
    assert (f"warning: {table}: data row 3: field 'gold' is missing; 1 such item(s) left out of the accuracy"
            in capsys.readouterr().err)

    records = [{"task": "hate_detection", "run": 0, "item_id": i, "text": text, "prompt": [], "parsed": parsed,
                "gold": gold, "error": None, "correct": parsed == gold}
               for i, (text, gold, parsed) in enumerate([("It is cold in here.", "yes", "yes"),
                                                         ("Shut the window.", "yes", "no"), ("Go home.", None, "yes"),
                                                         ("Nice weather.", "no", "no")])]
    del records[1]["gold"]
    log = tmp_path / "samples_hate_detection.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(["analyze", "stratify", "--input", str(log), "--impscore", throwaway_model,
                 "--output", str(tmp_path / "log")]) == 0
    payload = json.loads((tmp_path / "log" / "stratified_hate_detection.json").read_text())
    assert (payload["n"], payload["correct"]) == (2, 2)
    assert (f"warning: {log}: lines 2, 3: field 'gold' is missing; 2 such item(s) left out of the accuracy"
            in capsys.readouterr().err)


@pytest.mark.parametrize("cell, message", [("abc", "data row 2: column 'sc' is 'abc', not a number"),
                                           ("5", "data row 2: field 'sc' is 5, outside the ImpScore range"),
                                           ("-1", "data row 2: field 'sc' is -1, outside the ImpScore range")])
def test_a_bad_score_cell_is_named(tmp_path, capsys, cell, message):
    path = tmp_path / "scored.csv"
    path.write_text(f"text,gold,prediction,sc\nhello,yes,yes,0.5\nsecond one,yes,no,{cell}\nthird,no,no,1.2\n",
                    encoding="utf-8")
    assert main(["analyze", "stratify", "--input", str(path), "--score-column", "sc", "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"{path}: {message}" in err
