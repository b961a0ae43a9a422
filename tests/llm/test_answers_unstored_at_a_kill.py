"""A run killed at any moment loses at most as many answered requests as the client's concurrency: a slot is held
until its answer is stored in the response cache, so what a rerun asks again is only what was in flight."""

from __future__ import annotations

import asyncio
import threading
import time

from pragmeter.llm.backends.base import ChatBackend, Completion
from pragmeter.llm.batch import answer_all
from pragmeter.llm.cache import ResponseCache
from pragmeter.llm.client import CachedClient
from pragmeter.llm.request import Request


class Counting(ChatBackend):
    """Answers at once and counts what it has answered; the cache below counts what it has stored."""

    concurrency = 2

    def __init__(self):
        self.answered = 0

    @classmethod
    def from_args(cls, target, args):
        return cls()

    def identity(self) -> dict:
        return {"backend": "counting", "model": "m"}

    def decoding(self, max_tokens) -> dict:
        return {"max_tokens": max_tokens}

    async def complete(self, request: Request) -> Completion:
        await asyncio.sleep(0)
        self.answered += 1
        return Completion("Neutral")


class SlowCache(ResponseCache):
    """A cache whose fsync is slow (a loaded disk), recording the most answers ever answered but not yet stored."""

    def __init__(self, path, backend: Counting):
        super().__init__(path)
        self.backend, self.stored, self.most_unstored = backend, 0, 0
        self._lock = threading.Lock()

    def put(self, key: str, entry: dict) -> None:
        with self._lock:
            self.most_unstored = max(self.most_unstored, self.backend.answered - self.stored)
        time.sleep(0.02)
        super().put(key, entry)
        with self._lock:
            self.stored += 1


def test_answers_not_yet_stored_never_outnumber_the_concurrency(tmp_path):
    backend = Counting()
    cache = SlowCache(tmp_path / "responses.jsonl", backend)
    requests = [Request([{"role": "user", "content": f"item {i}"}]) for i in range(24)]
    answers = asyncio.run(answer_all(CachedClient(backend, cache), requests, "test", progress=False))
    cache.close()
    assert [a.text for a in answers] == ["Neutral"] * 24 and cache.stored == 24
    assert len((tmp_path / "responses.jsonl").read_text().splitlines()) == 24
    assert 1 <= cache.most_unstored <= backend.concurrency  # a kill at the worst moment loses at most two answers
