"""e-SNLI (Camburu et al., NeurIPS 2018): SNLI's dev (9,842) and test (9,824) pairs without the no-consensus ones,
one text per line in ``s1.<split>`` (premises), ``s2.<split>`` (hypotheses) and ``labels.<split>``. Both splits are
training material here (SNLI test is then no evaluation set)."""

from __future__ import annotations

import os

from pragmeter.data.root import data_file
from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs
from pragmeter.errors import DataError

SPLITS = ("dev", "test")
FOLDER = "esnli/dataset/eSNLI"
FILES = {split: tuple(f"{FOLDER}/{part}.{split}" for part in ("s1", "s2", "labels")) for split in SPLITS}
LABELS = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"}


def load(split: str = "dev", root: str | os.PathLike | None = None) -> list[NliPair]:
    files = FILES[check_split("e-SNLI", split, SPLITS)]
    columns = [data_file(relative, root).read_text(encoding="utf-8").splitlines() for relative in files]
    if len({len(column) for column in columns}) != 1:
        raise DataError(f"{FOLDER}: {', '.join(f'{f}: {len(c)} lines' for f, c in zip(files, columns))}; the "
                        "three files of a split must have one line per pair")
    rows = [{"premise": p, "hypothesis": h, "label": label} for p, h, label in zip(*columns)]
    return checked_pairs(files[2], rows, "esnli", "premise", "hypothesis", "label", LABELS)
