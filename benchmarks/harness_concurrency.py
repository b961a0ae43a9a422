"""Harness throughput: concurrency 16 vs 1 against a fake OpenAI-compatible server with 200 ms per request.

Runs `pragmeter eval --tasks inli --limit 200` twice side by side in this process (no response cache), and
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

from machine import MachineWatch

from pragmeter.cli import main
from pragmeter.testing.fake_server import FakeChatServer, constant


def timed_run(url: str, items: int, concurrency: int) -> float:
    with tempfile.TemporaryDirectory() as output:
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["eval", "--tasks", "inli", "--limit", str(items), "--output", output, "--no-response-cache",
                         "--no-progress", "--model-args", f"base_url={url},model=fake,concurrency={concurrency}"])
        elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"pragmeter eval failed with exit code {code}")
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
