"""Encoder batch size on a CPU: texts/s of the torch backend (``ImpScore.load(batch_size=N)``) for several sizes.

sentence-transformers sorts texts by length, but every batch is still padded to its longest text: on a CPU the
padding costs more than a large batch saves, most on texts of mixed lengths. The sizes alternate for ``--repeats``
rounds after a warm-up; the best round of each is reported, with the scores' largest difference from the first
size (batching changes only float rounding). The machine state is recorded (``machine.py``): only a quiet machine
gives figures.

    python benchmarks/cpu_batch_size.py --model impscore-minilm-general-ft --model impscore-mpnet-general

Texts: seeded ISHate posts (mixed lengths) and Latent Hatred stage-1 posts (short), de-duplicated.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np
from machine import MachineWatch

POSTS = "implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg1_posts.tsv"


def sample_texts(n: int, seed: int) -> dict[str, list[str]]:
    from pragmeter.data.root import data_file
    from pragmeter.datasets.labelled_sets import load_builtin
    from pragmeter.io import read_table

    ishate = list(dict.fromkeys(load_builtin("ishate", cap=n, seed=seed).texts))[:n]
    posts = read_table(data_file(POSTS))["post"].dropna().drop_duplicates().sample(n, random_state=seed).tolist()
    return {"ishate": ishate, "latent_hatred": posts}


def measure(model_name: str, texts: list[str], sizes: list[int], repeats: int) -> dict:
    from pragmeter.impscore.model import ImpScore

    models = {size: ImpScore.load(model_name, batch_size=size, backend="torch") for size in sizes}
    for model in models.values():
        model.score(texts[:8])  # warm-up: weights loaded, kernels chosen
    seconds: dict[int, list[float]] = {size: [] for size in sizes}
    scores: dict[int, np.ndarray] = {}
    for _ in range(repeats):
        for size, model in models.items():
            started = time.perf_counter()
            scores[size] = model.score(texts)
            seconds[size].append(time.perf_counter() - started)
    first = scores[sizes[0]]
    return {str(size): {"texts_per_s": round(len(texts) / min(seconds[size]), 1),
                        "max_abs_diff": float(np.abs(scores[size] - first).max())} for size in sizes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="ImpScore model(s) (default: the MiniLM and mpnet defaults)")
    parser.add_argument("--sizes", default="8,16,32,64", help="batch sizes, comma-separated (default 8,16,32,64)")
    parser.add_argument("--n", type=int, default=400, help="texts per set (default 400)")
    parser.add_argument("--repeats", type=int, default=2, help="alternating rounds (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the results as JSON here")
    args = parser.parse_args()

    import torch

    import pragmeter
    from pragmeter.provenance import code_commit

    sizes = [int(s) for s in args.sizes.split(",")]
    sets = sample_texts(args.n, args.seed)
    results = []
    with MachineWatch() as watch:
        for model in args.model or ["impscore-minilm-general-ft", "impscore-mpnet-general"]:
            for name, texts in sets.items():
                results.append({"model": model, "texts": name, "n": len(texts),
                                "sizes": measure(model, texts, sizes, args.repeats)})
    print(watch.summary())
    print("| model | texts | " + " | ".join(f"batch {s} texts/s" for s in sizes) + " | max abs Δscore |")
    print("|---|---|" + "---|" * (len(sizes) + 1))
    for r in results:
        cells = " | ".join(str(r["sizes"][str(s)]["texts_per_s"]) for s in sizes)
        worst = max(v["max_abs_diff"] for v in r["sizes"].values())
        print(f"| {r['model']} | {r['texts']} ({r['n']}) | {cells} | {worst:.1e} |")
    if args.out:
        from pragmeter.io import write_json_atomic

        write_json_atomic(args.out, {"pragmeter": pragmeter.__version__, "commit": code_commit(),
                                     "torch": torch.__version__, "threads": torch.get_num_threads(),
                                     "machine": platform.platform(), "date": time.strftime("%Y-%m-%d"),
                                     "machine_state": watch.record, "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
