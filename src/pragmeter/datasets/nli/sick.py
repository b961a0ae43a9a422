"""SICK (Marelli et al., LREC 2014): 9,840 sentence pairs with entailment labels, split by ``SemEval_set`` into TRAIN,
TRIAL and TEST; ``train`` here is TRAIN and TRIAL, ``test`` is TEST. Labels from ``SICK.txt`` as released."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, tsv_rows

FILE = "sick/SICK.txt"
FILES = {"train": FILE, "test": FILE}
PARTS = {"train": ("TRAIN", "TRIAL"), "test": ("TEST",)}
LABELS = {"ENTAILMENT": "entailment", "NEUTRAL": "neutral", "CONTRADICTION": "contradiction"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    parts = PARTS[check_split("SICK", split, PARTS)]
    rows = tsv_rows(FILE, root, ("sentence_A", "sentence_B", "entailment_label", "SemEval_set"))
    pairs = checked_pairs(FILE, rows, "sick", "sentence_A", "sentence_B", "entailment_label", LABELS,
                          group="SemEval_set")
    return [pair for pair in pairs if pair.group in parts]
