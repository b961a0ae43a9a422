"""`pragmeter eval` on the tasks beyond the seeds through a fake server: a perfect model scores 1.0 on each, LUDWIG
reports the items outside INLI's premises apart, and the sample logs are what `analyze stratify` reads."""

from __future__ import annotations

import json

import pytest

from pragmeter.analysis.stratify import from_samples
from pragmeter.testing.fake_server import constant

from eval_helpers import gold_responder, run_eval

NEW_TASKS = ["ludwig", "circa", "bbh_snarks", "figqa", "floyd"]
LIMIT = 40


def test_a_perfect_model_scores_one_and_the_logs_stratify(tmp_path, fake_server):
    server = fake_server(gold_responder(NEW_TASKS, LIMIT))
    payload = run_eval(tmp_path, server, ",".join(NEW_TASKS), "--limit", str(LIMIT), "--log-samples")
    for name in NEW_TASKS:
        result = payload["results"][name]
        accuracy = result["metrics"]["accuracy"]
        assert (accuracy["mean"] if isinstance(accuracy, dict) else accuracy) == pytest.approx(1.0), name
        assert result["invalid"] == 0 and result["errors"] == 0, name
        predictions = from_samples(tmp_path / f"samples_{name}.jsonl")
        assert len(predictions.texts) == LIMIT * (6 if name == "ludwig" else 1)
        assert predictions.correct.min() == 1.0
    ludwig = payload["results"]["ludwig"]
    assert ludwig["n_requests"] == 6 * LIMIT and len(ludwig["runs"]) == 6
    metrics = ludwig["metrics"]
    assert metrics["accuracy_outside_inli"]["mean"] == 1.0 and metrics["accuracy_in_inli"]["mean"] == 1.0
    assert metrics["n_outside_inli"]["mean"] + metrics["n_in_inli"]["mean"] == LIMIT
    assert set(payload["results"]["floyd"]["metrics"]["accuracy_by_phenomenon"]) == {"Metaphor", "Maxims"}
    rows = [json.loads(line) for line in (tmp_path / "samples_bbh_snarks.jsonl").read_text().splitlines()]
    assert all(row["response"] in ("(A)", "(B)") and row["text"] for row in rows)


def test_a_constant_answer_scores_its_share_of_the_gold_labels(tmp_path, fake_server):
    server = fake_server(constant("no"))
    result = run_eval(tmp_path, server, "ludwig", "--limit", "60")["results"]["ludwig"]
    from pragmeter.datasets.ludwig import load_ludwig

    share = sum(item.label == "no" for item in load_ludwig("test")[:60]) / 60
    assert result["metrics"]["accuracy"]["mean"] == pytest.approx(share)
    assert result["metrics"]["accuracy"]["sd"] == 0.0 and result["invalid"] == 0


def test_logprob_mode_scores_the_options_of_each_task(tmp_path, fake_server):
    names = ["ludwig", "circa", "figqa", "floyd"]
    server = fake_server(gold_responder(names, 8, {"mode": "logprob"}))
    payload = run_eval(tmp_path, server, ",".join(names), "--limit", "8", "--mode", "logprob")
    for name in names:
        accuracy = payload["results"][name]["metrics"]["accuracy"]
        assert (accuracy["mean"] if isinstance(accuracy, dict) else accuracy) == pytest.approx(1.0), name
        assert payload["results"][name]["invalid"] == 0, name
