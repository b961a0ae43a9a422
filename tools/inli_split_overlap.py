"""Do INLI's test (or val) items occur in its train split? Exact matches after lower-casing and dropping
punctuation, per column, and the premises' nearest train premise by word Jaccard (docs/results.md, issue 13).

    python tools/inli_split_overlap.py            # test against train
    python tools/inli_split_overlap.py val
"""
import re
import sys

import numpy as np

from pragmeter.datasets.inli import read_split
from pragmeter.metrics.overlap import max_word_jaccard

COLUMNS = ["premise", "implied_entailment", "explicit_entailment", "neutral", "contradiction"]
split = sys.argv[1] if len(sys.argv) > 1 else "test"
train, held = read_split("train"), read_split(split)


def norm(text) -> str:
    return re.sub(r"\W+", " ", str(text).lower()).strip()


for column in COLUMNS:
    seen = set(train[column].map(norm))
    print(f"{column}: {int(held[column].map(norm).isin(seen).sum())} of {len(held)} {split} items occur in train")
nearest, _ = max_word_jaccard(held["premise"].astype(str).tolist(), train["premise"].astype(str).tolist())
nearest = np.asarray(nearest)
print(f"premises with a train premise at word Jaccard >= 0.8: {int((nearest >= 0.8).sum())}, >= 0.5: "
      f"{int((nearest >= 0.5).sum())} (of {len(held)})")
