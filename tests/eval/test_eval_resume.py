"""A run killed with SIGKILL half-way, then started again, repeats no request whose answer had arrived."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from pragmeter.llm.cache import cache_key
from pragmeter.testing.fake_server import FakeChatServer, prompt_key
from pragmeter.tasks.inli import Inli

from eval_helpers import gold_responder

N = 40
CLI = [sys.executable, "-c", "import sys; from pragmeter.cli import main; sys.exit(main())"]


def command(server: FakeChatServer, output) -> list[str]:
    return [*CLI, "eval", "--tasks", "inli", "--limit", str(N), "--output", str(output), "--no-progress",
            "--model-args", f"base_url={server.url},model=fake-model,concurrency=2"]


def test_sigkill_then_resume_repeats_no_finished_request(tmp_path):
    task = Inli()
    items = task.items()[:N]
    responder = gold_responder(["inli"], N)
    with FakeChatServer(responder, latency=0.1) as first:
        process = subprocess.Popen(command(first, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 120
        while first.total_calls < N // 2 and time.time() < deadline and process.poll() is None:
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert not (tmp_path / "results.json").exists()

    cache_file = tmp_path / "cache" / "responses.jsonl"
    cached = {json.loads(line)["key"] for line in cache_file.read_text().splitlines() if line.strip().endswith("}")}
    decoding = {"temperature": 0.0, "max_tokens": task.max_tokens}
    identity = {"backend": "openai-chat", "model": "fake-model"}
    finished = [item for item in items if cache_key(identity, decoding, task.messages(item, 0)) in cached]
    assert N // 4 <= len(finished) < N  # killed half-way

    with FakeChatServer(responder) as second:
        done = subprocess.run(command(second, tmp_path), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        for item in finished:
            assert second.calls[prompt_key(task.messages(item, 0))] == 0, item.id
        assert second.total_calls == N - len(finished)
    result = json.loads((tmp_path / "results.json").read_text())["results"]["inli"]
    assert result["n_items"] == N and result["invalid"] == 0 and result["metrics"]["accuracy"] == 1.0
    assert result["cache_hits"] == len(finished)
