"""Counterfactually augmented SNLI (Kaushik et al., ICLR 2020): SNLI pairs and their minimal revisions of premise or
hypothesis that change the label, ``NLI/all_combined`` (train 8,330 / dev 1,000 / test 2,000)."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, tsv_rows

SPLITS = ("train", "dev", "test")
FILES = {split: f"cad_nli/NLI/all_combined/{split}.tsv" for split in SPLITS}
LABELS = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    relative = FILES[check_split("CAD-NLI", split, SPLITS)]
    rows = tsv_rows(relative, root, ("sentence1", "sentence2", "gold_label"))
    return checked_pairs(relative, rows, "cad_nli", "sentence1", "sentence2", "gold_label", LABELS)
