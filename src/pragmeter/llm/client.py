"""A backend behind a concurrency limit and the response cache, counting what happens for the progress bar."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace

from tqdm import tqdm

from pragmeter.llm.backends.base import BackendFailed, ChatBackend
from pragmeter.llm.cache import ResponseCache, cache_key
from pragmeter.llm.request import Messages, Request


@dataclass
class Answer:
    text: str | None  # None: no content, or the request failed (then ``error`` says why)
    cached: bool
    error: str | None = None
    finish_reason: str | None = None
    top_logprobs: tuple[tuple[str, float], ...] | None = None  # first token's alternatives, when asked for


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
        self._in_flight: dict[str, asyncio.Future[Answer]] = {}

    def key(self, messages: Messages, max_tokens: int | None, sample: int = 0, top_logprobs: int | None = None) -> str:
        decoding = self.backend.decoding(max_tokens)
        if top_logprobs:
            decoding = {**decoding, "top_logprobs": top_logprobs}
        return cache_key(self.backend.identity(), decoding, messages, sample)

    async def chat(self, request: Request, counters: Counters | None = None) -> Answer:
        """One answer to ``request``, from the cache or the backend; ``request.top_logprobs`` = K also asks for the
        first token's K most likely alternatives (a separate cache entry from the plain answer). The cache is keyed
        by the messages (what the task asks), never by how a backend reads them. With a cache, a request whose key
        is already on its way (e.g. a task's runs with identical zero-shot prompts) waits for that answer instead of
        asking again: the cache would have given it the same answer had it come a moment later."""
        key = self.key(request.messages, request.max_tokens, request.sample, request.top_logprobs)
        entry = self.cache.get(key) if self.cache is not None else None
        if entry is not None:
            alternatives = entry.get("top_logprobs")
            answer = Answer(entry["text"], cached=True, finish_reason=entry.get("finish_reason"),
                            top_logprobs=None if alternatives is None else tuple(map(tuple, alternatives)))
        elif key in self._in_flight:
            first = await asyncio.shield(self._in_flight[key])
            answer = replace(first, cached=first.error is None)
        else:
            pending = None
            if self.cache is not None:
                pending = self._in_flight[key] = asyncio.get_running_loop().create_future()
            try:
                answer = await self._ask(key, request)
            except BaseException:
                if pending is not None:
                    pending.cancel()  # waiting duplicates stop with this one (the batch is stopping anyway)
                raise
            finally:
                self._in_flight.pop(key, None)
            if pending is not None:
                pending.set_result(answer)
        if counters is not None:
            counters.record(answer)
        return answer

    async def _ask(self, key: str, request: Request) -> Answer:
        # The slot is held until the answer is stored, so a run killed at any moment loses at most as many answered
        # requests as the client's limit: a rerun asks again only what was in flight.
        async with self._limit:
            try:
                completion = await self.backend.complete(request)
            except BackendFailed as error:
                return Answer(None, cached=False, error=str(error))
            # Failures are not cached, nor are answers without text (a server's transient glitch would otherwise be
            # replayed for ever): a rerun asks them again.
            empty = not (completion.text or "").strip() and completion.top_logprobs is None
            if self.cache is not None and not empty:
                entry = {"text": completion.text, "finish_reason": completion.finish_reason,
                         "model": self.backend.identity().get("model"), "time": time.time()}
                if completion.top_logprobs is not None:
                    entry["top_logprobs"] = [list(pair) for pair in completion.top_logprobs]
                # fsync takes milliseconds: in a thread, so the other slots' requests keep flowing meanwhile.
                await asyncio.to_thread(self.cache.put, key, entry)
        return Answer(completion.text, cached=False, finish_reason=completion.finish_reason,
                      top_logprobs=completion.top_logprobs)
