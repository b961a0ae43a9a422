"""`pragmeter analyze profile` on 10,000 texts twice: the second run re-uses the on-disk embedding cache.

Both runs go through what the command runs (``analysis.profile.profile_source``, the model loaded each time, as a
user's second invocation would) with the same fresh cache folder; the first run fills it, the second only runs the small
heads on cached embeddings. Reported: both wall times and their ratio (first / second), measured side by side
in one process on the same machine.

    nice -n 5 python benchmarks/profile_cache.py --n 10000 --out profile_cache.json

Texts: a seeded sample of 10,000 distinct Latent Hatred stage-1 posts (data root), with their class as label.
Model: ``--model`` (default: the shipped default; any model with the same encoder gives the same timings).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from machine import MachineWatch

POSTS = "implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg1_posts.tsv"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="texts to profile (default 10000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default=None, help="ImpScore model (default: the shipped default)")
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--out", default=None, help="write the timings as JSON here")
    args = parser.parse_args()

    from pragmeter.data.root import data_file
    from pragmeter.io import read_table

    posts = read_table(data_file(POSTS, root=args.data_root))
    posts = posts[posts["post"].map(lambda t: isinstance(t, str) and t.strip() != "")]
    posts = posts.drop_duplicates("post").sample(args.n, random_state=args.seed)
    with tempfile.TemporaryDirectory(prefix="profile-cache-bench-") as tmp:
        table = Path(tmp) / "posts.csv"
        posts.to_csv(table, index=False)
        os.environ["PRAGMETER_CACHE"] = str(Path(tmp) / "cache")  # a cold cache for the first run
        from pragmeter.analysis.profile import profile_source
        from pragmeter.impscore.model import ImpScore

        times = []
        with MachineWatch() as watch:
            for run in ("cold cache", "warm cache"):
                start = time.perf_counter()  # as the command: the model loaded each time, the cache on disk
                for _ in profile_source(str(table), Path(tmp) / run.replace(" ", "-"),
                                        lambda: ImpScore.load(args.model, cache=True), column="post",
                                        label_columns=["class"]):
                    pass
                times.append(time.perf_counter() - start)
                print(f"{run}: {times[-1]:.1f} s", file=sys.stderr)
    result = {"texts": args.n, "first_run_s": round(times[0], 2), "second_run_s": round(times[1], 2),
              "ratio_first_over_second": round(times[0] / times[1], 2), "cpu_count": os.cpu_count(),
              "machine": platform.platform(), "command": " ".join(sys.argv),
              "machine_state": watch.record}
    print(json.dumps(result, indent=2))
    print(watch.summary())
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
