"""Fixtures for harness tests: scripted fake OpenAI-compatible servers and a helper to run `pragmeter eval`."""

from __future__ import annotations

import json
from pathlib import Path


from pragmeter.cli import main
from pragmeter.eval import registry
from pragmeter.testing.fake_server import FakeChatServer, prompt_key

JUDGE_PERFECT = '{"analysis": "The prediction matches the reference implication.", "score": 5}'


def gold_answers(task_names: list[str], limit: int, args: dict | None = None) -> dict[str, str]:
    """prompt key -> the reference answer of that item, for every run of every task (as the harness asks);
    ``args`` are task arguments given to every task that accepts them (e.g. mode=logprob)."""
    answers = {}
    for cls in registry.resolve(task_names):
        task = cls({k: v for k, v in (args or {}).items() if k in cls.arguments})
        for run in range(task.runs):
            for item in task.items()[:limit]:
                answers[prompt_key(task.messages(item, run))] = task.reference_answer(item)
    return answers


def gold_responder(task_names: list[str], limit: int, args: dict | None = None):
    answers = gold_answers(task_names, limit, args)

    def respond(request: dict) -> str:
        # Prompts the harness did not build from an item are the judge's: a perfect judge gives 5.
        return answers.get(prompt_key(request["messages"]), JUDGE_PERFECT)

    return respond


def run_eval(output: Path, server: FakeChatServer, tasks: str, *extra: str, model_args: str = "") -> dict:
    args = f"base_url={server.url},model=fake-model" + (f",{model_args}" if model_args else "")
    code = main(["eval", "--tasks", tasks, "--model-args", args, "--output", str(output), "--no-progress", *extra])
    assert code == 0
    return json.loads((output / "results.json").read_text())
