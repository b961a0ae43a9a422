"""ConjNLI (Saha et al., EMNLP 2020): inference over conjunctions; the adversarially built training set (15,000) and
the hand-annotated dev set (623). The test set is released without labels and is not read."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, tsv_rows

FILES = {"train": "conjnli/data/NLI/adversarial_train_15k.tsv", "dev": "conjnli/data/NLI/conj_dev.tsv"}
LABELS = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    relative = FILES[check_split("ConjNLI", split, FILES)]
    rows = tsv_rows(relative, root, ("Premise", "Hypothesis", "Label"))
    return checked_pairs(relative, rows, "conjnli", "Premise", "Hypothesis", "Label", LABELS)
