"""DRInQ (Arai & Ren): 231 validated multiple-choice items of question implicature.

``consensus`` is the human consensus letter; ``implied_comment`` is the generated (intended) implied meaning,
which is not always the consensus option. ``implied_letter`` is the option whose text equals
``implied_comment`` (case and final punctuation ignored), or None when no option matches.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import pandas as pd

from pragmeter.data.root import data_file
from pragmeter.datasets.common import read_frame
from pragmeter.errors import DataError
from pragmeter.io import read_table, require_column

FILE = "drinq/drinq_validated.csv"
FILES = (FILE,)
LETTERS = ("A", "B", "C", "D", "E")
_OPTION_START = re.compile(r"(?:^|\n)\s*([A-E])\.\s")


@dataclass(frozen=True)
class DrinqItem:
    id: str  # "drinq-<row>"
    question: str
    context: str
    options: tuple[tuple[str, str], ...]  # ((letter, text), ...) in A–E order
    consensus: str  # letter
    implied_comment: str
    implied_letter: str | None

    def option_text(self, letter: str) -> str:
        return dict(self.options)[letter]


def parse_options(options: str) -> tuple[tuple[str, str], ...]:
    """Split "A. … \\nB. … " into ((letter, text), …); raise ValueError unless exactly A–E in order."""
    parts = _OPTION_START.split(options)
    letters = tuple(parts[1::2])
    if letters != LETTERS or parts[0].strip():
        raise ValueError(f"expected options A. to E. in order, found {', '.join(letters) or 'none'}")
    return tuple((letter, text.strip()) for letter, text in zip(letters, parts[2::2]))


def _option_key(text: str) -> str:
    """An option's text compared with the implied comment: case, spacing and final punctuation left out."""
    return re.sub(r"\s+", " ", text).strip().rstrip(".!?").strip().lower()


def read_validated(root: str | os.PathLike | None = None) -> pd.DataFrame:
    """The validated items' CSV as text cells (empty cells are "")."""
    return read_frame(FILE, root, dtype=str, keep_default_na=False)


def load_drinq(root: str | os.PathLike | None = None, path: str | os.PathLike | None = None) -> list[DrinqItem]:
    """The validated items; ``path`` reads a file of your own in the same CSV schema instead (no checksum)."""
    if path is None:
        path, frame = data_file(FILE, root), read_validated(root)
    else:
        frame = read_table(path)
    for field in ("question", "context", "options", "consensus", "implied_comment"):
        require_column(frame, field, path)
    frame = frame.fillna("").astype(str)
    items = []
    for row, record in enumerate(frame.to_dict("records")):
        where = f"{path}: data row {row + 1}"
        if not record["question"].strip():
            raise DataError(f"{where}: field 'question' is empty")
        try:
            options = parse_options(record["options"])
        except ValueError as error:
            raise DataError(f"{where}: field 'options': {error}") from None
        consensus = record["consensus"].strip()
        if consensus not in LETTERS:
            raise DataError(f"{where}: field 'consensus' is {consensus!r}, expected a letter A–E")
        implied = record["implied_comment"].strip()
        matches = [letter for letter, text in options if _option_key(text) == _option_key(implied)]
        items.append(DrinqItem(
            id=f"drinq-{row}", question=record["question"].strip(), context=record["context"].strip(),
            options=options, consensus=consensus, implied_comment=implied,
            implied_letter=matches[0] if len(matches) == 1 else None,
        ))
    return items
