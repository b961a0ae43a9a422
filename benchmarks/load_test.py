"""Load test of ``pragmeter serve`` on loopback: N concurrent clients for a fixed time; requests/s, latency
percentiles, errors and the server's peak memory.

    python benchmarks/load_test.py --clients 50 --seconds 60 [--model FOLDER] [--backend onnx] [--out load.json]
    python benchmarks/load_test.py --fairness --clients 4 --big-clients 8 --abandoning-clients 8 --seconds 30

    python benchmarks/load_test.py --stalled-bodies 400 [--body-kib 1000]

``--stalled-bodies N`` opens N connections that each send the headers and --body-kib KiB of a longer body and then
stop; it records the server's resident memory idle, at its peak while they hang, and after they are gone, and
what each connection was answered (408 after the body timeout, 503 past the buffered-bytes bound).

``--fairness`` measures what one small request pays for sharing the service: ``--clients`` clients send 2 texts
each, first alone for --seconds, then for --seconds more beside ``--big-clients`` clients sending 128 texts each
and ``--abandoning-clients`` clients that send 128 texts and hang up ``--abandon-after`` seconds later (0.5: a
client with a short timeout that tries again); it reports the small requests'
p50/p95 in both phases, and the p95 in encoder batch times (the server's mean time per batch, from /health).

The server runs as a child process on 127.0.0.1 (a free port); each client loops on POST /score with 1-4 real
sentences (Latent Hatred posts from the data root) and waits for the answer before sending the next. Only
loopback is ever contacted, the loop stops by itself after --seconds, and the server is stopped at the end.
The result records the machine state (``machine.py``) and warns loudly when the machine was not quiet; the
server's CPU counts as other processes' use there (it is not a waited-for child until the end), so compare
``others_cpu_cores`` with the server's share, not with zero.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

import httpx
import psutil
from machine import MachineWatch

POSTS = "implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg1_posts.tsv"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int, model: str | None, backend: str, max_batch: int | None = None) -> subprocess.Popen:
    command = [sys.executable, "-m", "pragmeter", "serve",
               "--host", "127.0.0.1", "--port", str(port), "--backend", backend]
    command += (["--impscore", model] if model else []) + (["--max-batch", str(max_batch)] if max_batch else [])
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_ready(base: str, server: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"server exited: {server.stderr.read()}")
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("server did not become ready")


class MemoryWatch(threading.Thread):
    """Peak resident memory of the server process (and any children) sampled every 100 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.process, self.peak, self.stop = psutil.Process(pid), 0, threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.1):
            try:
                processes = [self.process] + self.process.children(recursive=True)
                self.peak = max(self.peak, sum(p.memory_info().rss for p in processes))
            except psutil.Error:
                return


async def client(base: str, texts: list[str], until: float, seed: int, latencies: list, errors: list,
                 sizes: tuple[int, int] = (1, 4)) -> None:
    """POST /score in a loop until ``until`` with sizes[0]..sizes[1] random texts, recording each latency."""
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=120) as http:
        while time.monotonic() < until:
            batch = rng.sample(texts, rng.randint(*sizes))
            started = time.perf_counter()
            try:
                response = await http.post("/score", json={"texts": batch})
                ok = response.status_code == 200 and len(response.json()["scores"]) == len(batch)
            except httpx.HTTPError as error:
                ok, response = False, error
            latencies.append(time.perf_counter() - started)
            if not ok:
                errors.append(str(getattr(response, "status_code", response)))


async def abandoning_client(base: str, texts: list[str], until: float, seed: int, count: list,
                            after: float) -> None:
    """Send a 128-text POST /score and hang up ``after`` seconds later, in a loop until ``until``."""
    rng = random.Random(seed)
    host, port = base.rsplit("/", 1)[1].split(":")
    while time.monotonic() < until:
        body = json.dumps({"texts": rng.sample(texts, 128)}).encode()
        _, writer = await asyncio.open_connection(host, int(port))
        writer.write(f"POST /score HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()
        await asyncio.sleep(after)
        writer.close()
        count.append(1)


async def stalled_bodies(base: str, count: int, kib: int, hold: float, pid: int) -> dict:
    """``count`` connections each sending ``kib`` KiB of a body declared 1 KiB longer, then nothing for ``hold``
    seconds; the server's RSS (MiB) idle, at its peak, and 3 s after the connections are closed."""
    host, port = base.rsplit("/", 1)[1].split(":")
    process = psutil.Process(pid)
    idle = process.memory_info().rss
    chunk = b"x" * (kib * 1024)
    head = (f"POST /score HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(chunk) + 1024}\r\n\r\n").encode()
    peak = idle
    answers: list[str] = []

    async def one() -> asyncio.StreamWriter:
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(head + chunk)
        try:
            await writer.drain()
        except ConnectionError:  # refused before the whole chunk was sent: the answer may still be readable
            pass
        try:
            line = await asyncio.wait_for(reader.readline(), hold)
            answers.append(line.decode().split(" ")[1] if line else "closed")
        except TimeoutError:
            answers.append("no answer")
        except ConnectionError:
            answers.append("reset")
        return writer

    async def watch(stop: asyncio.Event) -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, process.memory_info().rss)
            await asyncio.sleep(0.1)

    stop = asyncio.Event()
    watcher = asyncio.create_task(watch(stop))
    writers = await asyncio.gather(*(one() for _ in range(count)))
    stop.set()
    await watcher
    for writer in writers:
        writer.close()
    await asyncio.sleep(3)
    counts = {answer: answers.count(answer) for answer in sorted(set(answers))}
    mib = 2 ** 20
    return {"connections": count, "body_kib_sent": kib, "answers": counts, "rss_idle_mib": round(idle / mib),
            "rss_peak_mib": round(peak / mib), "rss_after_close_mib": round(process.memory_info().rss / mib),
            "buffered_body_bytes_after": httpx.get(base + "/health", timeout=30).json().get("buffered_body_bytes")}


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def summary(latencies: list[float], errors: list[str], elapsed: float) -> dict:
    ordered = sorted(latencies)
    return {"requests": len(latencies), "errors": len(errors), "error_kinds": sorted(set(errors))[:5],
            "seconds": round(elapsed, 1), "requests_per_s": round(len(latencies) / elapsed, 1),
            "p50_ms": round(1000 * statistics.median(ordered), 1) if ordered else None,
            "p95_ms": round(1000 * percentile(ordered, 0.95), 1), "p99_ms": round(1000 * percentile(ordered, 0.99), 1)}


async def load(base: str, texts: list[str], clients: int, seconds: float) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    started = time.monotonic()
    until = started + seconds
    await asyncio.gather(*(client(base, texts, until, i, latencies, errors) for i in range(clients)))
    return summary(latencies, errors, time.monotonic() - started)


async def fairness(base: str, texts: list[str], small: int, big: int, abandoning: int, seconds: float,
                   abandon_after: float) -> dict:
    """Small requests (2 texts) alone, then beside big and abandoning clients; the batcher's figures per phase."""
    phases = {}
    counted = ("batches", "texts", "busy_seconds", "abandoned_requests", "timed_out_requests", "rejected_requests")
    for phase, (n_big, n_abandoning) in [("small_alone", (0, 0)), ("small_with_big_and_abandoned", (big, abandoning))]:
        before = httpx.get(base + "/health", timeout=30).json()["batcher"]
        small_latencies: list[float] = []
        small_errors: list[str] = []
        big_latencies: list[float] = []
        big_errors: list[str] = []
        hung_up: list = []
        started = time.monotonic()
        until = started + seconds
        await asyncio.gather(
            *(client(base, texts, until, i, small_latencies, small_errors, sizes=(2, 2)) for i in range(small)),
            *(client(base, texts, until, 100 + i, big_latencies, big_errors, (128, 128)) for i in range(n_big)),
            *(abandoning_client(base, texts, until, 200 + i, hung_up, abandon_after) for i in range(n_abandoning)))
        elapsed = time.monotonic() - started
        await asyncio.sleep(1)  # let the server take the last hang-ups off its queue
        after = httpx.get(base + "/health", timeout=30).json()["batcher"]
        delta = {key: after.get(key, 0) - before.get(key, 0) for key in counted}  # .get: older servers lack some
        batch_s = delta["busy_seconds"] / max(1, delta["batches"])
        small_summary = summary(small_latencies, small_errors, elapsed)
        phases[phase] = {
            "small": small_summary, "big": summary(big_latencies, big_errors, elapsed) if n_big else None,
            "abandoned_sent": len(hung_up),
            "server": {**delta, "mean_batch_ms": round(1000 * batch_s, 1),
                       "busy_seconds": round(delta["busy_seconds"], 2)},
            "small_p95_in_batches": round(small_summary["p95_ms"] / 1000 / batch_s, 2) if batch_s else None}
    return phases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50, help="clients (with --fairness: small clients, 2 texts)")
    parser.add_argument("--fairness", action="store_true",
                        help="small-request latency alone, then beside big and abandoning clients")
    parser.add_argument("--big-clients", type=int, default=8, help="--fairness: clients sending 128 texts")
    parser.add_argument("--abandoning-clients", type=int, default=8,
                        help="--fairness: clients sending 128 texts and hanging up --abandon-after seconds later")
    parser.add_argument("--abandon-after", type=float, default=0.5, help="--fairness: see --abandoning-clients")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--model", default=None, help="model folder or shipped name (default: shipped default)")
    parser.add_argument("--backend", default="onnx", choices=["openvino", "onnx", "torch"])
    parser.add_argument("--stalled-bodies", type=int, default=0, metavar="N",
                        help="instead of a load: N connections that send part of a body and stop (memory)")
    parser.add_argument("--body-kib", type=int, default=1000, help="--stalled-bodies: KiB each connection sends")
    parser.add_argument("--hold", type=float, default=15.0,
                        help="--stalled-bodies: seconds each connection waits for an answer before hanging up")
    parser.add_argument("--max-batch", type=int, default=None, help="the server's --max-batch (default: its own)")
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--out", help="also write the results as JSON here")
    args = parser.parse_args()

    from pragmeter.data.root import data_file
    from pragmeter.io import read_table

    texts = read_table(data_file(POSTS, root=args.data_root))["post"].dropna().sample(2000, random_state=0).tolist()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(port, args.model, args.backend, args.max_batch)
    try:
        wait_ready(base, server)
        idle = psutil.Process(server.pid).memory_info().rss
        watch = MemoryWatch(server.pid)
        watch.start()
        with MachineWatch() as machine:
            if args.stalled_bodies:
                result = asyncio.run(stalled_bodies(base, args.stalled_bodies, args.body_kib, args.hold, server.pid))
            elif args.fairness:
                result = asyncio.run(fairness(base, texts, args.clients, args.big_clients, args.abandoning_clients,
                                              args.seconds, args.abandon_after))
            else:
                result = asyncio.run(load(base, texts, args.clients, args.seconds))
        watch.stop.set()
        batcher = httpx.get(base + "/health").json()["batcher"]
        version = httpx.get(base + "/version").json()
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    result.update({"clients": args.clients, "backend": args.backend, "model": version["model"],
                   "server_idle_rss_mib": round(idle / 2**20), "server_peak_rss_mib": round(watch.peak / 2**20),
                   "mean_texts_per_encoder_batch": round(batcher["texts"] / max(1, batcher["batches"]), 1),
                   "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d"), "machine_state": machine.record})
    print(json.dumps(result, indent=2))
    print(machine.summary())
    if args.out:
        from pragmeter.io import write_json_atomic

        write_json_atomic(args.out, result)
    if args.stalled_bodies:
        return 0
    if args.fairness:
        return 1 if any(phase["small"]["errors"] or (phase["big"] or {}).get("errors")
                        for phase in result.values() if isinstance(phase, dict) and "small" in phase) else 0
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
