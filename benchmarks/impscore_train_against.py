"""The README's ``impscore train`` command, end to end, under another checkout and under this one: side by side in
one run, each in its own process from an empty cache (``$PRAGMETER_CACHE``: the fast path's one-time encoder
export is part of its time), on the same corpus. What a user of that checkout waited for against what a user
waits for now.

    git worktree add /tmp/before b762a4b
    python benchmarks/impscore_train_against.py --against /tmp/before --corpus corpus.parquet --pairs 30000
    python benchmarks/impscore_train_against.py --against /tmp/before --corpus corpus.parquet --prepared

``--prepared``: each checkout first runs the README's first command (``pragmeter score`` of its two sentences) in its
empty cache, untimed, as a user who followed the README has: the one-time encoder preparation is then behind both,
and the corpus's embeddings are still all to compute.

Prints, per checkout: the wall time of the command, the seconds until its first line on stderr (progress), and
the test split's implicitness and pragmatics accuracy from the model folder it wrote; then the speed-up (the other
checkout / this one) and the machine state (``machine.py``), with a loud warning when the machine was not quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from impscore_train_fast_path import subset
from machine import MachineWatch

from pragmeter.impscore.corpus.build import load_corpus

THIS_CHECKOUT = Path(__file__).resolve().parents[1]
RECIPE = ["--encoder", "all-MiniLM-L6-v2", "--alpha", "16", "--source-weight", "written_graded_everyday=4"]
README_SCORED = ["You are talking too loudly.", "I'm finding it a bit hard to concentrate."]  # its first command
CLI = "import sys; from pragmeter.cli import main; sys.exit(main())"
METRICS = ("implicitness_accuracy", "pragmatics_accuracy")


def environment(checkout: Path, cache: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src"), "PRAGMETER_CACHE": cache}
    found = subprocess.run([sys.executable, "-c", "import pragmeter; print(pragmeter.__file__)"], env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    if not Path(found).resolve().is_relative_to((checkout / "src").resolve()):
        raise SystemExit(f"{checkout}: python imports pragmeter from {found}, not from that checkout")
    return env


def run_checkout(checkout: Path, corpus: Path, prepared: bool) -> dict:
    """The README's command under ``checkout``: wall time, time to its first stderr line, its test metrics."""
    with tempfile.TemporaryDirectory() as work:
        env = environment(checkout, str(Path(work) / "cache"))
        if prepared:
            subprocess.run([sys.executable, "-c", CLI, "score", *README_SCORED], env=env, capture_output=True,
                           check=True)
        output = Path(work) / "model"
        first_line: list[float] = []
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-c", CLI, "impscore", "train", "--corpus", str(corpus), *RECIPE,
                                    "--output", str(output)], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)

        def watch_stderr() -> None:
            for _ in iter(lambda: process.stderr.read(1), ""):
                if not first_line:
                    first_line.append(time.perf_counter() - started)

        reader = threading.Thread(target=watch_stderr, daemon=True)
        reader.start()
        stdout = process.stdout.read()
        code = process.wait()
        seconds = time.perf_counter() - started
        reader.join()
        if code:
            raise SystemExit(f"{checkout}: impscore train exited {code}: {stdout[-2000:]}")
        test = json.loads((output / "config.json").read_text(encoding="utf-8"))["metrics"]["test"]
    return {"seconds": seconds, "first_output": first_line[0] if first_line else None,
            "test": {metric: test[metric] for metric in METRICS}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, type=Path, help="another checkout (a folder with src/pragmeter)")
    parser.add_argument("--corpus", required=True, type=Path,
                        help="corpus file (`pragmeter impscore corpus build --sources general --output "
                             "corpus.parquet`: the README's)")
    parser.add_argument("--pairs", type=int, default=0, help="pairs drawn from the corpus, every split in proportion "
                                                             "(default 0: all)")
    parser.add_argument("--prepared", action="store_true", help="run the README's `pragmeter score` once in each "
                                                                "cache first (untimed)")
    args = parser.parse_args()

    corpus = subset(load_corpus(args.corpus), args.pairs, 0)
    checkouts = {f"{args.against} (before)": args.against.resolve(), "this checkout": THIS_CHECKOUT}
    with tempfile.TemporaryDirectory() as folder:
        corpus_file = Path(folder) / "corpus.parquet"
        corpus.to_parquet(corpus_file)
        with MachineWatch() as watch:
            results = {name: run_checkout(checkout, corpus_file, args.prepared) for name, checkout in checkouts.items()}
    cache = "after `pragmeter score` in an empty cache" if args.prepared else "from an empty cache"
    print(f"pragmeter impscore train --corpus CORPUS {' '.join(RECIPE)}; {len(corpus):,} pairs; {cache}")
    for name, result in results.items():
        metrics = ", ".join(f"{metric} {value:.4f}" for metric, value in result["test"].items())
        first = "none" if result["first_output"] is None else f"{result['first_output']:.1f} s"
        print(f"{name:32s} {result['seconds']:8.1f} s (first stderr line after {first}); test {metrics}")
    before, now = (result["seconds"] for result in results.values())
    print(f"speed-up: {before / now:.2f}x")
    print(watch.summary())


if __name__ == "__main__":
    main()
