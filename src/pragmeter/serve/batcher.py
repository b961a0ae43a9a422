"""Micro-batching: texts of concurrent requests are encoded together in one encoder call.

The encoder is everything in ImpScore's cost and is far more efficient on one batch of 100 texts than on 100
batches of one. Requests put their texts on a queue; one worker takes everything waiting (up to ``max_texts``,
waiting at most ``max_wait_ms`` for more when the queue runs dry), encodes it in a worker thread, and hands each
request its rows. While one batch is being encoded the next one gathers, so under load batches fill by themselves.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np


@dataclass
class BatcherStats:
    requests: int = 0
    texts: int = 0
    batches: int = 0
    largest_batch: int = 0
    busy_seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"requests": self.requests, "texts": self.texts, "batches": self.batches,
                "largest_batch": self.largest_batch, "busy_seconds": round(self.busy_seconds, 3)}


@dataclass
class _Job:
    texts: list[str]
    future: asyncio.Future = field(repr=False)


class MicroBatcher:
    def __init__(self, encode: Callable[[list[str]], np.ndarray], max_texts: int = 256,
                 max_wait_ms: float = 2.0) -> None:
        self._encode = encode
        self.max_texts = max_texts
        self.max_wait = max_wait_ms / 1000
        self.stats = BatcherStats()
        self._queue: asyncio.Queue[_Job] | None = None
        self._worker: asyncio.Task | None = None
        # One thread: the encoder is never called concurrently (ONNX Runtime and torch use all cores per call).
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pragmeter-encoder")

    @property
    def queued(self) -> int:
        return self._queue.qsize() if self._queue is not None else 0

    async def start(self) -> None:
        self._queue = asyncio.Queue()
        self._worker = asyncio.create_task(self._run(), name="pragmeter-batcher")

    async def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
        self._executor.shutdown(wait=True)

    async def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts``, computed together with whatever other requests are waiting."""
        if self._queue is None:
            raise RuntimeError("MicroBatcher.start() was not awaited")
        job = _Job(list(texts), asyncio.get_running_loop().create_future())
        self.stats.requests += 1
        await self._queue.put(job)
        return await job.future

    async def _gather(self) -> list[_Job]:
        jobs = [await self._queue.get()]
        size = len(jobs[0].texts)
        deadline = time.monotonic() + self.max_wait
        while size < self.max_texts:
            if self._queue.empty():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    job = await asyncio.wait_for(self._queue.get(), remaining)
                except TimeoutError:
                    break
            else:
                job = self._queue.get_nowait()
            jobs.append(job)
            size += len(job.texts)
        return jobs

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            jobs = await self._gather()
            texts = [text for job in jobs for text in job.texts]
            started = time.perf_counter()
            try:
                embeddings = await loop.run_in_executor(self._executor, self._encode, texts)
            except Exception as error:  # every waiting request gets the failure, the worker keeps running
                for job in jobs:
                    if not job.future.done():
                        job.future.set_exception(error)
                continue
            self.stats.busy_seconds += time.perf_counter() - started
            self.stats.batches += 1
            self.stats.texts += len(texts)
            self.stats.largest_batch = max(self.stats.largest_batch, len(texts))
            offset = 0
            for job in jobs:
                if not job.future.done():  # a client that went away leaves a cancelled future
                    job.future.set_result(embeddings[offset: offset + len(job.texts)])
                offset += len(job.texts)
