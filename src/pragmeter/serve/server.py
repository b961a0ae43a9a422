"""``pragmeter serve``: bind, load and warm the model, then serve it with uvicorn until stopped."""

from __future__ import annotations

import asyncio
import logging
import math

import uvicorn

from pragmeter.errors import InvalidParameter
from pragmeter.serve.app import create_app
from pragmeter.serve.connections import OncePerCondition, connection_cap, log, loop_exception_handler, protocol_class
from pragmeter.serve.hosts import is_loopback
from pragmeter.serve.limits import Limits
from pragmeter.serve.listen import listening_socket


class ServiceServer(uvicorn.Server):
    """uvicorn's server whose event-loop errors and connection log say each condition once a minute, on one line."""

    async def serve(self, sockets=None) -> None:
        asyncio.get_running_loop().set_exception_handler(loop_exception_handler)
        once = OncePerCondition()
        log.addFilter(once)
        try:
            await super().serve(sockets=sockets)
        finally:
            log.removeFilter(once)


def service_server(app, log_level: str = "warning", **config) -> ServiceServer:
    """The uvicorn server for a service app from ``create_app``, with its connection limits (``app.state.limits``):
    header and keep-alive timeouts, the connection cap (within the process's descriptor limit), no WebSocket
    upgrades; ``config`` goes to uvicorn.Config (host, port)."""
    limits: Limits = app.state.limits
    settings = uvicorn.Config(app, log_level=log_level, ws="none", timeout_keep_alive=limits.keep_alive_timeout,
                              **config)  # configures uvicorn's log, which the cap's warning goes to
    cap = connection_cap(limits.max_connections)
    settings.http = protocol_class(limits.header_timeout, cap, min(cap, limits.max_client_connections))
    return ServiceServer(settings)


def check_settings(port: int, limits: Limits, max_batch: int, max_wait_ms: float) -> None:
    """Refuse a setting the service cannot run with, in one line naming its ``pragmeter serve`` option."""
    counts = {**limits.to_dict(), "max_batch": max_batch}
    for name in ("max_texts", "max_chars", "max_body_bytes", "max_batch", "max_queued_texts", "max_buffered_bytes",
                 "max_connections", "max_client_connections"):
        if counts[name] < 1:
            raise InvalidParameter(name, counts[name], "must be positive")
    for name in ("request_timeout", "body_timeout", "header_timeout", "keep_alive_timeout", "stall_timeout"):
        if not (math.isfinite(counts[name]) and counts[name] > 0):
            raise InvalidParameter(name, counts[name], "must be a positive number of seconds")
    if not 0 <= port <= 65535:
        raise InvalidParameter("port", port, "must be in 0..65535")
    if not (math.isfinite(max_wait_ms) and max_wait_ms >= 0):
        raise InvalidParameter("max_wait_ms", max_wait_ms, "must be >= 0")


def service_interpreter(name: str | None = None, device: str | None = None):
    """The interpreter the service answers ``/interpret`` with, loaded and warm: opened as every command opens a model
    folder (:meth:`pragmeter.interpreter.model.Interpreter.load`, what
    :func:`pragmeter.classify.opening.open_classifier` runs for an interpreter), with its own runtime (OpenVINO on a
    CPU, torch on a GPU ``device``), converted once."""
    from pragmeter.interpreter.model import Interpreter

    reader = Interpreter.load(name, device=device, progress=False)
    reader.predict([("Warm up the interpreter.", "It is warm.")])
    return reader


def serve(model: str | None, host: str, port: int, limits: Limits, *, backend: str = "auto", precision: str = "auto",
          device: str | None = None, max_batch: int = 256, max_wait_ms: float = 2.0, log_level: str = "warning",
          interpreter: str | None = None, with_interpreter: bool = True) -> None:
    """Serve the ImpScore ``model`` on ``host:port`` (0: any free port) until stopped, and the ``interpreter``
    (:meth:`pragmeter.interpreter.model.Interpreter.load`'s name: None is the packaged default) on ``/interpret``
    unless ``with_interpreter`` is False; the URL served is said (the ``pragmeter`` logger) once the models are
    loaded and warm."""
    from pragmeter.impscore.model import ImpScore

    check_settings(port, limits, max_batch, max_wait_ms)
    # Bind before loading the model: a busy port fails at once, and the URL printed is the one really served.
    sock = listening_socket(host, port)
    try:
        impscore = ImpScore.load(model, backend=backend, precision=precision, device=device)
        impscore.encode(["warm up the encoder"])  # export/load now, not on the first request
        reader = service_interpreter(interpreter, device) if with_interpreter else None
        host, port = sock.getsockname()[:2]
        app = create_app(impscore, limits, max_batch=max_batch, max_wait_ms=max_wait_ms,
                         loopback_only=is_loopback(host), interpreter=reader)
        server = service_server(app, log_level=log_level)
        shown = f"[{host}]" if ":" in host else host
        said = "" if reader is None else f"; interpreter {reader.name} ({reader.runtime.signature()})"
        logging.getLogger("pragmeter").info("pragmeter serve: %s%s on http://%s:%s/", impscore.signature(), said, shown,
                                            port)
        server.run(sockets=[sock])
    finally:
        sock.close()
