"""INLI (Havaldar et al., ACL 2025): each premise row expands to four (premise, hypothesis, label) items.

All items are kept as released. In the test split, 3 premises have two identical hypotheses under different
labels (rows 93 and 477: implied = explicit; row 571: implied = contradiction), so no model can reach 1.0:
the best possible accuracy is 3997/4000 overall and 997/1000 on implied items.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING


from pragmeter.data.root import data_file
from pragmeter.datasets.common import read_frame
from pragmeter.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

SPLITS = ("train", "val", "test")
LABELS = ("implied", "explicit", "neutral", "contradiction")
# CSV column holding the hypothesis of each label, in LABELS order.
_COLUMNS = {"implied": "implied_entailment", "explicit": "explicit_entailment",
            "neutral": "neutral", "contradiction": "contradiction"}
SOURCES = ("circa", "ludwig", "normbank", "socialchem")


def split_file(split: str) -> str:
    if split not in SPLITS:
        raise DataError(f"INLI has no split {split!r}; choose one of {', '.join(SPLITS)}")
    return f"inli/INLI_Data/{split}.csv"


FILES = tuple(split_file(split) for split in SPLITS)


@dataclass(frozen=True)
class InliItem:
    id: str  # "<split>-<row>-<label>"
    premise: str
    hypothesis: str
    label: str  # one of LABELS
    source: str  # source dataset of the premise (circa / ludwig / normbank / socialchem)
    row: int  # 0-based data row in the CSV


def read_split(split: str, root: str | os.PathLike | None = None) -> pd.DataFrame:
    """A split's CSV as text cells (empty cells are "")."""
    return read_frame(split_file(split), root, dtype=str, keep_default_na=False)


def load_inli(split: str = "test", root: str | os.PathLike | None = None,
              path: str | os.PathLike | None = None) -> list[InliItem]:
    """All items of a split, premise by premise, labels in LABELS order (4 × rows items).

    ``path`` reads a file of your own in the INLI CSV schema instead (e.g. from ``pragmeter generate inli``;
    no checksum); ``split`` then only names the items.
    """
    from pragmeter.io import read_table, require_column  # lazy: pandas stays out of `pragmeter --help`

    if path is None:
        path, frame = data_file(split_file(split), root), read_split(split, root)
    else:
        frame = read_table(path)
    for field in ("dataset", "premise", *_COLUMNS.values()):
        require_column(frame, field, path)
    frame = frame.fillna("").astype(str)
    items: list[InliItem] = []
    for row, record in enumerate(frame.to_dict("records")):
        for field in ("dataset", "premise", *_COLUMNS.values()):
            if not record[field].strip():
                raise DataError(f"{path}: data row {row + 1}: field {field!r} is empty")
        for label in LABELS:
            items.append(InliItem(
                id=f"{split}-{row}-{label}", premise=record["premise"], hypothesis=record[_COLUMNS[label]],
                label=label, source=record["dataset"], row=row,
            ))
    return items
