"""Embedding cache with 200,000 entries: lookups per second and a job's peak memory, old shard cache vs SQLite.

    nice -n 5 python benchmarks/embedding_cache.py --entries 200000 [--old-commit 1f04e76] [--out cache.json]

Both caches are filled with the same random 384-d float32 vectors (all-MiniLM-L6-v2's width) under fresh temporary
folders. Each measurement runs in a fresh child process, as a job would: open the cache, then either (a) look up
2 cached texts (a `pragmeter score` of two sentences) and report peak RSS, or (b) look up --lookups random cached
texts in one call and report lookups per second (open time excluded). The old implementation is the file
``src/pragmeter/impscore/embedding_cache.py`` at --old-commit (git show), the new one this checkout's
``src/pragmeter/encoders/embedding_cache.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
DIM = 384

CHILD = """
import importlib.util, json, resource, sys, time, numpy as np
spec = importlib.util.spec_from_file_location("cache_impl", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
root, n, lookups, mode = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def fail(texts):
    raise SystemExit(f"cache miss on {len(texts)} texts")
started = time.perf_counter()
cache = module.EmbeddingCache(root, "enc")
opened = time.perf_counter() - started
rng = np.random.default_rng(1)
texts = [f"text {i}" for i in (rng.choice(n, 2, replace=False) if mode == "rss" else rng.integers(0, n, lookups))]
started = time.perf_counter()
vectors = cache.get_or_compute(texts, fail)
seconds = time.perf_counter() - started
print(json.dumps({"open_s": opened, "lookup_s": seconds, "texts": len(texts),
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def fill(impl: Path, root: Path, n: int) -> float:
    code = f"""
import importlib.util, sys, numpy as np
spec = importlib.util.spec_from_file_location("cache_impl", {str(impl)!r})
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
cache = module.EmbeddingCache({str(root)!r}, "enc")
rng = np.random.default_rng(0)
texts = [f"text {{i}}" for i in range({n})]
cache.get_or_compute(texts, lambda batch: rng.standard_normal((len(batch), {DIM}), dtype=np.float32),
                     chunk_size=4096)
"""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=_env())
    return time.perf_counter() - started


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def measure(impl: Path, root: Path, n: int, lookups: int, mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(impl), str(root), str(n), str(lookups), mode],
                         check=True, capture_output=True, text=True, env=_env())
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--lookups", type=int, default=20_000, help="texts looked up in the throughput run")
    parser.add_argument("--old-commit", default="1f04e76", help="commit with the old shard cache")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    load_before = os.getloadavg()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        old_impl = tmp / "old_cache.py"
        old_impl.write_text(subprocess.run(["git", "-C", str(ROOT), "show",
                                            f"{args.old_commit}:src/pragmeter/impscore/embedding_cache.py"],
                                           check=True, capture_output=True, text=True).stdout)
        new_impl = ROOT / "src/pragmeter/encoders/embedding_cache.py"
        results = {}
        for name, impl in (("old-npz-shards", old_impl), ("sqlite-wal", new_impl)):
            root = tmp / name
            fill_s = fill(impl, root, args.entries)
            size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
            rss = measure(impl, root, args.entries, args.lookups, "rss")
            speed = measure(impl, root, args.entries, args.lookups, "speed")
            small = tmp / f"{name}-small"
            fill(impl, small, 2)
            baseline = measure(impl, small, 2, 2, "rss")
            results[name] = {"fill_s": round(fill_s, 1), "disk_mib": round(size / 2**20, 1),
                             "open_s": round(rss["open_s"], 3), "peak_rss_mib_2_texts": round(rss["peak_rss_mib"], 1),
                             "peak_rss_mib_2_texts_cache_of_2": round(baseline["peak_rss_mib"], 1),
                             "lookups_per_s": round(speed["texts"] / speed["lookup_s"]),
                             "lookup_s": round(speed["lookup_s"], 3)}
            print(name, results[name], flush=True)
    record = {"entries": args.entries, "lookups": args.lookups, "dim": DIM, "results": results,
              "load_avg_before": load_before, "load_avg_after": os.getloadavg(), "machine": platform.processor() or platform.machine(),
              "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    if args.out:
        Path(args.out).write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
