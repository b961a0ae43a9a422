"""An app from ``create_app`` (the ImpScore service, or one built around a fake model) on the service's real uvicorn
server (its connection limits included) at a free 127.0.0.1 port, in a thread of this process: for tests that need
real sockets (disconnects, stalled bodies or headers, a browser)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def running(app, timeout: float = 60) -> Iterator[str]:
    """Serve ``app`` while the block runs; yields its base URL (``http://127.0.0.1:PORT``, no trailing slash)."""
    from pragmeter.serve.server import service_server

    server = service_server(app, host="127.0.0.1", port=0, log_level="error")
    thread = threading.Thread(target=server.run, daemon=True, name="pragmeter-test-uvicorn")
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
