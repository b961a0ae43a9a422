"""Request limits of the ImpScore service: texts per request, characters per text, bytes per body, buffered
bodies, seconds to send the headers and the body and to wait for an answer, queued texts, open connections (in all
and per client address), and how long one encoder batch may run before the service reports itself stalled.

Too large → 413 with a message naming the limit; malformed or unencodable text → 422; a body not sent in time →
408; queue full, too many bytes of bodies buffered or no answer in time → 503 with Retry-After (see
``pragmeter.serve.app``).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from fastapi import HTTPException

from pragmeter.text import is_blank, unencodable_reason


@dataclass(frozen=True)
class Limits:
    max_texts: int = 128  # per request (a pair in /distance counts as two texts)
    max_chars: int = 2000  # per text
    max_body_bytes: int = 1 << 20
    max_queued_texts: int = 4096  # waiting for the encoder across all requests (more → 503 with Retry-After)
    request_timeout: float = 60.0  # seconds a request waits for the encoder before 503 (its texts leave the queue)
    body_timeout: float = 10.0  # seconds to receive a whole body (slower → 408, connection closed)
    max_buffered_bytes: int = 64 << 20  # bytes of bodies held at once across connections (more → 503)
    header_timeout: float = 10.0  # seconds to send a request's headers from connecting or the last answer (→ 408)
    keep_alive_timeout: float = 5.0  # seconds an idle kept-alive connection stays open
    max_connections: int = 1024  # open at once (more → 503 at once, connection closed)
    max_client_connections: int = 256  # open at once from one client address (more → 503 at once, closed)
    stall_timeout: float = 120.0  # seconds one encoder batch may run before /health answers 503 (a hung encoder)

    def to_dict(self) -> dict:
        return asdict(self)

    def check(self, texts: list[str], field: str = "texts", count: int | None = None,
              where: Callable[[int], str] | None = None) -> None:
        """413 when there are too many texts or one is too long, 422 when one is blank or unencodable;
        ``where(index)`` names a text in messages (default ``field[index]``)."""
        count = len(texts) if count is None else count
        where = where or (lambda index: f"{field}[{index}]")
        if count > self.max_texts:
            raise HTTPException(413, f"too many texts: {count} in '{field}', the limit is {self.max_texts} "
                                     "per request (split the request)")
        for index, text in enumerate(texts):
            if len(text) > self.max_chars:
                raise HTTPException(413, f"{where(index)} has {len(text)} characters, the limit is "
                                         f"{self.max_chars} per text")
            if is_blank(text):  # only spaces or invisible characters (U+200B…) are empty too
                raise HTTPException(422, f"{where(index)} is empty")
            reason = unencodable_reason(text)
            if reason:  # refused here, so text the tokenizer cannot take never reaches a shared batch
                raise HTTPException(422, f"{where(index)} {reason}")


class BodyBudget:
    """The bytes of request bodies held in memory across all connections, against one bound.

    When the bodies held fall back to none after many megabytes, the C heap is trimmed: glibc otherwise keeps the
    freed chunks resident (400 stalled 1 MB bodies left the server ~400 MB larger after they were gone)."""

    TRIM_AFTER = 16 << 20  # bytes released since the last trim

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._released = 0

    def take(self, size: int) -> bool:
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def release(self, size: int) -> None:
        self.held -= size
        self._released += size
        if self.held == 0 and self._released >= self.TRIM_AFTER:
            self._released = 0
            _trim_heap()


def _trim_heap() -> None:
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


class Refused(Exception):
    def __init__(self, status: int, detail: str, retry_after: int | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.retry_after = status, detail, retry_after


class BodyGuard:
    """ASGI middleware: read each request body whole before the app sees it, within ``limits.max_body_bytes``
    (413), within ``limits.body_timeout`` seconds from the first byte awaited (408: a stalled or trickling client
    cannot hold a connection and its bytes), and within the ``budget`` shared by all connections (503 with
    Retry-After: stalled bodies cannot pile up in memory). The bytes count against the budget until the response
    is sent; refusals close the connection, since the rest of the body is not read."""

    def __init__(self, app, limits: Limits, budget: BodyBudget) -> None:
        self.app, self.limits, self.budget = app, limits, budget

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held = 0
        try:
            try:
                body, held = await self._read(scope, receive)
            except Refused as refusal:
                await reject(send, refusal)
                return
            if body is None:  # the client hung up before sending its whole body: no one to answer
                return
            replayed = False

            async def replay():
                nonlocal replayed
                if replayed:  # after the body, receive() reports the client hanging up (watched while encoding)
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            await self.app(scope, replay, send)
        finally:
            self.budget.release(held)

    async def _read(self, scope, receive) -> tuple[bytes | None, int]:
        """(the whole body, or None if the client hung up; the bytes taken from the budget, which the caller
        releases). Raises Refused, holding nothing, when the body is too large, late or finds the budget spent."""
        limits = self.limits
        too_large = Refused(413, f"request body larger than {limits.max_body_bytes} bytes (the limit per request)")

        def busy() -> Refused:
            return Refused(503, f"the service is holding {self.budget.held} bytes of buffered request bodies (the "
                                 f"limit is {self.budget.limit}); retry in 1 s", retry_after=1)

        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > limits.max_body_bytes:
                raise too_large
            if self.budget.held + int(declared) > self.budget.limit:
                raise busy()
        chunks: list[bytes] = []
        held = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limits.body_timeout
        try:
            while True:
                try:
                    message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    raise Refused(408, f"the request body did not arrive within {limits.body_timeout:g} s "
                                        "(the body timeout)") from None
                if message["type"] == "http.disconnect":
                    return None, held
                chunk = message.get("body", b"")
                if held + len(chunk) > limits.max_body_bytes:
                    raise too_large
                if not self.budget.take(len(chunk)):
                    raise busy()
                held += len(chunk)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), held
        except Refused:
            self.budget.release(held)  # refused: the caller holds nothing
            raise


async def reject(send, refusal: Refused) -> None:
    body = json.dumps({"detail": refusal.detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    if refusal.retry_after is not None:
        headers.append((b"retry-after", str(refusal.retry_after).encode()))
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
