"""Request limits of the ImpScore service: texts per request, characters per text, bytes per body, queued texts.

Too large → 413 with a message naming the limit; malformed or unencodable text → 422; queue full → 503 (see
``pragmeter.serve.app``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

from fastapi import HTTPException

from pragmeter.impscore.model import unencodable_reason


@dataclass(frozen=True)
class Limits:
    max_texts: int = 128  # per request (a pair in /distance counts as two texts)
    max_chars: int = 2000  # per text
    max_body_bytes: int = 1 << 20
    max_queued_texts: int = 4096  # waiting for the encoder across all requests (more → 503 with Retry-After)

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
            if not text.strip():
                raise HTTPException(422, f"{where(index)} is empty")
            reason = unencodable_reason(text)
            if reason:  # refused here, so text the tokenizer cannot take never reaches a shared batch
                raise HTTPException(422, f"{where(index)} {reason}")


class BodySizeLimit:
    """ASGI middleware: answer 413 to a body larger than ``max_bytes`` before it is read into memory."""

    def __init__(self, app, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.message = f"request body larger than {max_bytes} bytes (the limit per request)"

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._reject(send)
            return
        received = 0
        started = False

        async def counting_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # FastAPI turns an HTTPException raised while reading the body into its response.
                    raise HTTPException(413, self.message)
            return message

        async def tracking_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except HTTPException:  # raised while reading outside FastAPI's handling
            if not started:
                await self._reject(send)

    async def _reject(self, send) -> None:
        import json

        body = json.dumps({"detail": self.message}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
