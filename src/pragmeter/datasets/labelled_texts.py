"""Any table of texts with a binary label (e.g. hateful or not), for yes/no detection benchmarks.

Accepted label values: 1/0, true/false, yes/no; or any values with ``positive`` naming the positive one
(e.g. ``positive="HS"``). Extra columns are kept in ``extra`` so analyses can stratify the results later.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from pragmeter.errors import DataError
from pragmeter.io import read_table, require_column
from pragmeter.text import is_missing

_TRUE = {"1", "true", "yes", "1.0"}
_FALSE = {"0", "false", "no", "0.0"}


@dataclass(frozen=True)
class LabelledText:
    id: str  # "<file stem>-<row>"
    text: str
    label: bool
    row: int  # 0-based data row
    extra: dict = field(default_factory=dict, compare=False)


def parse_label(value, positive: str | None) -> bool | None:
    if is_missing(value):
        return None
    text = str(value).strip()
    if positive is not None:
        return text == positive
    lowered = text.lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else None


def load_labelled_texts(path: str | os.PathLike, text_column: str = "text", label_column: str = "label",
                        positive: str | None = None) -> list[LabelledText]:
    frame = read_table(path)
    texts = require_column(frame, text_column, path)
    labels = require_column(frame, label_column, path)
    stem = os.path.basename(os.fspath(path)).split(".")[0]
    items = []
    for row, (text, raw) in enumerate(zip(texts, labels)):
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"{path}: data row {row + 1}: field {text_column!r} is empty")
        label = parse_label(raw, positive)
        if label is None:
            raise DataError(f"{path}: data row {row + 1}: field {label_column!r} is {raw!r}; use 1/0, true/false, "
                            "yes/no, or name the positive value with positive=VALUE")
        extra = {k: v for k, v in frame.iloc[row].to_dict().items() if k not in (text_column, label_column)}
        items.append(LabelledText(id=f"{stem}-{row}", text=text, label=label, row=row, extra=extra))
    return items
