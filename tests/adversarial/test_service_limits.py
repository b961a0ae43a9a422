"""The service against a hung encoder and a greedy client: /health stops saying ok once one encoder batch has run past
the stall timeout (a hung encoder never fails), and one client address cannot hold every connection slot. A fake
encoder that a test holds (the heads are real), on a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time

import httpx
import numpy as np

from pragmeter.serve.app import create_app
from pragmeter.serve.limits import Limits
from pragmeter.testing.asgi import running

DIM = 16
HALF_HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # headers never finished: the connection stays open


class HeldModel:
    """An ImpScore whose encoder waits for ``gate`` (set: answers at once); real heads, seeded."""

    encoder_name = "fake-encoder"
    backend = "fake"

    def __init__(self) -> None:
        import torch

        from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads

        torch.manual_seed(0)
        self.heads = ImpScoreHeads(HeadsConfig(DIM, dim=8))
        self.gate = threading.Event()
        self.started = 0

    def signature(self) -> str:
        return "fake"

    def encode(self, texts: list[str]) -> np.ndarray:
        self.started += 1
        assert self.gate.wait(60), "the test never released the encoder"
        return np.ones((len(texts), DIM), dtype=np.float32)


def wait_for(condition, seconds: float = 10, what: str = "condition") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_health_says_stalled_when_an_encoder_batch_runs_past_the_stall_timeout():
    model = HeldModel()
    app = create_app(model, Limits(stall_timeout=0.5, request_timeout=30), max_wait_ms=0)
    with running(app) as base:
        assert httpx.get(base + "/health", timeout=10).json()["status"] == "ok"
        stuck = threading.Thread(target=lambda: httpx.post(base + "/score", json={"texts": ["hung"]}, timeout=60))
        stuck.start()
        wait_for(lambda: model.started == 1, what="the batch to reach the encoder")
        assert httpx.get(base + "/health", timeout=10).status_code == 200  # busy, not yet past the timeout
        time.sleep(0.7)
        answer = httpx.get(base + "/health", timeout=10)
        assert answer.status_code == 503 and answer.json()["status"] == "stalled"
        assert "past the stall timeout of 0.5 s" in answer.json()["detail"]
        model.gate.set()  # the encoder comes back: the service is live again
        stuck.join(60)
        assert httpx.get(base + "/health", timeout=10).json()["status"] == "ok"


def test_one_client_cannot_hold_every_connection_slot():
    """With a per-client cap of 5 under a cap of 50 in all: a sixth connection from the same address is answered 503
    at once with Retry-After; when one of its connections closes, it is served again."""
    from pragmeter.serve.connections import protocol_class
    from pragmeter.serve.server import service_server

    model = HeldModel()
    model.gate.set()
    app = create_app(model, Limits(max_connections=50, max_client_connections=5, header_timeout=60))
    server = service_server(app)
    assert server.config.http.max_client_connections == 5 and server.config.http.max_connections == 50
    assert protocol_class(10, 50).max_client_connections == 50  # no per-client cap given: the cap in all
    with running(app) as base:
        port = int(base.rsplit(":", 1)[1])
        held = []
        for _ in range(5):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=30))
            held[-1].sendall(HALF_HEAD)
        refused = httpx.get(base + "/health", timeout=10)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["detail"] == ("this client has 5 open connections (the limit per client); retry in 1 s")
        held.pop().close()
        wait_for(lambda: httpx.get(base + "/health", timeout=10).status_code == 200, what="room after closing")
        for sock in held:
            sock.close()


def test_the_service_refuses_invisible_text_as_empty():
    model = HeldModel()
    model.gate.set()
    with running(create_app(model, max_wait_ms=0)) as base:
        answer = httpx.post(base + "/score", json={"texts": ["fine", "\u200b\ufeff\u2060"]}, timeout=10)
        assert answer.status_code == 422 and answer.json()["detail"] == "texts[1] is empty"
