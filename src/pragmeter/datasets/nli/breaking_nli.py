"""Breaking NLI (Glockner et al., ACL 2018): 8,193 SNLI-based pairs that differ from their premise in one word or
phrase (lexical knowledge), in ``breaking_nli_dataset.zip`` as one JSON-lines file. Evaluation only (labels skewed:
mostly contradiction)."""

from __future__ import annotations

import json
import os
import zipfile

from pragmeter.data.root import data_file
from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs
from pragmeter.errors import DataError

FILES = {"test": "breaking_nli/breaking_nli_dataset.zip"}
MEMBER = "data/dataset.jsonl"
MEMBER_LIMIT = 64 * 2**20
LABELS = {"entailment": "entailment", "neutral": "neutral", "contradiction": "contradiction"}


def load(split: str = "test", root: str | os.PathLike | None = None) -> list[NliPair]:
    relative = FILES[check_split("Breaking NLI", split, FILES)]
    try:
        with zipfile.ZipFile(data_file(relative, root)) as archive:
            info = archive.getinfo(MEMBER)
            if info.file_size > MEMBER_LIMIT:
                raise DataError(f"{relative}: {MEMBER} is larger than {MEMBER_LIMIT} bytes")
            lines = archive.read(info).decode("utf-8").splitlines()
    except (zipfile.BadZipFile, KeyError, OSError, UnicodeDecodeError) as error:
        raise DataError(f"{relative}: not a zip holding {MEMBER} ({error})") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError:
                raise DataError(f"{relative}: {MEMBER} line {number}: not JSON") from None
    return checked_pairs(f"{relative}:{MEMBER}", rows, "breaking_nli", "sentence1", "sentence2", "gold_label", LABELS,
                         group="category")
