"""XNLI's English part (Conneau et al., EMNLP 2018): MNLI-style pairs written for XNLI, validation 2,490 and test
5,010, each a one-file ``.tar.gz`` holding a TSV (``label`` 0 = entailment, 1 = neutral, 2 = contradiction).
Evaluation only."""

from __future__ import annotations

import io
import os
import tarfile

from pragmeter.data.root import data_file
from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs
from pragmeter.errors import DataError

SPLITS = ("validation", "test")
FILES = {split: f"xnli_en/xnli_{split}_en.tar.gz" for split in SPLITS}
LABELS = {"0": "entailment", "1": "neutral", "2": "contradiction"}
MEMBER_LIMIT = 64 * 2**20  # a member larger than this is not XNLI's English split


def load(split: str = "test", root: str | os.PathLike | None = None) -> list[NliPair]:
    import pandas as pd

    relative = FILES[check_split("XNLI-en", split, SPLITS)]
    path = data_file(relative, root)
    try:
        with tarfile.open(path, "r:gz") as archive:
            members = [m for m in archive.getmembers() if m.isfile() and m.name.endswith(".tsv")]
            if len(members) != 1 or members[0].size > MEMBER_LIMIT:
                raise DataError(f"{relative}: expected one TSV file of at most {MEMBER_LIMIT} bytes")
            text = archive.extractfile(members[0]).read().decode("utf-8")
    except (tarfile.TarError, OSError, UnicodeDecodeError) as error:
        raise DataError(f"{relative}: not a readable .tar.gz of one UTF-8 TSV ({error})") from None
    frame = pd.read_csv(io.StringIO(text), sep="\t", dtype=str, keep_default_na=False, quoting=3)
    for column in ("premise", "hypothesis", "label"):
        if column not in frame.columns:
            raise DataError(f"{relative}: no column {column!r}")
    return checked_pairs(relative, frame.to_dict("records"), "xnli_en", "premise", "hypothesis", "label", LABELS)
