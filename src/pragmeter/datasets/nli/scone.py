"""ScoNe (She et al., ACL 2023): negation scope, six conditions (no negation, one or two negations in or out of the
lexical item's scope), train 1,002 and test 200 pairs each; labels entailment or neutral. A condition's pair is the
file's edited sentences with their label (``sentence1_edited``, ``sentence2_edited``, ``gold_label_edited``); the
one-scoped condition has no edited sentences (its plain ones are the condition), as in ScoNe's own reader."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, csv_rows

CONDITIONS = ("no_negation", "one_not_scoped", "one_scoped", "one_scoped_one_not_scoped", "two_not_scoped",
              "two_scoped")
SPLITS = ("train", "test")
FILES = {split: tuple(f"scone/scone_nli/{split}/{c}.csv" for c in CONDITIONS) for split in SPLITS}
LABELS = {"entailment": "entailment", "neutral": "neutral"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    pairs = []
    for condition, relative in zip(CONDITIONS, FILES[check_split("ScoNe", split, SPLITS)]):
        edited = condition != "one_scoped"
        columns = ("sentence1_edited", "sentence2_edited", "gold_label_edited") if edited else (
            "sentence1", "sentence2", "gold_label")
        rows = [{**row, "condition": condition} for row in csv_rows(relative, root, columns)]
        pairs += checked_pairs(relative, rows, "scone", *columns, LABELS, group="condition")
    return pairs
