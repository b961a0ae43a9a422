"""A fair service: small requests are not starved by big ones, abandoned requests are not encoded, a request
waits at most its deadline, and stalled or oversized bodies neither hang a connection nor pin memory.

The encoder here is a fake with a known cost per batch (the heads are real), so that latencies can be compared
with batch times and the texts that reach the encoder can be counted; the service runs on a real uvicorn on
127.0.0.1, since disconnects and stalled bodies only exist on real sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
import zlib

import httpx
import numpy as np
import pytest

from pragmeter.serve.app import create_app
from pragmeter.serve.batcher import MicroBatcher
from pragmeter.serve.limits import Limits
from pragmeter.testing.asgi import running

DIM = 16


class SlowModel:
    """An ImpScore whose encoder takes ``seconds`` per call (plus ``per_text`` per text), can be held with ``gate``
    or made to wait for one permit of ``steps`` per call, and records every batch it begins (``batches``) and every
    text it encodes; the heads are real ImpScore heads (seeded)."""

    encoder_name = "fake-encoder"
    backend = "fake"

    def __init__(self, seconds: float = 0.0, per_text: float = 0.0) -> None:
        import torch

        from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads

        torch.manual_seed(0)
        self.heads = ImpScoreHeads(HeadsConfig(DIM, dim=8))
        self.seconds, self.per_text = seconds, per_text
        self.gate = threading.Event()
        self.gate.set()
        self.steps: threading.Semaphore | None = None  # set: each call waits for a permit (test-released)
        self.started = 0  # encoder calls begun
        self.batches: list[list[str]] = []  # the texts of each call, as it begins
        self.encoded: list[str] = []
        self.batch_seconds: list[float] = []

    def signature(self) -> str:
        return "fake"

    def encode(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        self.started += 1
        began = time.perf_counter()
        self.gate.wait(60)
        if self.steps is not None:
            assert self.steps.acquire(timeout=60), "the test never released this batch"
        time.sleep(self.seconds + self.per_text * len(texts))
        self.encoded.extend(texts)
        self.batch_seconds.append(time.perf_counter() - began)
        return np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIM) for t in texts])


def health(base: str) -> dict:
    return httpx.get(base + "/health", timeout=10).json()


def wait_for(condition, seconds: float = 10, what: str = "condition") -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def raw_post(base: str, body: bytes, declared: int | None = None, path: str = "/score",
             chunked: bool = False) -> socket.socket:
    """A socket that has sent a POST's headers and ``body`` (all of it, or the start of a longer ``declared``;
    with ``chunked``, one chunk of a body of unknown length)."""
    port = int(base.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    if chunked:
        framing, body = "Transfer-Encoding: chunked", f"{len(body):x}\r\n".encode() + body + b"\r\n"
    else:
        framing = f"Content-Length: {len(body) if declared is None else declared}"
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 f"{framing}\r\n\r\n".encode() + body)
    return sock


def read_response(sock: socket.socket) -> tuple[int, dict, bytes]:
    """(status, headers, body) of the response on ``sock``, read until the server closes the connection."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:  # the server closed with unread body bytes: what it sent before is kept
        pass
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), headers, body


def texts_body(prefix: str, count: int) -> bytes:
    return json.dumps({"texts": [f"{prefix} sentence number {i}" for i in range(count)]}).encode()


# --- item 6: fairness between requests ---------------------------------------------------------------------------

def test_small_request_is_served_within_a_batch_or_two_behind_many_big_ones():
    """12 requests of 128 texts, then one of 2: with batches of 32 filled from the front of the queue the small one
    waited for all 48 batches; each batch shares its room between all waiting requests, so it waits for the batch
    in the encoder and is answered in the next. A lone big request still fills whole batches."""
    model = SlowModel(0.005)

    async def scenario() -> tuple[int, int]:
        batcher = MicroBatcher(model.encode, max_texts=32, max_wait_ms=0)
        await batcher.start()
        try:
            big = [asyncio.create_task(batcher.encode([f"big {i} {j}" for j in range(128)])) for i in range(12)]
            while model.started == 0:
                await asyncio.sleep(0.001)
            asked = model.started
            await batcher.encode(["small one", "small two"])
            waited = model.started - asked
            await asyncio.gather(*big)
            alone = model.started
            await batcher.encode([f"alone {j}" for j in range(128)])
            return waited, model.started - alone
        finally:
            await batcher.stop()

    waited, alone_batches = asyncio.run(scenario())
    assert waited <= 2, f"the 2-text request waited for {waited} encoder batches behind 12 big requests"
    assert alone_batches == 4


def test_batches_are_full_and_shared_equally():
    """Requests of 5, 100 and 100 texts with room for 64: the small one is taken whole and the two big ones split
    the rest; with more requests than room, the next batch starts with those the last one left out."""
    from pragmeter.serve.batcher import _Request

    loop = asyncio.new_event_loop()

    def queue(batcher: MicroBatcher, *counts: int) -> list[_Request]:
        requests = [_Request([f"text {i}" for i in range(count)], loop.create_future()) for count in counts]
        batcher._pending.extend(requests)
        batcher._queued_texts += sum(counts)
        return requests

    try:
        shared = MicroBatcher(lambda texts: np.zeros((len(texts), 1)), max_texts=64)
        queue(shared, 5, 100, 100)
        assert [end - start for _, start, end in shared._take()] == [5, 30, 29]
        assert shared.queued_texts == 141
        rotated = MicroBatcher(lambda texts: np.zeros((len(texts), 1)), max_texts=4)
        requests = queue(rotated, *[2] * 6)
        assert [r for r, _, _ in rotated._take()] == requests[:4]
        assert [r for r, _, _ in rotated._take()] == requests[4:] + requests[:2]
    finally:
        loop.close()


def test_abandoned_requests_are_not_encoded():
    """Six 128-text requests whose clients hang up while the encoder is busy: their texts leave the queue at once,
    none of them reaches the encoder, and a later small request is answered."""
    model = SlowModel()
    model.gate.clear()
    app = create_app(model, Limits(max_texts=128), max_batch=32, max_wait_ms=0)
    with running(app) as base:
        blocker: list = []
        thread = threading.Thread(target=lambda: blocker.append(
            httpx.post(base + "/score", content=texts_body("first", 32), timeout=60,
                       headers={"content-type": "application/json"})))
        thread.start()
        wait_for(lambda: model.started == 1, what="the first batch to reach the encoder")
        sockets = [raw_post(base, texts_body(f"abandoned {i}", 128)) for i in range(6)]
        wait_for(lambda: health(base)["queued_texts"] == 6 * 128, what="the abandoned texts to be queued")
        for sock in sockets:
            sock.close()
        wait_for(lambda: health(base)["queued_texts"] == 0, seconds=5, what="abandoned texts to leave the queue")
        model.gate.set()
        thread.join(60)
        assert blocker[0].status_code == 200
        small = httpx.post(base + "/score", json={"texts": ["still here", "and answered"]}, timeout=30)
        assert small.status_code == 200 and len(small.json()["scores"]) == 2
        assert not [text for text in model.encoded if text.startswith("abandoned")]
        assert health(base)["batcher"]["abandoned_requests"] == 6


def test_request_deadline_answers_503_and_drops_its_texts():
    """With --request-timeout 0.5 and the encoder stuck, a request is answered 503 (one line, Retry-After) within
    about its deadline, its texts leave the queue and are never encoded."""
    model = SlowModel()
    model.gate.clear()
    app = create_app(model, Limits(max_texts=128, request_timeout=0.5), max_batch=8, max_wait_ms=0)
    with running(app) as base:
        stuck = threading.Thread(target=lambda: httpx.post(base + "/score", json={"texts": ["in the encoder"]},
                                                           timeout=60))
        stuck.start()
        wait_for(lambda: model.started == 1, what="the first batch to reach the encoder")
        started = time.monotonic()
        late = httpx.post(base + "/score", json={"texts": ["late one", "late two"]}, timeout=30)
        elapsed = time.monotonic() - started
        assert late.status_code == 503 and 0.4 <= elapsed < 5
        detail = late.json()["detail"]
        assert "0.5 s" in detail and "\n" not in detail and int(late.headers["Retry-After"]) >= 1
        assert health(base)["queued_texts"] == 0
        model.gate.set()
        stuck.join(60)
        assert not [text for text in model.encoded if text.startswith("late")]
        assert health(base)["batcher"]["timed_out_requests"] >= 1


def test_small_request_is_answered_in_the_next_batch_under_load_with_big_and_abandoned_clients():
    """Over HTTP, the encoder released one batch at a time: four big clients (128 texts each) fill the queue, three
    clients send 128 texts and hang up while the encoder is busy, then a small client sends 2 texts. The small
    request rides in the very next batch and is answered while every big request still waits; the abandoned texts
    leave the queue and are never encoded; every answer is 200."""
    model = SlowModel()
    model.steps = threading.Semaphore(0)
    app = create_app(model, Limits(max_texts=128), max_batch=64, max_wait_ms=0)
    answers: dict[str, httpx.Response] = {}

    def client(tag: str, count: int) -> threading.Thread:
        thread = threading.Thread(target=lambda: answers.__setitem__(tag, httpx.post(
            base + "/score", json={"texts": [f"{tag} {j}" for j in range(count)]}, timeout=60)))
        thread.start()
        return thread

    with running(app) as base:
        big = [client(f"big {i}", 128) for i in range(4)]
        wait_for(lambda: model.started == 1 and health(base)["queued_texts"] == 4 * 128 - 64,
                 what="the first batch in the encoder and the big requests queued")
        sockets = [raw_post(base, texts_body(f"abandoned {i}", 128)) for i in range(3)]
        wait_for(lambda: health(base)["queued_texts"] == 4 * 128 - 64 + 3 * 128, what="the abandoned texts queued")
        for sock in sockets:
            sock.close()
        wait_for(lambda: health(base)["queued_texts"] == 4 * 128 - 64, what="the abandoned texts to leave the queue")
        small = client("small", 2)
        wait_for(lambda: health(base)["queued_texts"] == 4 * 128 - 64 + 2, what="the small request queued")
        model.steps.release()  # the batch in the encoder when the small request came ends
        wait_for(lambda: model.started == 2, what="the next batch to begin")
        assert {"small 0", "small 1"} <= set(model.batches[1]), "the small request waited behind the big ones"
        model.steps.release()
        small.join(60)
        assert answers["small"].status_code == 200 and len(answers["small"].json()["scores"]) == 2
        assert all(thread.is_alive() for thread in big) and not {f"big {i}" for i in range(4)} & answers.keys()
        for _ in range(4 * 128 // 64 + 1):  # the rest, in at most this many batches
            model.steps.release()
        for thread in big:
            thread.join(60)
        assert health(base)["batcher"]["abandoned_requests"] == 3
    assert [answers[f"big {i}"].status_code for i in range(4)] == [200] * 4
    assert not [text for text in model.encoded if text.startswith("abandoned")]


# --- item 7: bodies --------------------------------------------------------------------------------------------

def test_stalled_body_is_cut_off_with_408():
    """A client that sends the headers and part of a body and then stops gets 408 after --body-timeout, and the
    connection is closed; the bytes it had sent are released."""
    app = create_app(SlowModel(), Limits(body_timeout=0.5))
    with running(app) as base:
        sock = raw_post(base, b'{"texts": ["a sentence that never', declared=5000)
        started = time.monotonic()
        status, headers, body = read_response(sock)
        sock.close()
        assert status == 408 and time.monotonic() - started < 10
        detail = json.loads(body)["detail"]
        assert "0.5 s" in detail and "\n" not in detail and headers.get("connection") == "close"
        assert health(base)["buffered_body_bytes"] == 0


def test_buffered_bodies_are_bounded_across_connections():
    """Bodies being read count against one budget: while two stalled bodies hold most of it, a third body that
    would pass it gets 503 at once; when the stalled clients hang up or time out the bytes are released and new
    requests are served."""
    limits = Limits(max_body_bytes=100_000, max_buffered_bytes=150_000, body_timeout=3)
    app = create_app(SlowModel(), limits)
    with running(app) as base:
        first = raw_post(base, b"x" * 70_000, declared=90_000)
        wait_for(lambda: health(base)["buffered_body_bytes"] == 70_000, what="the first body to be buffered")
        second = raw_post(base, b"x" * 60_000, declared=70_000)
        wait_for(lambda: health(base)["buffered_body_bytes"] == 130_000, what="the second body to be buffered")
        for third in (raw_post(base, b"x" * 10_000, declared=40_000),  # refused on its Content-Length
                      raw_post(base, b"x" * 30_000, chunked=True)):  # refused when its bytes pass the bound
            status, headers, body = read_response(third)
            third.close()
            assert status == 503 and int(headers["retry-after"]) >= 1
            assert "130000 bytes of buffered request bodies (the limit is 150000)" in json.loads(body)["detail"]
            assert health(base)["buffered_body_bytes"] == 130_000
        first.close()  # hangs up mid-body: its bytes are released at once
        wait_for(lambda: health(base)["buffered_body_bytes"] == 60_000, seconds=5, what="a hang-up's release")
        status, _, _ = read_response(second)  # the other one times out
        second.close()
        assert status == 408
        assert health(base)["buffered_body_bytes"] == 0
        assert httpx.post(base + "/score", json={"texts": ["served again"]}, timeout=30).status_code == 200


def test_heap_is_trimmed_when_many_buffered_bytes_are_released(monkeypatch):
    """glibc keeps freed chunks resident: 400 stalled 1 MB bodies left the server ~400 MB larger after they were
    gone. Once the bodies held fall back to none after 16 MiB or more were released, the heap is trimmed."""
    from pragmeter.serve import limits as limits_module

    trims: list[int] = []
    monkeypatch.setattr(limits_module, "_trim_heap", lambda: trims.append(1))
    budget = limits_module.BodyBudget(64 << 20)
    assert budget.take(10 << 20)
    budget.release(10 << 20)
    assert trims == []  # 10 MiB released: not worth a trim
    assert budget.take(10 << 20) and budget.take(1 << 20) and not budget.take(54 << 20)
    budget.release(10 << 20)
    assert trims == []  # a body is still held
    budget.release(1 << 20)
    assert trims == [1] and budget.held == 0
    limits_module._trim_heap()  # the real one runs (glibc) or does nothing (elsewhere)


# --- connections: header and keep-alive timeouts, a cap, loopback names (issue 47, item 5) --------------------------

HALF_HEAD = b"POST /score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"


def connect(base: str, timeout: float = 10) -> socket.socket:
    return socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])), timeout=timeout)


def one_response(sock: socket.socket) -> tuple[int, bytes]:
    """(status, body) of one response on a connection that stays open (read to its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += sock.recv(65536)
    return int(head.split()[1]), body


def test_half_sent_headers_are_cut_off_with_408():
    """A connection that sent part of its headers stayed open for ever (~20,000 of them exhausted the file
    descriptors): headers must arrive within --header-timeout of connecting, or of the previous answer on a
    kept-alive connection, however slowly they trickle; then 408 and the connection is closed."""
    app = create_app(SlowModel(), Limits(header_timeout=0.5))
    with running(app) as base:
        stalled = connect(base)
        stalled.sendall(HALF_HEAD)
        status, headers, body = read_response(stalled)  # the server closes it (a 10 s socket timeout otherwise)
        stalled.close()
        assert status == 408 and headers["connection"] == "close"
        assert json.loads(body)["detail"] == "the request headers did not arrive within 0.5 s (the header timeout)"

        kept = connect(base)  # a first request answered, then the next one's headers stall
        kept.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert one_response(kept)[0] == 200
        kept.sendall(HALF_HEAD)
        assert read_response(kept)[0] == 408
        kept.close()

        silent = connect(base)  # a connection that sent nothing is closed without an answer
        assert silent.recv(1) == b""
        silent.close()

        trickle, sent = connect(base), 0  # one byte at a time does not reset the deadline
        with pytest.raises(OSError):  # the server closed the connection long before 2,000 bytes
            for sent in range(2000):  # noqa: B007
                trickle.send(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"[sent % 40: sent % 40 + 1]
                             if sent < 40 else b"x")
                time.sleep(0.01)
        trickle.close()
        assert sent < 2000
        assert httpx.get(base + "/health", timeout=10).status_code == 200


def test_an_idle_kept_alive_connection_is_closed_after_the_keep_alive_timeout():
    app = create_app(SlowModel(), Limits(keep_alive_timeout=0.2))
    with running(app) as base:
        sock = connect(base, timeout=3)  # uvicorn's own default (5 s) would outlast the socket's timeout
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert one_response(sock)[0] == 200
        assert sock.recv(1) == b""  # closed by the server, having sent nothing more
        sock.close()


def test_connections_past_the_cap_are_answered_503_at_once():
    """Past --max-connections a new connection is answered 503 with Retry-After and closed at once (it used to be
    accepted until the process ran out of file descriptors); when held connections close, clients are served."""
    app = create_app(SlowModel(), Limits(max_connections=20, header_timeout=60))
    with running(app) as base:
        held = []
        for _ in range(20):
            held.append(connect(base))
            held[-1].sendall(HALF_HEAD)
        # accepted in the order they connected, so a connection made now is the 21st the server sees
        refused = httpx.get(base + "/health", timeout=10)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["detail"] == "the service has 20 open connections (its limit); retry in 1 s"
        for sock in held[:5]:
            sock.close()
        wait_for(lambda: httpx.get(base + "/health", timeout=10).status_code == 200, what="room after closing")
        for sock in held[5:]:
            sock.close()


@pytest.mark.parametrize("headers, status", [
    ({}, 200), ({"Host": "localhost:{port}"}, 200), ({"Host": "[::1]:{port}"}, 200),
    ({"Origin": "http://localhost:{port}"}, 200),
    ({"Host": "localhost"}, 200),
    ({"Host": "rebound.example:{port}"}, 403), ({"Host": "127.0.0.1:1"}, 403), ({"Host": "rebound.example"}, 403),
    ({"Origin": "http://rebound.example:{port}"}, 403), ({"Origin": "http://localhost"}, 403),
    ({"Origin": "null"}, 403)],
    ids=["default", "localhost", "ipv6", "own-origin", "no-port", "rebound-host", "other-port", "rebound-no-port",
         "rebound-origin", "other-local-origin", "null-origin"])
def test_a_service_on_loopback_answers_only_its_own_names(headers, status):
    """DNS rebinding: a web page whose domain now points at 127.0.0.1 makes the browser send requests with its own
    name as Host (and Origin); a service bound to loopback answers only localhost, 127.0.0.1 or [::1] on its port."""
    app = create_app(SlowModel(), loopback_only=True)
    with running(app) as base:
        port = base.rsplit(":", 1)[1]
        answer = httpx.post(base + "/score", json={"texts": ["Is the pope Catholic?"]}, timeout=10,
                            headers={name: value.format(port=port) for name, value in headers.items()})
        assert answer.status_code == status, answer.text
        if status == 403:
            detail = answer.json()["detail"]
            assert detail.startswith("this service listens on loopback only and answers requests addressed to "
                                     f"localhost, 127.0.0.1 or [::1] on port {port}, not ")
            assert "\n" not in detail


FLOOD_SERVER = """
import importlib.util, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
spec = importlib.util.spec_from_file_location("test_serve_fairness", sys.argv[1])
tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tests)
SlowModel = tests.SlowModel
from pragmeter.serve.app import create_app
from pragmeter.serve.limits import Limits
from pragmeter.serve.listen import listening_socket
from pragmeter.serve.server import service_server

sock = listening_socket("127.0.0.1", 0)
server = service_server(create_app(SlowModel(), Limits(header_timeout=60)))
print(sock.getsockname()[1], flush=True)
server.run(sockets=[sock])
"""


def test_a_flood_of_stalled_connections_under_a_low_file_limit():
    """300 connections that never finish their headers against a server that may open 256 files: the cap is
    lowered to fit (one warning), the surplus is answered 503, a normal client gets an answer throughout, and the
    log stays a few lines (it grew 158 MB of "Too many open files" tracebacks in 40 s)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": str(here.parents[1] / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    server = subprocess.Popen([sys.executable, "-c", FLOOD_SERVER, str(Path(__file__).resolve())], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    flood = []
    try:
        base = f"http://127.0.0.1:{int(server.stdout.readline())}"
        wait_for(lambda: health(base)["status"] == "ok", seconds=60, what="the server to start")
        for _ in range(300):
            sock = connect(base)
            sock.sendall(HALF_HEAD)
            flood.append(sock)
        during = httpx.get(base + "/health", timeout=10)
        assert during.status_code == 503 and "open connections (its limit)" in during.json()["detail"]
        for sock in flood:
            sock.close()
        flood.clear()
        wait_for(lambda: httpx.get(base + "/health", timeout=10).status_code == 200, seconds=30,
                 what="the service to recover")
    finally:
        for sock in flood:
            sock.close()
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert "Traceback" not in err, err[-3000:]
    lines = err.strip().splitlines()
    assert len(lines) <= 8, err[-3000:]
    assert any("the process may open 256 files (ulimit -n): at most 128 connections are served at once, not 1024"
               in line for line in lines), err


@contextlib.contextmanager
def connection_log(now: list[float]):
    """(the records the service's connection log passes, an event loop) with a once-a-minute filter on the clock
    ``now[0]``."""
    import logging

    from pragmeter.serve.connections import OncePerCondition, log

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    once = OncePerCondition(every=60, clock=lambda: now[0])
    log.addFilter(once)
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.INFO)  # a server run earlier set it to its own level
    loop = asyncio.new_event_loop()
    try:
        yield records, loop
    finally:
        loop.close()
        log.setLevel(level)
        log.removeFilter(once)
        log.removeHandler(handler)


OUT_OF_FILES = ("the service is out of file descriptors or memory (Too many open files); new connections wait until "
                "some close (raise the limit, ulimit -n, or lower the connection cap)")


def test_a_repeated_condition_is_logged_once_a_minute_on_one_line():
    """Every failed accept logged a traceback (158 MB in 40 s): the event loop's errors are one line each, and a
    condition repeated within a minute is held back and counted in its next line."""
    import errno

    from pragmeter.serve.connections import log, loop_exception_handler

    now = [0.0]
    emfile = {"message": "socket.accept() out of system resource",
              "exception": OSError(errno.EMFILE, "Too many open files")}
    with connection_log(now) as (records, loop):
        for _ in range(1000):
            loop_exception_handler(loop, emfile)
            now[0] += 0.05  # 1000 in 50 s
        log.warning("refused a connection: %d are open, the limit is %d", 20, 20)
        log.warning("refused a connection: %d are open, the limit is %d", 21, 20)  # the same condition
        now[0] = 61.0
        loop_exception_handler(loop, emfile)
    assert all(record.exc_info is None for record in records)  # no traceback
    assert [record.getMessage() for record in records] == [
        OUT_OF_FILES, "refused a connection: 20 are open, the limit is 20",
        f"{OUT_OF_FILES} (999 more like this in the last 61 s)"]


def test_other_event_loop_errors_are_one_line_per_kind():
    from pragmeter.serve.connections import loop_exception_handler

    with connection_log([0.0]) as (records, loop):
        for _ in range(100):
            loop_exception_handler(loop, {"message": "Task exception was never retrieved",
                                          "exception": ValueError("bad")})
            loop_exception_handler(loop, {"message": "Task exception was never retrieved",
                                          "exception": KeyError("k")})
            loop_exception_handler(loop, {"message": "Exception in callback"})
    assert [record.getMessage() for record in records] == [
        "event loop: Task exception was never retrieved (ValueError: bad)",
        "event loop: Task exception was never retrieved (KeyError: 'k')", "event loop: Exception in callback"]
