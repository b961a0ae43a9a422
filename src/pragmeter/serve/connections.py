"""The service's connections: a deadline for request headers, a cap on open connections, file descriptors enough for
that cap, and logs that say each condition once a minute rather than once per connection.

uvicorn times out an idle keep-alive connection, but never a connection that has sent part of its headers: each such
connection held a file descriptor for ever, ~20,000 of them exhausted the process's descriptors, and every failed
accept logged a traceback. Here a connection must send its request headers within ``header_timeout`` seconds of
connecting or of its previous response (408, closed; silently closed when it sent nothing), at most
``max_connections`` are open at once and ``max_client_connections`` from one client address, so that one client
cannot hold every slot (past either a new one is answered 503 and closed at once), and the process's
descriptor limit is raised to fit the cap (the cap is lowered, in one warning, where it cannot be).
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import time
from collections import OrderedDict

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("uvicorn.error")  # the service's connection log, beside uvicorn's own (same level, same stream)

# Descriptors kept free beside the connections: the listening socket, the event loop, model files, thread pipes, and
# connections accepted in one burst before the cap closes them.
RESERVED_DESCRIPTORS = 256


class OncePerCondition(logging.Filter):
    """Pass the first record of each condition (its message template, its ``condition`` extra, and its exception's
    type and errno), then none of the same for ``every`` seconds; the next one passed says how many were held
    back."""

    MAX_CONDITIONS = 256

    def __init__(self, every: float = 60.0, clock=time.monotonic) -> None:
        super().__init__()
        self.every, self.clock = every, clock
        self._seen: OrderedDict[tuple, list] = OrderedDict()  # condition -> [first passed at, held back since]

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        key = (record.name, str(record.msg), getattr(record, "condition", None),
               type(error).__name__ if error else None, getattr(error, "errno", None))
        now = self.clock()
        seen = self._seen.get(key)
        if seen is not None and now - seen[0] < self.every:
            seen[1] += 1
            return False
        if seen is not None and seen[1]:
            record.msg = f"{record.getMessage()} ({seen[1]} more like this in the last {now - seen[0]:.0f} s)"
            record.args = None
        self._seen[key] = [now, 0]
        self._seen.move_to_end(key)
        while len(self._seen) > self.MAX_CONDITIONS:
            self._seen.popitem(last=False)
        return True


def loop_exception_handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The event loop's errors on one line each (rate-limited by the log's filter): out of file descriptors when
    accepting (asyncio logged a traceback per attempt; it pauses accepting for a second and tries again), anything
    else with its message and exception."""
    error = context.get("exception")
    if isinstance(error, OSError) and error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
        log.error("the service is out of file descriptors or memory (%s); new connections wait until some close "
                  "(raise the limit, ulimit -n, or lower the connection cap)", error.strerror or error)
        return
    message = context.get("message", "error")
    kind = type(error).__name__ if error is not None else None
    log.error("event loop: %s%s", message, f" ({kind}: {error})" if error is not None else "",
              exc_info=error if error is not None and log.isEnabledFor(logging.DEBUG) else None,
              extra={"condition": (message, kind)})


def connection_cap(max_connections: int) -> int:
    """The connection cap the process's descriptor limit allows: the soft limit is raised (up to the hard one) to fit
    ``max_connections`` plus a reserve; where it cannot be, the cap is lowered to fit, with one warning. (A burst of
    connections accepted at once may still pass the limit for a moment: asyncio then pauses accepting for a second,
    logged once.)"""
    try:
        import resource
    except ImportError:  # not a Unix
        return max_connections
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max_connections + RESERVED_DESCRIPTORS
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY else min(hard, wanted),
                                                        hard))
        except (ValueError, OSError):
            pass
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return max_connections
    cap = soft - RESERVED_DESCRIPTORS if soft > 2 * RESERVED_DESCRIPTORS else max(1, soft // 2)
    log.warning("the process may open %d files (ulimit -n): at most %d connections are served at once, not %d",
                soft, cap, max_connections)
    return cap


def protocol_class(header_timeout: float, max_connections: int,
                   max_client_connections: int | None = None) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the header deadline and the connection caps (in all, per client address; None:
    the cap in all alone)."""
    return type("ServiceProtocol", (_ServiceProtocol,), {
        "header_timeout": header_timeout, "max_connections": max_connections,
        "max_client_connections": max_client_connections or max_connections})


def _response(status: int, reason: str, detail: str, retry_after: int | None = None) -> bytes:
    body = json.dumps({"detail": detail}).encode()
    extra = f"retry-after: {retry_after}\r\n" if retry_after is not None else ""
    return (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"connection: close\r\n{extra}\r\n").encode() + body


class _ServiceProtocol(H11Protocol):
    header_timeout: float = 10.0
    max_connections: int = 1024
    max_client_connections: int = 1024

    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            log.warning("refused a connection: %d are open, the limit is %d", len(self.connections) - 1,
                        self.max_connections)
            self._close_with(_response(503, "Service Unavailable", f"the service has {self.max_connections} open "
                                       "connections (its limit); retry in 1 s", retry_after=1))
            return
        host = self.client[0] if self.client else None
        if host is not None and len(self.connections) > self.max_client_connections:  # counted only when it can bind
            mine = sum(1 for other in self.connections if other.client and other.client[0] == host)
            if mine > self.max_client_connections:
                log.warning("refused a connection from %s: it has %d open, the limit per client is %d", host,
                            mine - 1, self.max_client_connections, extra={"condition": "client cap"})
                self._close_with(_response(503, "Service Unavailable", f"this client has "
                                           f"{self.max_client_connections} open connections (the limit per client); "
                                           "retry in 1 s", retry_after=1))
                return
        self._arm_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()  # the next request's headers, on a kept-alive connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        """Close the connection if it is still waiting for the request's headers (h11's client state is IDLE until
        a whole request head has arrived); a request past its headers is the body timeout's and the app's."""
        self._header_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if not self.conn.trailing_data[0]:  # nothing sent: closed quietly, as an idle keep-alive connection is
            self._close_with(b"")
            return
        log.warning("closed a connection that did not send its request headers within %g s", self.header_timeout)
        self._close_with(_response(408, "Request Timeout", f"the request headers did not arrive within "
                                   f"{self.header_timeout:g} s (the header timeout)"))

    def _close_with(self, response: bytes) -> None:
        self._cancel_header_timer()
        if response:
            self.transport.write(response)
        self.transport.close()
