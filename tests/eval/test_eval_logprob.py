"""`pragmeter eval --mode logprob` against scripted fake servers: options scored by the first token's
log-probabilities; gold answers score 1.0, no answer is ever guessed, the mode is recorded."""

from __future__ import annotations

import json
import math

import pytest

from pragmeter.cli import main
from pragmeter.eval import registry

from eval_helpers import gold_responder, run_eval

LOGPROB_TASKS = sorted(name for name, cls in registry.all_tasks().items() if "mode" in cls.arguments)
LIMIT = 6


def test_gold_first_tokens_score_one_on_every_logprob_task(tmp_path, fake_server):
    server = fake_server(gold_responder(LOGPROB_TASKS, LIMIT, {"mode": "logprob"}))
    payload = run_eval(tmp_path, server, ",".join(LOGPROB_TASKS), "--mode", "logprob", "--limit", str(LIMIT),
                       "--log-samples")
    for name, result in payload["results"].items():
        value = result["metrics"][result["headline"]]
        assert (value["mean"] if isinstance(value, dict) else value) == pytest.approx(1.0), name
        assert result["invalid"] == 0 and result["mode"] == "logprob" and result["max_tokens"] == 1, name
        assert "mode=logprob" in result["signature"] and "max_tokens=1" in result["signature"], name
        assert result["metric_signatures"]["answer"].startswith("first-token|top_logprobs=20"), name
    rows = [json.loads(line) for line in (tmp_path / "samples_ishate_subtle.jsonl").read_text().splitlines()]
    assert all(set(row["option_logprobs"]) == {"non-hateful", "non-subtle", "subtle"} for row in rows)
    assert "letter only" in rows[0]["prompt"][0]["content"]  # Task B answers with letters in this mode
    drinq = [json.loads(line) for line in (tmp_path / "samples_drinq_vanilla.jsonl").read_text().splitlines()]
    assert "selected_option" not in drinq[0]["prompt"][0]["content"]  # examples answered by their letter
    assert "\nanswer\nB" in drinq[0]["prompt"][0]["content"] or "\nanswer\nA" in drinq[0]["prompt"][0]["content"]


def test_the_option_with_most_probability_wins_and_unknown_tokens_are_invalid(tmp_path, fake_server):
    def respond(request):
        text = request["messages"][-1]["content"]
        if "Premise:" in text and text.count("Hypothesis:") > 1:  # INLI: neutral wins on summed variants
            return "Implicature", [("Imp", math.log(0.4)), ("Neutral", math.log(0.3)), (" neutral", math.log(0.25))]
        return "The", [("The", -0.1), ("\n", -3.0)]  # nothing begins an option

    server = fake_server(respond)
    payload = run_eval(tmp_path, server, "inli,hate_detection", "--mode", "logprob", "--limit", "8",
                       "--log-samples")
    inli = payload["results"]["inli"]
    assert inli["invalid"] == 0 and inli["metrics"]["accuracy_per_label"]["neutral"] == 1.0
    detection = payload["results"]["hate_detection"]
    assert detection["invalid"] == detection["n_requests"] == 8  # counted invalid, never guessed
    row = json.loads((tmp_path / "samples_hate_detection.jsonl").read_text().splitlines()[0])
    assert row["option_logprobs"] == {"yes": None, "no": None} and row["parsed"] is None


def test_logprob_and_generate_answers_are_cached_apart(tmp_path, fake_server):
    server = fake_server(gold_responder(["inli"], 4, {"mode": "logprob"}))
    run_eval(tmp_path, server, "inli", "--mode", "logprob", "--limit", "4")
    again = run_eval(tmp_path, server, "inli", "--mode", "logprob", "--limit", "4", "--overwrite")["results"]["inli"]
    assert again["cache_hits"] == 4 and server.total_calls == 4
    generate = run_eval(tmp_path, server, "inli", "--limit", "4", "--overwrite")["results"]["inli"]
    assert generate["cache_hits"] == 0 and generate["mode"] == "generate" and server.total_calls == 8


def test_a_server_without_logprobs_stops_the_run_with_a_clear_error(tmp_path, fake_server, capsys):
    server = fake_server(lambda request: "Neutral", logprobs=False)
    code = main(["eval", "--tasks", "inli", "--mode", "logprob", "--limit", "2", "--no-progress", "--model-args",
                 f"base_url={server.url},model=m", "--output", str(tmp_path)])
    assert code == 2 and "sent no log-probabilities" in capsys.readouterr().err


@pytest.mark.parametrize("tasks, message", [("emphasized_talk", "have no such mode"),
                                            ("drinq_explanation", "have no such mode")])
def test_tasks_without_a_logprob_mode_refuse_it(tmp_path, tasks, message, capsys):
    code = main(["eval", "--tasks", tasks, "--mode", "logprob", "--model-args", "base_url=http://127.0.0.1:9/v1,model=m",
                 "--output", str(tmp_path)])
    assert code == 2 and message in capsys.readouterr().err
    code = main(["eval", "--tasks", "inli", "--task-arg", "inli.mode=loglik", "--model-args",
                 "base_url=http://127.0.0.1:9/v1,model=m", "--output", str(tmp_path)])
    assert code == 2 and "mode='loglik' is not one of generate, logprob" in capsys.readouterr().err
