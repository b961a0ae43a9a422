"""HELP (Yanaka et al., *SEM 2019): monotonicity pairs made by replacing a phrase, labelled entailment or neutral; the
conjunction (6,076) and disjunction (438) files (the main training file is not in the data root)."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, tsv_rows

FILES = {"train": ("help/output_en/leskexppmb_and.tsv", "help/output_en/leskexppmb_or.tsv")}
LABELS = {"entailment": "entailment", "neutral": "neutral"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    pairs = []
    for relative in FILES[check_split("HELP", split, FILES)]:
        rows = tsv_rows(relative, root, ("ori_sentence", "new_sentence", "gold_label", "monotonicity"))
        pairs += checked_pairs(relative, rows, "help", "ori_sentence", "new_sentence", "gold_label", LABELS,
                               group="monotonicity")
    return pairs
