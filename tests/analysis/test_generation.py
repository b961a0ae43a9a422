"""The generation check (paper A.15) against the fake server: answer parsing, per-level means over runs,
Kendall τ, invalid answers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pragmeter.analysis.generation import parse_sentences
from pragmeter.cli import main
from pragmeter.testing.fake_server import FakeChatServer

SENTENCES = ["Please wash the dishes right now.", "The dishes really need washing tonight.",
             "The sink is getting rather full, isn't it?", "I wonder what we'll all eat off tomorrow."]


@pytest.mark.parametrize("answer", [
    "\n".join(SENTENCES),
    "\n".join(f"{i + 1}. {s}" for i, s in enumerate(SENTENCES)),
    "\n".join(f"**{lv}:** \"{s}\"" for lv, s in zip(["Most explicit", "Explicit", "Implicit", "Most implicit"], SENTENCES)),
    "Here are four sentences:\n\n" + "\n".join(f"- {s}" for s in SENTENCES),
])
def test_parse_sentences_strips_numbering_and_labels(answer):
    assert parse_sentences(answer) == SENTENCES


def test_parse_sentences_rejects_other_counts():
    assert parse_sentences("\n".join(SENTENCES[:3])) is None and parse_sentences(None) is None


def test_generation_check_reports_levels_and_tau(tmp_path, throwaway_model):
    topics = tmp_path / "topics.txt"
    topics.write_text("washing the dishes\nloud music\nbroken promise\n")

    def responder(request):
        # Run r asks with seed 10 + r: run 0 in the requested order, run 1 reversed, run 2 invalid for one topic.
        run = request["seed"] - 10
        if run == 2 and "music" in request["messages"][0]["content"]:
            return "Sure!"
        return "\n".join(SENTENCES if run != 1 else SENTENCES[::-1])

    with FakeChatServer(responder) as fake:
        assert main(["analyze", "generation-check", "--model-args", f"base_url={fake.url},model=fake-writer,seed=10",
                     "--topics", str(topics), "--runs", "3", "--impscore", throwaway_model, "--no-progress",
                     "--output", str(tmp_path / "out")]) == 0
    payload = json.loads((tmp_path / "out" / "generation_check.json").read_text())
    assert payload["n_requests"] == 9 and payload["n_valid"] == 8 and payload["n_invalid"] == 1
    records = [json.loads(line) for line in (tmp_path / "out" / "generations.jsonl").read_text().splitlines()]
    forward = np.array(next(r["impscores"] for r in records if r["run"] == 0))
    taus = {r["run"]: r["kendall_tau"] for r in records if r["valid"]}
    assert taus[1] == pytest.approx(-taus[0])  # the reversed run has the opposite order
    levels = payload["levels"]
    # Per run, each level's mean over topics equals the (identical) sentence's score at that position.
    assert [lv["per_run"][0] for lv in levels] == pytest.approx(forward.tolist(), abs=1e-6)
    assert [lv["per_run"][1] for lv in levels] == pytest.approx(forward[::-1].tolist(), abs=1e-6)
    assert levels[0]["mean"] == pytest.approx(np.mean([forward[0], forward[3], forward[0]]), abs=1e-6)
    assert levels[0]["sd_over_runs"] == pytest.approx(np.std([forward[0], forward[3], forward[0]], ddof=1), abs=1e-6)
    assert payload["model"]["model"] == "fake-writer" and payload["model"]["temperature"] == 1.0
    assert (tmp_path / "out" / "generation_check.png").stat().st_size > 10_000
