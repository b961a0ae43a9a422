"""MoNLI (Geiger et al., BlackboxNLP 2020): lexical entailment under negation (NMoNLI: train 1,002 / test 200) and
without it (PMoNLI, 1,476), on SNLI premises; labels entailment or neutral. ``train`` is NMoNLI train and PMoNLI."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, jsonl_rows

FILES = {"train": ("monli/nmonli_train.jsonl", "monli/pmonli.jsonl"), "test": ("monli/nmonli_test.jsonl",)}
LABELS = {"entailment": "entailment", "neutral": "neutral"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    pairs = []
    for relative in FILES[check_split("MoNLI", split, FILES)]:
        pairs += checked_pairs(relative, jsonl_rows(relative, root), "monli", "sentence1", "sentence2", "gold_label",
                               LABELS)
    return pairs
