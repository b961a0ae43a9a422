"""Requests that fail after every retry are not answers: they are not scored, the run says how many were answered and
is marked incomplete (exit 3), and the same command again asks only what failed (issue 36, item 2)."""

from __future__ import annotations

import json

import pandas as pd

from pragmeter.cli import main

from eval_helpers import gold_responder

N = 20


def command(server, output, *extra: str) -> list[str]:
    return ["eval", "--tasks", "inli", "--limit", str(N), "--output", str(output), "--no-progress",
            "--model-args", f"base_url={server.url},model=fake-model,concurrency=1,max_retries=0", *extra]


def test_failed_requests_are_not_scored_and_a_rerun_asks_only_them(tmp_path, fake_server, capsys):
    responder = gold_responder(["inli"], N)
    flaky = fake_server(responder, fault_rate=0.5, faults=("drop",), seed=5)
    assert main(command(flaky, tmp_path)) == 3
    failed = flaky.faults_sent["drop"]
    assert 0 < failed < N
    payload = json.loads((tmp_path / "results.json").read_text())
    result = payload["results"]["inli"]
    assert payload["complete"] is False and result["complete"] is False
    assert result["errors"] == failed and result["n_answered"] == N - failed and result["n_asked"] == N
    assert result["metrics"]["accuracy"] == 1.0  # every answer was right; the failures are not counted wrong
    assert result["metrics"]["n"] == N - failed
    out, err = capsys.readouterr()
    assert f"answered {N - failed}/{N}" in out and "incomplete" in err

    healthy = fake_server(responder)
    assert main(command(healthy, tmp_path)) == 0  # no --overwrite needed: the folder was not finished
    assert healthy.total_calls == failed  # only what failed is asked again
    payload = json.loads((tmp_path / "results.json").read_text())
    assert payload["complete"] is True and payload["results"]["inli"]["n_answered"] == N
    assert payload["results"]["inli"]["metrics"]["accuracy"] == 1.0
    # Finished now: the same command is refused again without --overwrite.
    assert main(command(healthy, tmp_path)) == 2 and healthy.total_calls == failed


def test_a_run_where_every_request_failed_is_incomplete(tmp_path, capsys):
    code = main(["eval", "--tasks", "inli", "--limit", "3", "--output", str(tmp_path), "--no-progress",
                 "--model-args", "base_url=http://127.0.0.1:9/v1,model=m,max_retries=0"])
    assert code == 3
    result = json.loads((tmp_path / "results.json").read_text())["results"]["inli"]
    assert result["n_answered"] == 0 and result["errors"] == 3 and result["metrics"] == {}
    assert "answered 0/3" in capsys.readouterr().out


def test_generate_graded_reruns_after_a_run_that_produced_nothing(tmp_path, fake_server):
    source = tmp_path / "in.csv"
    source.write_text("text\nClose the window.\nPass the salt.\n", encoding="utf-8")
    output = tmp_path / "graded.csv"
    argv = ["generate", "graded", "--input", str(source), "--column", "text", "--output", str(output),
            "--no-progress", "--retries", "0"]
    assert main([*argv, "--model-args", "base_url=http://127.0.0.1:9/v1,model=m,max_retries=0"]) != 0
    from pragmeter.generate.graded import level_prompts

    rewrites = {2: "Could you perhaps close the window?", 3: "Isn't it getting a bit cold in here?",
                4: "Brr, I can feel a draught."}
    by_prompt = {prompt: rewrites[level] for level, prompt in level_prompts().items()}

    def respond(request):
        return by_prompt[request["messages"][0]["content"]]

    server = fake_server(respond)
    assert main([*argv, "--model-args", f"base_url={server.url},model=m,max_retries=0"]) == 0  # no --overwrite
    assert len(pd.read_csv(output)) >= 1
    # A finished output is not replaced by accident.
    assert main([*argv, "--model-args", f"base_url={server.url},model=m"]) == 2
