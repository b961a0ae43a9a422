"""One bad request never hurts another: unencodable text refused at the edge, a failing encoder batch retried per
request, a bounded queue answering 503 with Retry-After, small requests interleaved with huge ones, a busy port."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient

from pragmeter.serve.app import create_app
from pragmeter.serve.batcher import EncoderFailed, MicroBatcher
from pragmeter.serve.limits import Limits

SRC = str(Path(__file__).resolve().parents[2] / "src")
POISON = "\ud800 hello"


def _serve(*options: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "PRAGMETER_ONNX_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "pragmeter", "serve", *options], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture(scope="module")
def server(model_dir):
    """The real service on a free loopback port (port 0: the command prints the port it got)."""
    # ONNX Runtime (fp32): batched answers equal onnx_model's one-by-one scores to 1e-5 (bf16 kernels may round
    # differently with the batch's shape)
    process = _serve("--port", "0", "--impscore", model_dir, "--max-wait-ms", "200", "--backend", "onnx")
    seen = ""
    while not (match := re.search(r"on (http://127\.0\.0\.1:\d+/)", seen)):
        line = process.stderr.readline()
        if not line:
            process.kill()
            pytest.fail(f"serve did not start: {seen}")
        seen += line
    yield match.group(1)
    process.terminate()
    process.wait(timeout=30)


def test_poisoned_request_does_not_fail_its_neighbours(server, onnx_model, sentences):
    texts = sentences[:3]
    bodies = [{"texts": [POISON]}] + [{"texts": [text]} for text in texts]
    answers: dict[int, httpx.Response] = {}

    def post(index: int) -> None:
        # json.dumps escapes the surrogate as \ud800: valid JSON that passes type validation.
        answers[index] = httpx.post(server + "score", content=json.dumps(bodies[index]), timeout=120,
                                    headers={"content-type": "application/json"})

    threads = [threading.Thread(target=post, args=(i,)) for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers[0].status_code == 422
    assert "texts[0] contains a lone surrogate U+D800" in answers[0].json()["detail"]
    for index, text in enumerate(texts, start=1):
        assert answers[index].status_code == 200, answers[index].text
        assert np.allclose(answers[index].json()["scores"], onnx_model.score([text]), atol=1e-5)


def test_nul_and_surrogates_in_pairs_are_named(server):
    answer = httpx.post(server + "distance", json={"pairs": [["fine", "also fine"], ["ok", "a\x00b"]]}, timeout=60)
    assert answer.status_code == 422 and "pairs[1][1] contains a NUL character" in answer.json()["detail"]


def test_busy_port_fails_in_one_line_without_url(server):
    port = int(server.rsplit(":", 1)[1].strip("/"))
    process = _serve("--port", str(port))
    _, err = process.communicate(timeout=120)
    assert process.returncode != 0
    assert "http://" not in err and "Traceback" not in err
    assert err.strip().splitlines() == [f"pragmeter serve: error: cannot listen on 127.0.0.1:{port}: "
                                        "Address already in use"]


def test_failed_batch_is_retried_per_request(onnx_model, sentences):
    """The tokenizer itself raises on a lone surrogate; only that request fails, the others get their rows."""
    encoder = onnx_model.encoder

    async def scenario():
        batcher = MicroBatcher(encoder.encode, max_texts=64, max_wait_ms=200)
        await batcher.start()
        try:
            return batcher, await asyncio.gather(*(batcher.encode(texts) for texts in
                                                   ([sentences[0]], [POISON, sentences[1]], sentences[2:5])),
                                                 return_exceptions=True)
        finally:
            await batcher.stop()

    batcher, (good, bad, more) = asyncio.run(scenario())
    assert isinstance(bad, EncoderFailed) and "TypeError" in str(bad)
    assert np.allclose(good, encoder.encode([sentences[0]]), atol=1e-5)
    assert np.allclose(more, encoder.encode(sentences[2:5]), atol=1e-5)
    assert batcher.stats.retried_batches == 1 and batcher.stats.failed_requests == 1


def test_small_request_is_not_stuck_behind_a_huge_one(onnx_model, sentences):
    """A 200-text request and then a 1-text one: the small one is answered in the second batch, not the last."""
    encoder = onnx_model.encoder
    finished: list[str] = []

    async def scenario():
        batcher = MicroBatcher(encoder.encode, max_texts=16, max_wait_ms=0)
        await batcher.start()

        async def tagged(name, texts):
            result = await batcher.encode(texts)
            finished.append(name)
            return result

        try:
            huge = asyncio.create_task(tagged("huge", (sentences * 2)[:200]))
            await asyncio.sleep(0)
            small = asyncio.create_task(tagged("small", [sentences[-1]]))
            return await huge, await small, batcher.stats.batches
        finally:
            await batcher.stop()

    huge, small, batches = asyncio.run(scenario())
    assert finished == ["small", "huge"] and batches >= 13
    assert np.allclose(small, encoder.encode([sentences[-1]]), atol=1e-5)
    assert np.allclose(huge, encoder.encode((sentences * 2)[:200]), atol=1e-5)


def test_full_queue_answers_503_with_retry_after(onnx_model, sentences):
    """While the encoder is held on one batch, texts past the queue limit get 503 + Retry-After; after, 200."""
    gate = threading.Event()

    class HeldModel:  # the real model, with the encoder held until the test releases it
        def __getattr__(self, name):
            return getattr(onnx_model, name)

        def encode(self, texts):
            gate.wait(60)
            return onnx_model.encode(texts)

    limits = Limits(max_texts=8, max_chars=300, max_queued_texts=8)
    with TestClient(create_app(HeldModel(), limits, max_batch=8, max_wait_ms=0)) as client:
        answers: list = []
        first = threading.Thread(target=lambda: answers.append(client.post("/score", json={"texts": sentences[:8]})))
        first.start()
        deadline = time.monotonic() + 30
        while client.get("/health").json()["batcher"]["batches"] == 0 and time.monotonic() < deadline:
            if client.get("/health").json()["queued_texts"] == 0:
                break  # the first batch is in the (held) encoder
            time.sleep(0.05)
        second = threading.Thread(target=lambda: answers.append(client.post("/score", json={"texts": sentences[8:16]})))
        second.start()
        while client.get("/health").json()["queued_texts"] < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        refused = client.post("/score", json={"texts": [sentences[16]]})
        assert refused.status_code == 503
        assert int(refused.headers["Retry-After"]) >= 1 and "8 texts are queued" in refused.json()["detail"]
        gate.set()
        first.join()
        second.join()
        assert [a.status_code for a in answers] == [200, 200]
        assert client.post("/score", json={"texts": [sentences[16]]}).status_code == 200


# --- the batcher's worker outlives any one batch (issue 47, item 14) ---------------------------------------------

def failed_then_served(served, onnx_model, sentences, detail: str):
    """Serve ``served``: the first request must get 500 with ``detail``, the next one its scores; /health after."""
    with TestClient(create_app(served, Limits(request_timeout=20), max_wait_ms=0)) as client:
        first = client.post("/score", json={"texts": [sentences[0]]})
        assert first.status_code == 500 and first.json()["detail"] == detail
        later = client.post("/score", json={"texts": sentences[1:4]})
        assert later.status_code == 200, later.text
        assert np.allclose(later.json()["scores"], onnx_model.score(sentences[1:4]), atol=1e-5)
        return client.get("/health")


def test_an_encoder_answer_of_the_wrong_shape_fails_its_request_not_the_service(onnx_model, sentences):
    """An encoder that once answers a 1-D array (an encoder bug) ended the worker as it handed out rows: every
    later request then waited for its timeout and got 503 while /health said ok. That request gets 500 naming the
    shape; the next ones are answered."""
    calls = []

    class OnceBroken:  # the real model, whose encoder answers one call wrongly
        def __getattr__(self, name):
            return getattr(onnx_model, name)

        def encode(self, texts):
            calls.append(len(texts))
            return np.zeros(384, dtype=np.float32) if len(calls) == 1 else onnx_model.encode(texts)

    health = failed_then_served(OnceBroken(), onnx_model, sentences, "the encoder failed on this request (ValueError: "
                                "the encoder returned an array of shape (384,) for 1 texts)")
    assert health.status_code == 200 and health.json()["status"] == "ok"


def test_a_batch_that_breaks_outside_the_encoder_fails_only_its_requests(onnx_model, sentences, monkeypatch):
    """A failure while a batch is formed (outside the encoder's try) fails that batch's requests with 500; the
    worker goes on, later requests are answered, and /health counts the failure."""
    real_take, broken = MicroBatcher._take, []

    def take_breaking_once(self):
        if not broken:
            broken.append(1)
            raise RuntimeError("a bug while forming a batch")
        return real_take(self)

    monkeypatch.setattr(MicroBatcher, "_take", take_breaking_once)
    health = failed_then_served(onnx_model, onnx_model, sentences, "the service failed on this request's batch "
                                "(RuntimeError: a bug while forming a batch)")
    assert health.status_code == 200 and health.json()["batcher"]["worker_errors"] == 1


def test_a_worker_that_ends_fails_the_health_check_and_says_why(onnx_model, sentences, monkeypatch):
    """Were the worker to end anyway, /health answers 503 naming why, and requests are refused at once with 503
    instead of waiting for their timeout."""
    async def ends(self):
        await asyncio.sleep(0)
        raise RuntimeError("the worker broke")

    monkeypatch.setattr(MicroBatcher, "_run", ends)
    with TestClient(create_app(onnx_model, Limits(request_timeout=600), max_wait_ms=0)) as client:
        health = client.get("/health")
        assert health.status_code == 503
        assert health.json() == {"status": "failed", "detail": "the batcher stopped (RuntimeError: the worker broke)"}
        refused = client.post("/score", json={"texts": [sentences[0]]})  # at once: the timeout is 600 s
        assert refused.status_code == 503
        assert refused.json()["detail"] == ("the batcher stopped (RuntimeError: the worker broke); the service must "
                                            "be restarted")


def test_the_served_command_on_loopback_refuses_other_host_names(server):
    """`pragmeter serve` binds 127.0.0.1 by default and then answers only requests addressed to it by a loopback
    name (a page whose domain was rebound to 127.0.0.1 cannot read its answers)."""
    port = server.rstrip("/").rsplit(":", 1)[1]
    rebound = httpx.get(server + "health", headers={"Host": f"rebound.example:{port}"}, timeout=30)
    assert rebound.status_code == 403 and "listens on loopback only" in rebound.json()["detail"]
    assert httpx.get(server.replace("127.0.0.1", "localhost") + "health", timeout=30).status_code == 200
