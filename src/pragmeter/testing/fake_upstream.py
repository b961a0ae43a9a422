"""A file server on 127.0.0.1 standing in for the upstream hosts of ``pragmeter data fetch``: it serves ``files``
(relative path -> bytes) at ``/relative`` with HTTP Range, and ``modes`` (relative -> mode) make one file misbehave:

- ``"cut"``: the next whole-file answer stops halfway (the connection drops); later answers are whole;
- ``"endless"``: bytes without end and no Content-Length;
- ``"long"``: announces and sends more bytes than the file has;
- ``"drip"``: a byte every 50 ms;
- ``"lying range"``: a resume answered 206 with the whole file and a Content-Range that says so;
- ``"gzip"``: gzip-encoded, whole or ranged; ``"br"``: an encoding the client did not ask for.

Every request's path and Range header is kept in ``requests``, the bytes streamed per file in ``sent``; a path it
does not serve is answered 404. Use it as a context manager: it serves on a thread until the block ends."""

from __future__ import annotations

import gzip
import http.server
import threading
import time


class FakeUpstream(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, files: dict[str, bytes]):
        self.files, self.modes, self.requests, self.sent = dict(files), {}, [], {}
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def __enter__(self) -> "FakeUpstream":
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the name http.server calls)
        server: FakeUpstream = self.server
        relative = self.path.lstrip("/")
        asked = self.headers.get("Range")
        server.requests.append((relative, asked))
        body, mode = server.files.get(relative), server.modes.get(relative)
        if body is None:
            self.send_error(404)
            return
        start = int(asked.removeprefix("bytes=").rstrip("-")) if asked else 0
        if mode == "endless":
            self.send_response(206 if asked else 200)
            if asked:  # an honest Content-Range, then more bytes than it says
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.end_headers()
            self.close_connection = True
            self._stream(lambda: b"x" * 65536, seconds=10)
            return
        if mode == "drip":
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.close_connection = True
            self._stream(iter(body[i:i + 1] for i in range(len(body))).__next__, seconds=10, pause=0.05)
            return
        if mode == "lying range" and asked:
            self.send_response(206)
            self.send_header("Content-Range", f"bytes 0-{len(body) - 1}/{len(body)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if mode == "long":
            body = body + b"x" * 10_000
        if mode in ("gzip", "br"):
            payload = gzip.compress(body[start:])
            self.send_response(206 if asked else 200)
            if asked:
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            self.send_header("Content-Encoding", mode)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        self.send_response(206 if asked else 200)
        if asked:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        if mode == "cut" and not asked:
            server.modes.pop(relative)
            self.wfile.write(body[:len(body) // 2])  # then the connection drops
            self.close_connection = True
            return
        self.wfile.write(body[start:])

    def _stream(self, next_block, seconds: float, pause: float = 0.0) -> None:
        """Send blocks until the client hangs up or ``seconds`` pass (so a client without bounds ends too)."""
        server: FakeUpstream = self.server
        relative = self.path.lstrip("/")
        end = time.monotonic() + seconds
        try:
            while time.monotonic() < end:
                block = next_block()
                self.wfile.write(block)
                self.wfile.flush()
                server.sent[relative] = server.sent.get(relative, 0) + len(block)
                time.sleep(pause)
        except (OSError, StopIteration):
            pass

    def log_message(self, *args) -> None:
        pass
