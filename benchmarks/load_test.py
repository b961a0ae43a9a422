"""Load test of ``pragmeter serve`` on loopback: N concurrent clients for a fixed time; requests/s, latency
percentiles, errors and the server's peak memory.

    python benchmarks/load_test.py --clients 50 --seconds 60 [--model FOLDER] [--backend onnx] [--out load.json]

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


def start_server(port: int, model: str | None, backend: str) -> subprocess.Popen:
    command = [sys.executable, "-c", "import sys; from pragmeter.cli import main; sys.exit(main())", "serve", "--host", "127.0.0.1", "--port", str(port),
               "--backend", backend] + (["--model", model] if model else [])
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


async def client(base: str, texts: list[str], until: float, seed: int, latencies: list, errors: list) -> None:
    rng = random.Random(seed)
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        while time.monotonic() < until:
            batch = rng.sample(texts, rng.randint(1, 4))
            started = time.perf_counter()
            try:
                response = await http.post("/score", json={"texts": batch})
                ok = response.status_code == 200 and len(response.json()["scores"]) == len(batch)
            except httpx.HTTPError as error:
                ok, response = False, error
            latencies.append(time.perf_counter() - started)
            if not ok:
                errors.append(str(getattr(response, "status_code", response)))


async def load(base: str, texts: list[str], clients: int, seconds: float) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    started = time.monotonic()
    until = started + seconds
    await asyncio.gather(*(client(base, texts, until, i, latencies, errors) for i in range(clients)))
    elapsed = time.monotonic() - started
    ordered = sorted(latencies)
    return {"requests": len(latencies), "errors": len(errors), "error_kinds": sorted(set(errors))[:5],
            "seconds": round(elapsed, 1), "requests_per_s": round(len(latencies) / elapsed, 1),
            "p50_ms": round(1000 * statistics.median(ordered), 1),
            "p99_ms": round(1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--model", default=None, help="model folder or shipped name (default: shipped default)")
    parser.add_argument("--backend", default="onnx", choices=["onnx", "onnx-int8", "torch"])
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--out", help="also write the results as JSON here")
    args = parser.parse_args()

    from pragmeter.data.root import data_file
    from pragmeter.io import read_table

    texts = read_table(data_file(POSTS, root=args.data_root))["post"].dropna().sample(2000, random_state=0).tolist()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_server(port, args.model, args.backend)
    try:
        wait_ready(base, server)
        idle = psutil.Process(server.pid).memory_info().rss
        watch = MemoryWatch(server.pid)
        watch.start()
        with MachineWatch() as machine:
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
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
