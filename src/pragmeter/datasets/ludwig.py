"""LUDWIG (Ruis et al., NeurIPS 2023; dialogues from George & Mamidi 2020): a question, an indirect response and its
implicature, which begins with yes or no.

``test`` holds 600 items, ``dev`` 118 (the paper's in-context example pool). Each item's label is read as the paper's
code reads it (``do-pigs-fly`` ``src/dataset.py``): "yes" when the implicature's first five characters contain
"yes", else "no" when its first four contain "no"; an implicature that is neither is a DataError naming file, row and
field (the release has none). Question and response keep their text as released, final newlines stripped as there.

INLI built some of its premises from LUDWIG dialogues: ``in_inli`` marks an item whose (question, response) is one
of INLI's premises (:class:`pragmeter.datasets.inli.InliDialogues`), so that a model trained on INLI is also scored
on the items it never saw.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pragmeter.datasets.common import checked_split, read_columns
from pragmeter.errors import DataError

SPLITS = ("test", "dev")
LABELS = ("yes", "no")
_COLUMNS = ("Context utterance", "Response utterance", "Implicature")


FILES = {split: f"ludwig/data/{split}_conversational_implicatures.csv" for split in SPLITS}


def split_file(split: str) -> str:
    return FILES[checked_split("LUDWIG", split, SPLITS)]


@dataclass(frozen=True)
class LudwigItem:
    id: str  # "ludwig-<split>-<row>"
    question: str
    response: str
    implicature: str  # as released ("Yes.", "No. He …")
    label: str  # "yes" or "no"
    in_inli: bool  # the dialogue is one of INLI's premises


def implicature_label(implicature: str) -> str | None:
    """The paper's reading of an implicature: yes, no, or None when it begins with neither."""
    lowered = implicature.lower()
    if "yes" in lowered[:5]:
        return "yes"
    if "no" in lowered[:4]:
        return "no"
    return None


def load_ludwig(split: str = "test", root: str | os.PathLike | None = None) -> list[LudwigItem]:
    """All items of ``split`` in file order (checksum verified), each marked whether INLI holds its dialogue."""
    from pragmeter.datasets.inli import InliDialogues

    relative = split_file(split)
    frame = read_columns(relative, root, _COLUMNS)
    inli = InliDialogues(root)
    items = []
    for row, record in enumerate(frame.to_dict("records")):
        question, response = (record[c].strip("\n") for c in _COLUMNS[:2])
        for field, value in zip(_COLUMNS, (question, response, record["Implicature"])):
            if not value.strip():
                raise DataError(f"{relative}: data row {row + 1}: field {field!r} is empty")
        label = implicature_label(record["Implicature"])
        if label is None:
            raise DataError(f"{relative}: data row {row + 1}: field 'Implicature' is {record['Implicature']!r}, "
                            "which begins with neither yes nor no")
        items.append(LudwigItem(f"ludwig-{split}-{row}", question, response, record["Implicature"], label,
                                (question, response) in inli))
    return items
