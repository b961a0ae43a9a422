"""TaxiNLI (Joshi et al., EMNLP 2020): 10,071 MNLI pairs (2,343 from MNLI train, 7,728 from MNLI dev) tagged with 18
reasoning categories. ``taxinli10k.tsv`` is read; ``taxinli10k_MNLIDev.tsv`` repeats its dev rows with predictions."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, tsv_rows

FILES = {"train": "taxinli/taxinli10k.tsv"}
LABELS = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    relative = FILES[check_split("TaxiNLI", split, FILES)]
    rows = tsv_rows(relative, root, ("prem", "hyp", "label", "genre"))
    return checked_pairs(relative, rows, "taxinli", "prem", "hyp", "label", LABELS, group="genre")
