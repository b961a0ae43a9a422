"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests, benchmarks and dry runs of the harness.

``responder(request_json) -> str | None`` writes each answer (None = null content). Asked for ``logprobs``,
the server returns the first token's ``top_logprobs``: the responder's ``(text, [(token, logprob), …])`` pair,
or by default the answer's first word-piece (up to 4 letters, as a tokenizer would cut it) at log 0.9 with two
distractor tokens. ``GET /health`` answers 200 like llama.cpp's. Optional latency per request, and fault
injection: with probability ``fault_rate`` a request gets one of ``faults``:
"429" (with Retry-After), "500", "timeout" (hangs past the client's timeout), "drop" (closes the connection
without answering), "null" (200 with null content) or "trickle" (a 200 answer sent one byte every ``trickle``
seconds, so every read succeeds but the whole answer takes minutes; not in the default mix). Every request is counted per prompt (``calls``).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import socket
import sys
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("429", "500", "timeout", "drop", "null")
_FIRST_PIECE = re.compile(r"\s*(\w{1,4}|\S)")


def prompt_key(messages: list[dict]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def default_alternatives(text: str | None) -> list[tuple[str, float]]:
    """The first token's alternatives of a scripted answer: its first word-piece, likeliest, then distractors."""
    found = _FIRST_PIECE.match(text or "")
    first = [(found.group(0), math.log(0.9))] if found else []
    return first + [("The", math.log(0.05)), ("\n", math.log(0.02))]


def completion_payload(request: dict, answer) -> dict:
    """An OpenAI chat.completion body for ``answer`` (text, or (text, alternatives)), with logprobs if asked."""
    text, alternatives = answer if isinstance(answer, tuple) else (answer, None)
    choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
    if request.get("logprobs"):
        alternatives = default_alternatives(text) if alternatives is None else alternatives
        top = [{"token": token, "logprob": logprob} for token, logprob in alternatives][: request.get("top_logprobs")]
        choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}] if top else []}
    return {"id": "fake", "object": "chat.completion", "model": request.get("model"), "choices": [choice]}


class _QuietServer(ThreadingHTTPServer):
    """Serves each connection in a thread that :meth:`close` ends and joins, so nothing a test started outlives it.

    A client that hangs up mid-answer (a timeout, a killed run: what the fault tests do on purpose) is not an error
    of the fake server, and neither is a connection cut by :meth:`close`: no traceback on stderr for either."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, *args, **kwargs):
        self.stopping = threading.Event()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request_thread(self, request, client_address):
        with self._open_lock:
            self._open.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._open_lock:
                self._open.discard(request)

    def handle_error(self, request, client_address) -> None:
        if not (self.stopping.is_set() or isinstance(sys.exc_info()[1], ConnectionError)):
            super().handle_error(request, client_address)

    def close(self) -> None:
        """Stop serving, cut every open connection (a kept-alive one would block its thread forever), join the
        threads."""
        self.stopping.set()
        self.shutdown()
        with self._open_lock:
            for connection in self._open:
                try:
                    connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self.server_close()


class FakeChatServer:
    def __init__(self, responder: Callable[[dict], str | None], latency: float = 0.0, fault_rate: float = 0.0,
                 faults: tuple[str, ...] = FAULTS, retry_after: str = "1", hang: float = 2.0, seed: int = 0,
                 port: int = 0, logprobs: bool = True, trickle: float = 0.2):
        self.responder, self.latency = responder, latency
        self.logprobs = logprobs  # False: a server that ignores logprobs requests (as some do)
        self.fault_rate, self.faults, self.retry_after, self.hang = fault_rate, faults, retry_after, hang
        self.trickle = trickle
        self.calls: Counter[str] = Counter()
        self.faults_sent: Counter[str] = Counter()
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def _pick_fault(self) -> str | None:
        with self._lock:
            if self.fault_rate and self._random.random() < self.fault_rate:
                fault = self._random.choice(self.faults)
                self.faults_sent[fault] += 1
                return fault
        return None

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, payload: dict, headers: dict | None = None, trickle: float = 0.0) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                if not trickle:
                    self.wfile.write(body)
                    return
                for index in range(len(body)):
                    self.wfile.write(body[index:index + 1])
                    self.wfile.flush()
                    if server._server.stopping.wait(trickle):
                        return

            def do_GET(self):  # noqa: N802 (http.server naming)
                if self.path.rstrip("/") == "/health":
                    self._send(200, {"status": "ok"})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self):  # noqa: N802 (http.server naming)
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._lock:
                    server.calls[prompt_key(request.get("messages", []))] += 1
                fault = server._pick_fault()
                if server.latency and server._server.stopping.wait(server.latency):
                    return
                if fault == "429":
                    self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": server.retry_after})
                elif fault == "500":
                    self._send(500, {"error": {"message": "internal error"}})
                elif fault == "timeout":
                    server._server.stopping.wait(server.hang)
                    self.close_connection = True
                elif fault == "drop":
                    self.close_connection = True  # no response at all
                else:
                    answer = None if fault == "null" else server.responder(request)
                    if not server.logprobs:
                        request = {k: v for k, v in request.items() if k not in ("logprobs", "top_logprobs")}
                    self._send(200, completion_payload(request, answer),
                               trickle=server.trickle if fault == "trickle" else 0.0)

        return Handler

    def start(self) -> "FakeChatServer":
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is None:  # never served: shutdown() would wait for a loop that never ran
            self._server.server_close()
            return
        self._server.close()
        self._thread = None

    def __enter__(self) -> "FakeChatServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def constant(text: str | None) -> Callable[[dict], str | None]:
    return lambda request: text


def non_negative_seconds(value: str) -> float:
    """argparse type of LATENCY: a finite number of seconds >= 0."""
    import argparse

    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {value!r}")
    return seconds


def serve_main(argv: list[str] | None = None) -> None:
    """``python -m pragmeter.testing.fake_server TEXT [LATENCY] [--port N]``: answer every request with TEXT (dry
    runs of the harness); prints the server's URL, then serves until interrupted."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m pragmeter.testing.fake_server",
        description="A scripted OpenAI-compatible chat server on 127.0.0.1 that answers every request with TEXT "
                    "(dry runs: pragmeter eval --model openai-chat --model-args base_url=URL,model=fake). Prints its "
                    "URL, then serves until interrupted (Ctrl-C).")
    parser.add_argument("text", metavar="TEXT", help="the answer to every request, e.g. Neutral")
    parser.add_argument("latency", metavar="LATENCY", nargs="?", type=non_negative_seconds, default=0.0,
                        help="seconds each answer waits (default 0)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    args = parser.parse_args(argv)
    try:
        server = FakeChatServer(constant(args.text), latency=args.latency, port=args.port)
    except OSError as error:
        parser.error(f"cannot listen on 127.0.0.1:{args.port}: {error.strerror or error}")
    with server as fake:
        print(fake.url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    serve_main()
