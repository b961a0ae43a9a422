"""A backend behind a concurrency limit and the response cache, counting what happens for the progress bar."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from tqdm import tqdm

from pragmeter.llm.backends.base import BackendFailed, ChatBackend, Messages
from pragmeter.llm.cache import ResponseCache, cache_key


@dataclass
class Answer:
    text: str | None  # None: no content, or the request failed (then ``error`` says why)
    cached: bool
    error: str | None = None
    finish_reason: str | None = None


class Counters:
    """Items done, cache hits and errors, shown on a tqdm bar (stderr)."""

    def __init__(self, total: int, description: str, enabled: bool = True):
        self.done = self.cache_hits = self.errors = 0
        self.bar = tqdm(total=total, desc=description, unit="req", disable=not enabled, dynamic_ncols=True)

    def record(self, answer: Answer) -> None:
        self.done += 1
        self.cache_hits += answer.cached
        self.errors += answer.error is not None
        self.bar.set_postfix(cached=self.cache_hits, errors=self.errors, refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


class CachedClient:
    def __init__(self, backend: ChatBackend, cache: ResponseCache | None):
        self.backend = backend
        self.cache = cache
        self._limit = asyncio.Semaphore(backend.concurrency)

    def key(self, messages: Messages, max_tokens: int | None, sample: int = 0) -> str:
        return cache_key(self.backend.identity(), self.backend.decoding(max_tokens), messages, sample)

    async def chat(self, messages: Messages, max_tokens: int | None, sample: int = 0,
                   counters: Counters | None = None) -> Answer:
        key = self.key(messages, max_tokens, sample)
        entry = self.cache.get(key) if self.cache is not None else None
        if entry is not None:
            answer = Answer(entry["text"], cached=True, finish_reason=entry.get("finish_reason"))
        else:
            async with self._limit:
                try:
                    completion = await self.backend.complete(messages, max_tokens, sample)
                except BackendFailed as error:
                    answer = Answer(None, cached=False, error=str(error))
                else:
                    answer = Answer(completion.text, cached=False, finish_reason=completion.finish_reason)
                    if self.cache is not None:  # failures are not cached: a rerun retries them
                        entry = {"text": completion.text, "finish_reason": completion.finish_reason,
                                 "model": self.backend.identity().get("model"), "time": time.time()}
                        # fsync takes milliseconds: in a thread, so other requests keep flowing meanwhile.
                        await asyncio.to_thread(self.cache.put, key, entry)
        if counters is not None:
            counters.record(answer)
        return answer
