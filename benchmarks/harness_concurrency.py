"""Harness throughput: concurrency 16 vs 1 against a fake OpenAI-compatible server with 200 ms per request.

Runs what `pragmeter eval --tasks inli --limit 200` runs (`eval.runner.run_eval`) twice side by side in this process
(no response cache), and
prints the wall time of each and their ratio. The harness's own work per request must be small next to the
server latency for the ratio to approach 16.

    python benchmarks/harness_concurrency.py [--items 200] [--latency 0.2] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from machine import MachineWatch

from pragmeter.eval.runner import run_eval
from pragmeter.llm.backends import load_backend
from pragmeter.testing.fake_server import FakeChatServer, constant


def timed_run(url: str, items: int, concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as output:
        start = time.perf_counter()
        backend = {"base_url": url, "model": "fake", "concurrency": str(concurrency)}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            _, complete = run_eval("inli", Path(output), lambda: load_backend("openai-chat", backend),
                                   limit=items, progress=False)
        elapsed = time.perf_counter() - start
    if not complete:
        raise SystemExit("the eval run did not answer every request")
    return elapsed


def main_benchmark() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per request at the server")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with FakeChatServer(constant("Neutral"), latency=args.latency) as server, MachineWatch() as watch:
        timed_run(server.url, 4, 2)  # warm-up: imports, data checksums
        serial = timed_run(server.url, args.items, 1)
        parallel = timed_run(server.url, args.items, args.concurrency)
        assert server.total_calls == 4 + 2 * args.items
    print(f"{args.items} items, {args.latency * 1000:.0f} ms per request")
    print(f"concurrency 1:  {serial:7.2f} s")
    print(f"concurrency {args.concurrency}: {parallel:7.2f} s")
    print(f"speed-up: {serial / parallel:.1f}x")
    print(watch.summary())


if __name__ == "__main__":
    main_benchmark()
