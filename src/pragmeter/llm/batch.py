"""The one loop that sends many prompts through a chat model: concurrently (the client's limit), through the
response cache, with a progress bar. ``pragmeter eval``, ``pragmeter generate`` and the generation check all
answer their prompts here; a backend failure that no retry can fix (bad key, unknown model) stops the batch with
a one-line error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

from pragmeter.errors import PragmeterError
from pragmeter.llm.backends.base import BackendFatal, ChatBackend
from pragmeter.llm.cache import ResponseCache
from pragmeter.llm.client import Answer, CachedClient, Counters
from pragmeter.llm.request import Request

T = TypeVar("T")


async def run_batch(count: int, ask: Callable[[int, Counters], Awaitable[T]], description: str,
                    progress: bool = True) -> list[T]:
    """``ask(i, counters)`` for i in 0..count-1, all at once (the client limits concurrency); results in order."""
    counters = Counters(count, description, enabled=progress)
    try:
        async with asyncio.TaskGroup() as group:
            jobs = [group.create_task(ask(index, counters)) for index in range(count)]
    except* BackendFatal as failure:
        raise PragmeterError(str(failure.exceptions[0])) from None
    finally:
        counters.close()
    return [job.result() for job in jobs]


async def answer_all(client: CachedClient, requests: Sequence[Request], description: str,
                     progress: bool = True) -> list[Answer]:
    """One answer per request, in order; failed requests come back as answers with ``error`` set."""
    return await run_batch(len(requests), lambda i, counters: client.chat(requests[i], counters), description,
                           progress)


@asynccontextmanager
async def cached_clients(cache_path: Path | None, *backends: ChatBackend | None
                         ) -> AsyncIterator[list[CachedClient | None]]:
    """Clients for ``backends`` sharing one response cache (None: no cache); closes backends and cache after."""
    cache = ResponseCache(cache_path) if cache_path else None
    try:
        yield [CachedClient(backend, cache) if backend is not None else None for backend in backends]
    finally:
        for backend in backends:
            if backend is not None:
                await backend.aclose()
        if cache is not None:
            cache.close()
