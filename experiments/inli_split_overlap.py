"""Do INLI's test (or val) items occur in its train split? Exact matches after lower-casing and dropping
punctuation, per column, and the premises' nearest train premise by word Jaccard (issue 13).

    python experiments/inli_split_overlap.py            # test against train
    python experiments/inli_split_overlap.py --split val
"""
from __future__ import annotations

import argparse
import re

import numpy as np

from pragmeter.datasets.inli import read_split
from pragmeter.metrics.overlap import max_word_jaccard

COLUMNS = ["premise", "implied_entailment", "explicit_entailment", "neutral", "contradiction"]


def punctuation_free(text) -> str:
    return re.sub(r"\W+", " ", str(text).lower()).strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test", choices=["test", "val"], help="held-out split (default test)")
    parser.add_argument("--limit", type=int, default=None, help="first N held-out items only (smoke runs)")
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args(argv)
    train, held = read_split("train", args.data_root), read_split(args.split, args.data_root)
    if args.limit:
        held = held.head(args.limit)
    for column in COLUMNS:
        seen = set(train[column].map(punctuation_free))
        found = int(held[column].map(punctuation_free).isin(seen).sum())
        print(f"{column}: {found} of {len(held)} {args.split} items occur in train")
    nearest, _ = max_word_jaccard(held["premise"].astype(str).tolist(), train["premise"].astype(str).tolist())
    nearest = np.asarray(nearest)
    print(f"premises with a train premise at word Jaccard >= 0.8: {int((nearest >= 0.8).sum())}, >= 0.5: "
          f"{int((nearest >= 0.5).sum())} (of {len(held)})")


if __name__ == "__main__":
    main()
