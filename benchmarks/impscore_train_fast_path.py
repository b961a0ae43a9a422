"""``impscore train``'s corpus embedding: the reference path (torch, fp32: the default until training took scoring's
fast path) against the default (``--backend auto --precision auto``: OpenVINO, bf16 where the CPU has it), side by
side in one run on the same corpus, each from an empty embedding cache, with the held-out metrics of both.

    python benchmarks/impscore_train_fast_path.py --corpus corpus.parquet      # the README's recipe on its corpus
    python benchmarks/impscore_train_fast_path.py --corpus corpus.parquet --pairs 2000 --seeds 0,1,2

Prints, per way: the wall time of ``impscore.training.train`` from an empty cache (corpus embedding and the
README's 30 epochs; the model folder is not written), and the test split's implicitness and pragmatics accuracy
for each seed (seeds after the first train on the cache: only the first seed is timed). The speed-up is reference
/ default; the metrics agree when the gap between the ways' means is within the seeds' spread. With the machine
state (``machine.py``) and a loud warning when the machine was not quiet.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import pandas as pd
from machine import MachineWatch

from pragmeter.impscore.corpus.build import load_corpus
from pragmeter.impscore.training import TrainConfig, train

WAYS = {"reference (torch fp32)": {"encoder_backend": "torch", "encoder_precision": "fp32"},
        "default (auto)": {"encoder_backend": "auto", "encoder_precision": "auto"}}
METRICS = ("implicitness_accuracy", "pragmatics_accuracy")


def subset(corpus: pd.DataFrame, pairs: int, seed: int) -> pd.DataFrame:
    """``pairs`` pairs drawn from every split in proportion (all of them when ``pairs`` is 0)."""
    if not pairs or pairs >= len(corpus):
        return corpus
    return corpus.groupby("split", group_keys=False).sample(frac=pairs / len(corpus), random_state=seed)


def run_way(corpus: pd.DataFrame, options: dict, recipe: dict, seeds: list[int]) -> dict:
    runs, seconds = [], None
    with tempfile.TemporaryDirectory() as cache:
        for seed in seeds:
            config = TrainConfig(**recipe, **options, seed=seed)
            started = time.perf_counter()
            result = train(config, None, corpus, cache_root=cache, show_progress=False)
            if seconds is None:
                seconds = time.perf_counter() - started
            runs.append({metric: result.test[metric] for metric in METRICS})
    return {"seconds": seconds, "runs": runs, "runtime": f"{config.encoder_backend} {config.encoder_precision}"}


def spread(values: list[float]) -> str:
    return f"{statistics.mean(values):.4f} ± {statistics.stdev(values):.4f}" if len(values) > 1 else f"{values[0]:.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True, help="corpus file (`pragmeter impscore corpus build --sources "
                                                        "general --output corpus.parquet`: the README's)")
    parser.add_argument("--pairs", type=int, default=0, help="pairs drawn from the corpus, every split in proportion "
                                                             "(default 0: all)")
    parser.add_argument("--seeds", default="0", help="comma-separated training seeds (default 0)")
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    args = parser.parse_args()

    corpus = subset(load_corpus(args.corpus), args.pairs, 0)
    seeds = [int(s) for s in args.seeds.split(",")]
    recipe = {"encoder": args.encoder, "alpha": 16.0, "source_weights": {"written_graded_everyday": 4.0}}
    recipe["source_weights"] = {k: v for k, v in recipe["source_weights"].items() if k in set(corpus["source"])}
    with MachineWatch() as watch:
        results = {name: run_way(corpus, options, recipe, seeds) for name, options in WAYS.items()}
    print(f"{args.encoder}, {len(corpus):,} pairs, 30 epochs, seeds {args.seeds}")
    for name, result in results.items():
        metrics = ", ".join(f"{metric} {spread([run[metric] for run in result['runs']])}" for metric in METRICS)
        print(f"{name:24s} [{result['runtime']}]: {result['seconds']:8.1f} s; test {metrics}")
    reference, default = (results[name]["seconds"] for name in WAYS)
    print(f"speed-up: {reference / default:.2f}x")
    print(watch.summary())


if __name__ == "__main__":
    main()
