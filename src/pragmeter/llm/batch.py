"""The one loop that sends many prompts through a chat model: concurrently (the client's limit), through the
response cache, with a progress bar. ``pragmeter eval``, ``pragmeter generate`` and the generation check all
answer their prompts here; a backend failure that no retry can fix (bad key, unknown model) stops the batch with
a one-line error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pragmeter.errors import PragmeterError
from pragmeter.llm.backends.base import BackendFatal, ChatBackend, Messages
from pragmeter.llm.cache import ResponseCache
from pragmeter.llm.client import Answer, CachedClient, Counters

T = TypeVar("T")


@dataclass(frozen=True)
class Prompt:
    """One request: the messages, the task's token budget, which independent sample of them it is, and how many
    of the first token's likeliest alternatives to return (log-probability scoring)."""

    messages: Messages
    max_tokens: int | None = None
    sample: int = 0
    top_logprobs: int | None = None


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


async def answer_all(client: CachedClient, prompts: Sequence[Prompt], description: str,
                     progress: bool = True) -> list[Answer]:
    """One answer per prompt, in order; failed requests come back as answers with ``error`` set."""
    return await run_batch(
        len(prompts),
        lambda i, counters: client.chat(prompts[i].messages, prompts[i].max_tokens, prompts[i].sample, counters,
                                        top_logprobs=prompts[i].top_logprobs),
        description, progress)


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
