"""INLI's own word-sharing hypotheses as hard negatives for ImpScore's pragmatic head (issue 11, battery (b)).

    python tools/inli_hard_negatives.py runs/corpus_default.parquet runs/inli_hn    # corpus_contradiction / _neutral / _all

Each `inli_train` pair (premise -> implied hypothesis) gets the same premise's contradiction (or neutral) hypothesis
as its `hard_negative`: text by another writer (the INLI authors) that shares the premise's words and means something
else. `corpus_all` also keeps the local LLM's distractors of `tools/llm_distractors.py corpus` (its "add" corpus,
which must exist). Experiments only (docs/results.md, "INLI's hypotheses as hard negatives"); nothing shipped.
"""
import sys
from pathlib import Path

import pandas as pd

from pragmeter.datasets import inli

if __name__ == "__main__":
    base, out_dir = pd.read_parquet(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    frame = inli.read_split("train")
    rows = base.source == "inli_train"
    negatives = {}
    for column in ("contradiction", "neutral"):
        lookup = {(p.strip(), i.strip()): h.strip()
                  for p, i, h in zip(frame.premise, frame.implied_entailment, frame[column]) if isinstance(h, str)}
        corpus = base.copy()
        corpus.loc[rows, "hard_negative"] = negatives[column] = [
            lookup.get((a, b)) for a, b in zip(corpus.implicit[rows], corpus.explicit[rows])]
        print(f"{column}: {corpus.loc[rows, 'hard_negative'].notna().sum()} of {rows.sum()} inli_train pairs")
        corpus.to_parquet(out_dir / f"corpus_{column}.parquet")
    llm = Path("runs/distractors/corpus_add.parquet")
    if llm.exists():
        corpus = pd.read_parquet(llm)
        assert (corpus.pair_id.values == base.pair_id.values).all(), "the LLM corpus was built from another corpus"
        corpus.loc[rows, "hard_negative"] = negatives["contradiction"]
        corpus.to_parquet(out_dir / "corpus_all.parquet")
        print("all: contradiction + the LLM's distractors")
    else:
        print(f"all: not written ({llm} is missing: run tools/llm_distractors.py generate, then corpus)")
