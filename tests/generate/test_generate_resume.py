"""A generation run killed with SIGKILL half-way, then started again, repeats no request that had been answered."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd

from generate_helpers import real_posts, user_text
from pragmeter.testing.fake_server import FakeChatServer, prompt_key
from pragmeter.impscore.corpus.build import load_corpus

CLI = [sys.executable, "-c", "import sys; from pragmeter.cli import main; sys.exit(main())"]


def command(server: FakeChatServer, tmp_path) -> list[str]:
    return [*CLI, "generate", "pairs", "--input", str(tmp_path / "posts.csv"), "--source-type", "hate",
            "--output", str(tmp_path / "pairs.csv"), "--no-progress",
            "--model-args", f"base_url={server.url},model=fake-model,concurrency=2"]


def respond(request: dict) -> str:
    return f"Explicit version: The plain meaning of: {user_text(request)[:40]}"


def test_sigkill_then_resume_repeats_no_answered_request(tmp_path):
    posts = pd.read_csv(real_posts(tmp_path))["text"].tolist()
    with FakeChatServer(respond, latency=0.2) as first:
        process = subprocess.Popen(command(first, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 120
        while first.total_calls < len(posts) // 2 and time.time() < deadline and process.poll() is None:
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert process.returncode == -signal.SIGKILL
    assert not (tmp_path / "pairs.csv").exists()

    cache = tmp_path / "pairs.csv.responses.jsonl"
    answered = [json.loads(line) for line in cache.read_text().splitlines() if line.strip().endswith("}")]
    assert 0 < len(answered) < len(posts)

    with FakeChatServer(respond) as second:
        done = subprocess.run(command(second, tmp_path), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        for post in _answered_posts(posts, answered):
            assert second.calls[prompt_key(_messages(post))] == 0, post
        assert second.total_calls == len(posts) - len(answered)
    assert f"requests {len(posts)}, cached {len(answered)}" in done.stdout
    assert len(load_corpus(tmp_path / "pairs.csv")) > 0


def _messages(post: str) -> list[dict]:
    from pragmeter.generate.pairs import system_prompts

    return [{"role": "system", "content": system_prompts()["toxigen"]}, {"role": "user", "content": post}]


def _answered_posts(posts: list[str], answered: list[dict]) -> list[str]:
    from pragmeter.llm.cache import cache_key

    keys = {entry["key"] for entry in answered}
    identity, decoding = {"backend": "openai-chat", "model": "fake-model"}, {"temperature": 0.0, "max_tokens": 256}
    found = [p for p in posts if cache_key(identity, decoding, _messages(p)) in keys]
    assert len(found) == len(answered)  # every cached answer is one of our prompts
    return found
