"""INLI (Havaldar et al., ACL 2025): each premise row expands to four (premise, hypothesis, label) items.

All items are kept as released. In the test split, 3 premises have two identical hypotheses under different
labels (rows 93 and 477: implied = explicit; row 571: implied = contradiction), so no model can reach 1.0:
the best possible accuracy is 3997/4000 overall and 997/1000 on implied items.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING


from pragmeter.data.root import data_file
from pragmeter.datasets.common import checked_split, read_frame
from pragmeter.errors import DataError
from pragmeter.text import normalise

if TYPE_CHECKING:
    import pandas as pd

SPLITS = ("train", "val", "test")
LABELS = ("implied", "explicit", "neutral", "contradiction")
# CSV column holding the hypothesis of each label, in LABELS order.
_COLUMNS = {"implied": "implied_entailment", "explicit": "explicit_entailment",
            "neutral": "neutral", "contradiction": "contradiction"}
SOURCES = ("circa", "ludwig", "normbank", "socialchem")


def split_file(split: str) -> str:
    return f"inli/INLI_Data/{checked_split('INLI', split, SPLITS)}.csv"


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


# A Circa or LUDWIG premise as INLI writes it: 'NAME says, "QUESTION" NAME responds, "ANSWER"' (Circa's begin with
# the situation).
_DIALOGUE = re.compile(r'says, "(?P<question>.*)"\s*\S*\s*responds, "(?P<answer>.*)"\s*$', re.DOTALL)
QUESTION_SIMILARITY = 0.9  # a question this close (difflib ratio) to INLI's, with the same answer, is the same premise


def _key(text: str) -> str:
    """A dialogue turn compared with INLI's: letters and digits only, case folded (INLI re-punctuated some turns)."""
    return "".join(ch for ch in normalise(text) if ch.isalnum())


class InliDialogues:
    """The (question, answer) dialogues of INLI's Circa and LUDWIG premises, every split, for overlap checks.

    A dialogue is in INLI when its answer's key (:func:`_key`) equals a premise's answer and its question's key equals
    or nearly equals (:data:`QUESTION_SIMILARITY`) that premise's question: INLI corrected the typos of some
    LUDWIG questions ("Is th job going to be easy?"), and a short answer such as "Is the pope catholic?" recurs under
    different questions, which are different premises.
    """

    def __init__(self, root: str | os.PathLike | None = None):
        self.questions: dict[str, set[str]] = {}
        for split in SPLITS:
            frame = read_split(split, root)
            for row, (source, premise) in enumerate(zip(frame["dataset"], frame["premise"])):
                if source not in ("circa", "ludwig"):
                    continue
                found = _DIALOGUE.search(premise)
                if not found:
                    raise DataError(f"{split_file(split)}: data row {row + 1}: field 'premise' is not a "
                                    f"'… says, \"…\" … responds, \"…\"' dialogue")
                self.questions.setdefault(_key(found["answer"]), set()).add(_key(found["question"]))

    def __contains__(self, dialogue: tuple[str, str]) -> bool:
        question, answer = (_key(turn) for turn in dialogue)
        known = self.questions.get(answer, ())
        return question in known or any(
            SequenceMatcher(None, question, other).ratio() >= QUESTION_SIMILARITY for other in known)
