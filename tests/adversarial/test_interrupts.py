"""Long jobs stopped half-way (Ctrl-C = SIGINT, or SIGKILL) and started again: nothing finished is computed or
asked again, and the output is complete, in input order and readable.

The first run is a real process that is signalled once it has finished part of the work (embedding shards on
disk, answers in the response cache); the second runs the same command through ``main()`` here, where the
encoder and the fake server count what is computed and asked.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pragmeter.cli import main
from pragmeter.data.root import data_file
from pragmeter.testing.fake_server import FakeChatServer, prompt_key

CLI = [sys.executable, "-c", "import sys; from pragmeter.cli import main; sys.exit(main())"]
POSTS = "implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg3_posts.tsv"
# twenty steps of 32 texts ($PRAGMETER_CHUNK_SIZE), so the job is stopped part-way even when a loaded machine lets
# it run on for a while before the signal lands (five steps were sometimes all done by then)
N_TEXTS, CHUNK = 640, 32


@pytest.fixture(scope="module")
def texts() -> list[str]:
    frame = pd.read_csv(data_file(POSTS), sep="\t", dtype=str)
    distinct = list(dict.fromkeys(" ".join(t.split()) for t in frame["post"].dropna()))
    return distinct[:N_TEXTS]


def environment(cache: Path) -> dict:
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, "PRAGMETER_CACHE": str(cache), "PRAGMETER_CHUNK_SIZE": str(CHUNK), "OMP_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1", "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def interrupt_when(argv: list[str], env: dict, ready, sig: int, timeout: float = 300) -> subprocess.CompletedProcess:
    """Start the command, send ``sig`` once ``ready()`` holds, and return how it ended."""
    # Ctrl-C reaches the job even when this test runs in the background (which starts children with SIGINT ignored).
    process = subprocess.Popen([*CLI, *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + timeout
    while not ready() and process.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    assert process.poll() is None, "the job ended before it could be interrupted: " + process.stderr.read()
    os.kill(process.pid, sig)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def assert_stopped(done: subprocess.CompletedProcess, sig: int, command: str) -> None:
    if sig == signal.SIGKILL:
        assert done.returncode == -signal.SIGKILL
    else:  # Ctrl-C: one line, exit 130, no traceback
        assert done.returncode == 130, done.stderr
        assert f"pragmeter {command}: interrupted; finished work is kept" in done.stderr
        assert "Traceback" not in done.stderr


def shards(cache: Path) -> dict[bytes, bool]:
    """The keys committed to the embedding cache (SQLite, read-only; empty before the first commit)."""
    import sqlite3

    keys: dict[bytes, bool] = {}
    for path in cache.glob("embeddings/*/embeddings.sqlite"):
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                keys.update((bytes(k), True) for (k,) in db.execute("SELECT key FROM embeddings"))
        except sqlite3.Error:  # created but no table yet
            pass
    return keys


def cached_keys(keys) -> set[bytes]:
    return set(keys)


@pytest.fixture
def encoded(monkeypatch):
    """Texts the encoder computes in this process (the resumed run)."""
    from pragmeter.impscore.model import ImpScore

    seen: list[str] = []
    original = ImpScore._encode_now

    def counting(self, batch):
        seen.extend(batch)
        return original(self, batch)

    monkeypatch.setattr(ImpScore, "_encode_now", counting)
    return seen


def resume_encodes_only_the_rest(cache: Path, before: dict, encoded: list[str]) -> None:
    from pragmeter.encoders.embedding_cache import text_key

    after = shards(cache)
    assert all(after.get(path) == stamp for path, stamp in before.items())  # finished shards untouched
    done_before = cached_keys(before)
    assert {text_key(t) for t in encoded}.isdisjoint(done_before)  # nothing finished is computed again
    assert cached_keys(after) == done_before | {text_key(t) for t in encoded}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_score_file_resumes(sig, texts, tmp_path, private_cache, encoded, monkeypatch, capsys):
    source, target, cache = tmp_path / "in.csv", tmp_path / "out.parquet", private_cache
    rows = texts + texts[:50]  # repeated texts are encoded once
    pd.DataFrame({"id": range(len(rows)), "text": rows}).to_csv(source, index=False)
    argv = ["score", "--input", str(source), "--output", str(target)]
    done = interrupt_when(argv, environment(cache), lambda: len(shards(cache)) >= 1, sig)
    assert_stopped(done, sig, "score")
    assert not target.exists()
    before = shards(cache)
    assert 1 <= len(before) < len(set(texts))  # some chunks committed, not all

    monkeypatch.setenv("PRAGMETER_CHUNK_SIZE", str(CHUNK))
    assert main(argv) == 0
    resume_encodes_only_the_rest(cache, before, encoded)
    assert 0 < len(encoded) == len(texts) - len(before) <= len(texts) - CHUNK
    out = pd.read_parquet(target)
    assert out["id"].astype(int).tolist() == list(range(len(rows))) and out["text"].tolist() == rows
    assert (out["impscore_error"] == "").all() and out["impscore"].between(0, 2).all()
    repeated = out.iloc[len(texts):]["impscore"].to_numpy()
    assert np.allclose(repeated, out.iloc[:50]["impscore"].to_numpy(), atol=1e-6)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_profile_resumes(sig, texts, tmp_path, private_cache, encoded, monkeypatch):
    source, output, cache = tmp_path / "posts.csv", tmp_path / "profiles", private_cache
    labels = ["a" if i % 3 else "b" for i in range(len(texts))]
    pd.DataFrame({"text": texts, "label": labels}).to_csv(source, index=False)
    argv = ["analyze", "profile", "--input", str(source), "--label-column", "label", "--pairs", "200", "--output", str(output)]
    done = interrupt_when(argv, environment(cache), lambda: len(shards(cache)) >= 1, sig)
    assert_stopped(done, sig, "analyze")
    assert not (output / "profile_posts.json").exists()
    before = shards(cache)
    assert 1 <= len(before) < len(set(texts))

    monkeypatch.setenv("PRAGMETER_CHUNK_SIZE", str(CHUNK))
    assert main(argv) == 0
    resume_encodes_only_the_rest(cache, before, encoded)
    assert 0 < len(encoded) == len(texts) - len(before) <= len(texts) - CHUNK
    payload = json.loads((output / "profile_posts.json").read_text())
    assert payload["overall"]["scores"]["n"] == len(texts)
    scores = pd.read_parquet(output / payload["scores_file"])
    assert scores["text"].tolist() == texts and scores["label"].tolist() == labels
    assert scores["impscore"].between(0, 2).all()


# ------------------------------------------------------------------------------------------ LLM jobs
def inli_gold_responder(limit: int):
    from pragmeter.tasks.inli import Inli

    task = Inli()
    answers = {prompt_key(task.messages(item, 0)): task.reference_answer(item) for item in task.items()[:limit]}
    return task, lambda request: answers[prompt_key(request["messages"])]


def test_eval_resumes_after_ctrl_c(tmp_path):
    """(SIGKILL: tests/harness/test_harness_resume.py.)"""
    n = 40
    task, responder = inli_gold_responder(n)
    output = tmp_path / "run"

    def argv(server):
        return ["eval", "--tasks", "inli", "--limit", str(n), "--output", str(output), "--no-progress",
                "--log-samples", "--model-args", f"base_url={server.url},model=fake-model,concurrency=2"]

    with FakeChatServer(responder, latency=0.1) as first:
        done = interrupt_when(argv(first), environment(tmp_path / "cache"), lambda: first.total_calls >= n // 2,
                              signal.SIGINT)
    assert_stopped(done, signal.SIGINT, "eval")
    assert not (output / "results.json").exists()
    answered = [json.loads(line) for line in (output / "cache" / "responses.jsonl").read_text().splitlines()
                if line.strip()]
    assert n // 4 <= len(answered) < n

    with FakeChatServer(responder) as second:
        assert main(argv(second)) == 0
        assert second.total_calls == n - len(answered)
        assert all(count == 1 for count in second.calls.values())
    result = json.loads((output / "results.json").read_text())["results"]["inli"]
    assert result["n_items"] == n and result["invalid"] == 0 and result["cache_hits"] == len(answered)
    samples = [json.loads(line) for line in (output / "samples_inli.jsonl").read_text().splitlines()]
    assert [s["item_id"] for s in samples] == [task.item_id(item) for item in task.items()[:n]]  # all, in order


def test_generate_resumes_after_ctrl_c(tmp_path):
    """(SIGKILL: tests/generate/test_generate_resume.py.)"""
    frame = pd.read_csv(data_file(POSTS), sep="\t", dtype=str)
    posts = list(dict.fromkeys(" ".join(t.split()) for t in frame["post"].dropna()))[:30]
    source, output = tmp_path / "posts.csv", tmp_path / "pairs.csv"
    pd.DataFrame({"text": posts}).to_csv(source, index=False)

    def respond(request):
        return f"Explicit version: The plain meaning of: {request['messages'][-1]['content'][:40]}"

    def argv(server):
        return ["generate", "pairs", "--input", str(source), "--source-type", "hate", "--output", str(output),
                "--no-progress", "--model-args", f"base_url={server.url},model=fake-model,concurrency=2"]

    with FakeChatServer(respond, latency=0.1) as first:
        done = interrupt_when(argv(first), environment(tmp_path / "cache"),
                              lambda: first.total_calls >= len(posts) // 2, signal.SIGINT)
    assert_stopped(done, signal.SIGINT, "generate")
    assert not output.exists()
    cache = output.with_name(output.name + ".responses.jsonl")
    answered = [line for line in cache.read_text().splitlines() if line.strip()]
    assert 0 < len(answered) < len(posts)

    with FakeChatServer(respond) as second:
        assert main(argv(second)) == 0
        assert second.total_calls == len(posts) - len(answered)
        assert all(count == 1 for count in second.calls.values())
    written = pd.read_csv(output)
    assert sorted(written["implicit"]) == sorted(posts)  # every post, none twice
