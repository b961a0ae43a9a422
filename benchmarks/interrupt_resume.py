"""Stop `pragmeter score --input` half-way through a large file (SIGINT or SIGKILL), run it again, and report
what the rerun had to encode and how long each part took (issue 15; the small-file test is
tests/adversarial/test_interrupts.py).

    python benchmarks/interrupt_resume.py --rows 200000 --signal KILL --workdir runs/interrupt
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

CLI = [sys.executable, "-m", "pragmeter"]
POSTS = "implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg3_posts.tsv"


def shard_keys(cache: Path) -> list[str]:
    """Every key stored in the embedding shards, repeats included (a text encoded twice is stored twice)."""
    keys = []
    for path in cache.glob("embeddings/*/shard-*.npz"):
        with np.load(path) as shard:
            keys.extend(shard["keys"].tolist())
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--signal", choices=["INT", "KILL"], default="KILL")
    parser.add_argument("--workdir", default="runs/interrupt")
    args = parser.parse_args()
    from pragmeter.data.root import data_file
    from pragmeter.encoders.embedding_cache import text_key

    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    posts = pd.read_csv(data_file(POSTS), sep="\t", dtype=str)["post"].dropna()
    # distinct texts (numbered variants of real posts), so that every row costs an encoding
    texts = [f"{posts.iloc[i % len(posts)]} ({i // len(posts)})" for i in range(args.rows)]
    source, target, cache = work / "in.csv", work / "out.parquet", work / "cache"
    pd.DataFrame({"id": range(args.rows), "text": texts}).to_csv(source, index=False)
    env = {**os.environ, "PRAGMETER_CACHE": str(cache)}
    command = [*CLI, "score", "--input", str(source), "--output", str(target)]

    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    while len(shard_keys(cache)) < args.rows // 2 and process.poll() is None:
        time.sleep(1)
    process.send_signal(getattr(signal, f"SIG{args.signal}"))
    process.wait()
    first = time.perf_counter() - start
    done = shard_keys(cache)

    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, stderr=subprocess.DEVNULL)
    second = time.perf_counter() - start
    after = shard_keys(cache)
    out = pd.read_parquet(target)
    expected = {text_key(t) for t in texts}
    print(f"rows {args.rows}, signal {args.signal}, exit of the stopped run {process.returncode}")
    print(f"stopped run: {first:.1f} s, {len(done)} texts encoded and kept")
    print(f"rerun: {second:.1f} s, {len(after) - len(done)} texts encoded "
          f"(unfinished: {len(expected - set(done))}; encoded twice: {len(after) - len(set(after))})")
    print(f"output: {len(out)} rows, in order: {out['id'].astype(int).tolist() == list(range(args.rows))}, "
          f"scored: {int((out['impscore_error'] == '').sum())}")


if __name__ == "__main__":
    main()
