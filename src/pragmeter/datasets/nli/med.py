"""MED (Yanaka et al., BlackboxNLP 2019): 5,382 monotonicity pairs, upward and downward, labelled entailment or
neutral (its "no" is always neutral). ``MED.tsv`` is read (``MED_ver_1.tsv`` is an earlier release)."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, tsv_rows

FILES = {"train": "med/MED.tsv"}
LABELS = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    relative = FILES[check_split("MED", split, FILES)]
    rows = tsv_rows(relative, root, ("sentence1", "sentence2", "gold_label", "genre"))
    return checked_pairs(relative, rows, "med", "sentence1", "sentence2", "gold_label", LABELS, group="genre")
