"""ConTRoL (Liu et al., AAAI 2021): NLI over long passages (contextual reasoning), dev 799 / test 805; labels ``e`` /
``n`` / ``c``. Evaluation only (the training file is not in the data root)."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, jsonl_rows

SPLITS = ("dev", "test")
FILES = {split: f"control/data/{split}.jsonl" for split in SPLITS}
LABELS = {"e": "entailment", "n": "neutral", "c": "contradiction"}


def load(split: str = "test", root: str | os.PathLike | None = None) -> list[NliPair]:
    relative = FILES[check_split("ConTRoL", split, SPLITS)]
    return checked_pairs(relative, jsonl_rows(relative, root), "control", "premise", "hypothesis", "label", LABELS)
