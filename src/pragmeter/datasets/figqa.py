"""Fig-QA (Liu et al., NAACL 2022): a creative metaphor (``startphrase``) and two endings, one its meaning and the
other the opposite; metaphors with opposite meanings share a ``qid`` and its endings (a Winograd-style pair).

The benchmark reads the validation split ``data/filtered/dev.csv`` (1,094 metaphors, every one marked valid): the
test split's labels are hidden upstream (``labels`` is -1), so evaluating on it is refused with the reason.
``train_xl.csv`` is the ImpScore corpus source (``datasets/pairs/figqa.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pragmeter.datasets.common import checked_split, read_columns
from pragmeter.errors import DataError

SPLITS = ("dev",)
_COLUMNS = ("startphrase", "ending1", "ending2", "labels", "valid", "qid")


def split_file(split: str) -> str:
    if split == "test":
        raise DataError("Fig-QA's test labels are hidden upstream (scored only on its leaderboard); use split dev")
    return f"figqa/data/filtered/{checked_split('Fig-QA', split, SPLITS)}.csv"


@dataclass(frozen=True)
class FigqaItem:
    id: str  # "figqa-<split>-<row>"
    metaphor: str
    endings: tuple[str, str]
    answer: int  # index of the meant ending
    qid: str


def load_figqa(split: str = "dev", root: str | os.PathLike | None = None) -> list[FigqaItem]:
    """The split's valid metaphors in file order (checksum verified); a row with a bad label or empty text is a
    DataError naming file, row and field."""
    relative = split_file(split)
    frame = read_columns(relative, root, _COLUMNS)
    items = []
    for row, record in enumerate(frame.to_dict("records")):
        if record["valid"].strip() != "1":
            continue
        label = record["labels"].strip()
        if label not in ("0", "1"):
            raise DataError(f"{relative}: data row {row + 1}: field 'labels' is {label!r}, expected 0 or 1")
        for field in ("startphrase", "ending1", "ending2"):
            if not record[field].strip():
                raise DataError(f"{relative}: data row {row + 1}: field {field!r} is empty")
        items.append(FigqaItem(f"figqa-{split}-{row}", record["startphrase"].strip(),
                               (record["ending1"].strip(), record["ending2"].strip()), int(label), record["qid"]))
    return items
