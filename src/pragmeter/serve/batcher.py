"""Micro-batching: texts of concurrent requests are encoded together in one encoder call.

The encoder is everything in ImpScore's cost and is far more efficient on one batch of 100 texts than on 100
batches of one. Requests put their texts on a queue; one worker forms a batch of up to ``max_texts`` texts (waiting
at most ``max_wait_ms`` for more while the batch is not full), encodes it in a worker thread, and hands each
request its rows. While one batch is being encoded the next one gathers, so under load batches fill by themselves.

Isolation between requests:
- each batch shares its room equally between all waiting requests (a request that needs less leaves the rest to
  the others), and the requests served last go to the back of the line, so a small request is answered in the
  batch after the one being encoded however many big ones wait (big requests are encoded in slices that interleave);
- a request whose caller stops waiting (the client hung up: its task is cancelled) or whose ``timeout`` passes
  leaves the queue at once, and none of its texts still waiting reaches the encoder;
- when an encoder call fails, each request of that batch is retried on its own, so only the offending one fails;
- a batch that fails outside the encoder call (or an encoder answer of the wrong shape) fails that batch's requests
  and the worker goes on; were the worker to end anyway, ``failure`` says why and every request is refused at once;
- at most ``max_queued_texts`` texts wait at once; beyond that ``encode`` raises QueueFull (the service's 503).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger("pragmeter")

class QueueFull(Exception):
    """Too many texts are waiting; ``retry_after`` is an estimate in whole seconds of when room frees up."""

    def __init__(self, queued: int, limit: int, retry_after: int) -> None:
        super().__init__(f"the service is busy: {queued} texts are queued (the limit is {limit}); "
                         f"retry in {retry_after} s")
        self.retry_after = retry_after


class DeadlineExceeded(Exception):
    """The request was not answered within its timeout; its texts were taken off the queue."""

    def __init__(self, timeout: float, retry_after: int) -> None:
        super().__init__(f"no answer within {timeout:g} s (the request timeout): the service is overloaded and "
                         f"dropped this request; retry in {retry_after} s")
        self.retry_after = retry_after


class EncoderFailed(Exception):
    """The encoder failed on this request's own texts (the other requests of its batch were answered)."""


class BatcherStopped(Exception):
    """The batcher's worker ended (not stopped by ``stop``): no request can be answered."""


@dataclass
class BatcherStats:
    requests: int = 0
    texts: int = 0
    batches: int = 0
    largest_batch: int = 0
    busy_seconds: float = 0.0
    retried_batches: int = 0
    failed_requests: int = 0
    rejected_requests: int = 0
    abandoned_requests: int = 0  # the caller stopped waiting before the answer (the client hung up)
    timed_out_requests: int = 0
    worker_errors: int = 0  # batches that failed outside the encoder (their requests failed; the worker went on)

    def to_dict(self) -> dict:
        return {"requests": self.requests, "texts": self.texts, "batches": self.batches,
                "largest_batch": self.largest_batch, "busy_seconds": round(self.busy_seconds, 3),
                "retried_batches": self.retried_batches, "failed_requests": self.failed_requests,
                "rejected_requests": self.rejected_requests, "abandoned_requests": self.abandoned_requests,
                "timed_out_requests": self.timed_out_requests, "worker_errors": self.worker_errors}


@dataclass(eq=False)
class _Request:
    texts: list[str]
    future: asyncio.Future = field(repr=False)
    scheduled: int = 0  # texts handed to a batch so far
    filled: int = 0  # rows of ``out`` written so far
    out: np.ndarray | None = field(default=None, repr=False)

    @property
    def waiting(self) -> int:
        """Texts not yet handed to a batch."""
        return len(self.texts) - self.scheduled

    def deliver(self, start: int, rows: np.ndarray) -> None:
        if self.future.done():  # failed earlier, or the client went away (cancelled)
            return
        if self.out is None:
            self.out = np.zeros((len(self.texts), rows.shape[1]), dtype=rows.dtype)
        self.out[start: start + len(rows)] = rows
        self.filled += len(rows)
        if self.filled == len(self.texts):
            self.future.set_result(self.out)


# One slice of one request inside a batch: (request, first text, end).
_Segment = tuple[_Request, int, int]


class MicroBatcher:
    def __init__(self, encode: Callable[[list[str]], np.ndarray], max_texts: int = 256,
                 max_wait_ms: float = 2.0, max_queued_texts: int = 4096) -> None:
        self._encode = encode
        self.max_texts = max_texts
        self.max_wait = max_wait_ms / 1000
        self.max_queued_texts = max_queued_texts
        self.stats = BatcherStats()
        self._pending: deque[_Request] = deque()
        self._queued_texts = 0
        self._arrived: asyncio.Event | None = None
        self._worker: asyncio.Task | None = None
        self._stopping = False
        self.failure: str | None = None  # why the worker ended, if it ended without being stopped
        self._encoding_since: float | None = None  # when the batch in the encoder began (monotonic); None: idle
        # One thread: the encoder is never called concurrently (ONNX Runtime and torch use all cores per call).
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pragmeter-encoder")

    @property
    def queued(self) -> int:
        """Requests with texts not yet handed to the encoder."""
        return len(self._pending)

    @property
    def queued_texts(self) -> int:
        return self._queued_texts

    @property
    def busy_for(self) -> float:
        """Seconds the batch now in the encoder has been running (0 when the encoder is idle): what the service's
        liveness check compares with its stall timeout, since a hung encoder never fails."""
        since = self._encoding_since
        return 0.0 if since is None else time.monotonic() - since

    async def start(self) -> None:
        self._arrived = asyncio.Event()
        self._worker = asyncio.create_task(self._run(), name="pragmeter-batcher")
        self._worker.add_done_callback(self._ended)

    async def stop(self) -> None:
        self._stopping = True
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except asyncio.CancelledError:
                pass
            except Exception:  # noqa: BLE001 - it ended earlier; ``failure`` holds why and was logged
                pass
        self._executor.shutdown(wait=True)

    def _retry_after(self) -> int:
        rate = self.stats.texts / self.stats.busy_seconds if self.stats.busy_seconds > 0 else 0.0
        return max(1, int(np.ceil(self._queued_texts / rate))) if rate > 0 else 1

    async def run(self, work: Callable, *args):
        """``work(*args)`` on the encoder's own thread, between two batches: for work on the same model that must
        not run beside them (an interpreter's close choices answered again in fp32)."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, work, *args)

    async def encode(self, texts: Sequence[str], timeout: float | None = None) -> np.ndarray:
        """Embeddings of ``texts``, computed together with whatever other requests are waiting.

        Raises QueueFull when the queue has no room, DeadlineExceeded when no answer came within ``timeout``
        seconds, EncoderFailed when the encoder fails on these texts, BatcherStopped when the worker has ended.
        Cancelling the call (the client went away) takes its texts off the queue as a timeout does."""
        if self._arrived is None:
            raise RuntimeError("MicroBatcher.start() was not awaited")
        if self.failure is not None:
            raise BatcherStopped(self.failure)
        texts = list(texts)
        if self._queued_texts + len(texts) > self.max_queued_texts:
            self.stats.rejected_requests += 1
            raise QueueFull(self._queued_texts, self.max_queued_texts, self._retry_after())
        request = _Request(texts, asyncio.get_running_loop().create_future())
        self.stats.requests += 1
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        self._pending.append(request)
        self._queued_texts += len(texts)
        self._arrived.set()
        try:
            async with asyncio.timeout(timeout) as deadline:
                return await request.future
        except TimeoutError:
            if not deadline.expired():
                raise
            self.stats.timed_out_requests += 1
            raise DeadlineExceeded(timeout, self._retry_after()) from None
        except asyncio.CancelledError:
            self.stats.abandoned_requests += 1
            raise
        finally:
            self._forget(request)

    def _forget(self, request: _Request) -> None:
        """Take a request that will not be answered (cancelled, timed out, failed) off the queue."""
        if not request.future.done():
            request.future.cancel()  # rows of a batch already in the encoder are then ignored
        if request in self._pending:
            self._pending.remove(request)
            self._queued_texts -= request.waiting

    def _drop_finished(self) -> None:
        """Forget requests that failed before all their texts were scheduled (their caller may not have run yet)."""
        for request in [r for r in self._pending if r.future.done()]:
            self._forget(request)

    def _take(self) -> list[_Segment]:
        """Up to ``max_texts`` texts shared equally between the waiting requests, in line order.

        Each pass offers every request still wanting texts an equal part of the room left (at least one text);
        what small requests leave goes to the others in the next pass. Requests that got texts and still wait go
        to the back of the line, so when there are more requests than room the next batch starts with the others."""
        self._drop_finished()
        room = self.max_texts
        shares: dict[_Request, int] = {}
        wanting = list(self._pending)
        while room > 0 and wanting:
            each = max(1, room // len(wanting))
            still: list[_Request] = []
            for request in wanting:
                if room == 0:
                    break
                give = min(request.waiting - shares.get(request, 0), each, room)
                shares[request] = shares.get(request, 0) + give
                room -= give
                if shares[request] < request.waiting:
                    still.append(request)
            wanting = still
        segments: list[_Segment] = []
        for request, count in shares.items():
            segments.append((request, request.scheduled, request.scheduled + count))
            request.scheduled += count
        self._pending = deque([r for r in self._pending if r not in shares]
                              + [r for r in self._pending if r in shares and r.waiting])
        self._queued_texts -= self.max_texts - room
        return segments

    async def _gather(self) -> list[_Segment]:
        while True:
            self._drop_finished()
            if self._pending:
                break
            self._arrived.clear()
            await self._arrived.wait()
        deadline = time.monotonic() + self.max_wait
        while self._queued_texts < self.max_texts:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                break
        return self._take()

    async def _encode_rows(self, texts: list[str]) -> np.ndarray:
        self._encoding_since = time.monotonic()
        try:
            rows = await asyncio.get_running_loop().run_in_executor(self._executor, self._encode, texts)
        finally:
            self._encoding_since = None
        rows = np.asarray(rows)
        if rows.ndim != 2 or rows.shape[0] != len(texts):  # an encoder bug, answered like an encoder failure
            raise ValueError(f"the encoder returned an array of shape {rows.shape} for {len(texts)} texts")
        return rows

    async def _run(self) -> None:
        """The worker: one batch after another until stopped. A batch that fails outside the encoder (a bug in
        forming or delivering it) fails its own requests and the worker goes on; were the worker to end anyway,
        ``failure`` says why (the service's health check reports it) and ``encode`` refuses at once."""
        while True:
            segments: list[_Segment] = []
            try:
                segments = await self._gather()
                if segments:
                    await self._serve(segments)
            except Exception as error:  # noqa: BLE001 - the worker must outlive any one batch
                self._fail_batch(segments, error)

    async def _serve(self, segments: list[_Segment]) -> None:
        texts = [text for request, start, end in segments for text in request.texts[start:end]]
        started = time.perf_counter()
        try:
            embeddings = await self._encode_rows(texts)
        except Exception as error:  # noqa: BLE001 - the worker must keep running whatever the encoder raises
            await self._retry_separately(segments, error)
            return
        self.stats.busy_seconds += time.perf_counter() - started
        self.stats.batches += 1
        self.stats.texts += len(texts)
        self.stats.largest_batch = max(self.stats.largest_batch, len(texts))
        offset = 0
        for request, start, end in segments:
            request.deliver(start, embeddings[offset: offset + end - start])
            offset += end - start

    def _fail_batch(self, segments: list[_Segment], error: Exception) -> None:
        """Fail the requests of a batch that broke outside the encoder (all waiting requests when it broke before a
        batch was formed, so that the worker does not meet the same state again), with one log line."""
        self.stats.worker_errors += 1
        requests = {request for request, _, _ in segments} or set(self._pending)
        log.error("the service's batcher failed on a batch of %d requests (%s: %s); they are answered 500 and the "
                  "batcher goes on", len(requests), type(error).__name__, _first_line(error))
        for request in requests:
            if not request.future.done():
                self.stats.failed_requests += 1
                request.future.set_exception(EncoderFailed(f"the service failed on this request's batch "
                                                           f"({type(error).__name__}: {_first_line(error)})"))
            self._forget(request)

    def _ended(self, worker: asyncio.Task) -> None:
        """Done callback of the worker task: record why it ended unless it was stopped."""
        if worker.cancelled() or self._stopping:
            return
        error = worker.exception()
        self.failure = (f"the batcher stopped ({type(error).__name__}: {_first_line(error)})" if error is not None
                        else "the batcher stopped")
        log.error("%s; every request is refused until the service is restarted", self.failure)
        for request in list(self._pending):
            if not request.future.done():
                request.future.set_exception(BatcherStopped(self.failure))

    async def _retry_separately(self, segments: list[_Segment], error: Exception) -> None:
        """Encode each request's part of a failed batch on its own; only the requests that fail again fail."""
        by_request: dict[_Request, list[tuple[int, int]]] = {}
        for request, start, end in segments:
            by_request.setdefault(request, []).append((start, end))
        if len(by_request) > 1:
            self.stats.retried_batches += 1
        for request, ranges in by_request.items():
            if request.future.done():
                continue
            if len(by_request) > 1:
                try:
                    rows = await self._encode_rows([t for start, end in ranges for t in request.texts[start:end]])
                except Exception as own_error:  # noqa: BLE001
                    error = own_error
                else:
                    offset = 0
                    for start, end in ranges:
                        request.deliver(start, rows[offset: offset + end - start])
                        offset += end - start
                    continue
            self.stats.failed_requests += 1
            request.future.set_exception(EncoderFailed(f"the encoder failed on this request "
                                                       f"({type(error).__name__}: {_first_line(error)})"))


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""
