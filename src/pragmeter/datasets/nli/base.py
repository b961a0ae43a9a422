"""What an NLI set's reader returns, and the checked row reader every NLI reader shares.

An NLI set is (premise, hypothesis, label) rows. Labels are normalised to ``entailment``, ``neutral`` and
``contradiction`` (3-way sets) or ``entailment`` and ``not_entailment`` (2-way sets whose "no" is not split into neutral
and contradiction); a set whose "no" is always neutral (monotonicity sets) says ``neutral``. How these meet INLI's four
labels is the training recipe's choice (``classify/recipes/interpreter.py``), not the reader's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pragmeter.data.root import data_file
from pragmeter.errors import DataError

NLI_LABELS = ("entailment", "neutral", "contradiction", "not_entailment")


@dataclass(frozen=True)
class NliPair:
    premise: str
    hypothesis: str
    label: str  # one of NLI_LABELS
    source: str  # the set's name ("sick", "imppres_presupposition", …)
    origin: str  # data-root file and 1-based data row, "file#row"
    group: str = ""  # a subset inside the set (a DNC recast, an IMPPRES trigger, a ScoNe condition, …)


def checked_pairs(relative: str, rows: Iterable[Mapping], source: str, premise: str, hypothesis: str, label: str,
                  labels: Mapping[str, str], group: str | None = None, skip: Iterable[str] = ()) -> list[NliPair]:
    """``rows`` of ``relative`` as pairs: fields ``premise``/``hypothesis``/``label`` read by name, the label mapped
    through ``labels`` (upstream value -> NLI label; a value in ``skip`` leaves the row out, as its set's paper does).
    A missing or empty text or an unknown label is a DataError naming the file, row and field."""
    skipped = set(skip)
    pairs = []
    for number, row in enumerate(rows, 1):
        where = f"{relative}: data row {number}"
        values = {}
        for field in (premise, hypothesis, label):
            value = row.get(field)
            if value is None or (isinstance(value, float) and value != value):
                raise DataError(f"{where}: field {field!r} is missing")
            values[field] = str(value).strip()
        if values[label] in skipped:
            continue
        if values[label] not in labels:
            raise DataError(f"{where}: field {label!r} is {values[label]!r}, not one of "
                            f"{', '.join(sorted(labels))}")
        for field in (premise, hypothesis):
            if not values[field]:
                raise DataError(f"{where}: field {field!r} is empty")
        pairs.append(NliPair(values[premise], values[hypothesis], labels[values[label]], source,
                             f"{relative}#{number}", str(row.get(group, "")).strip() if group else ""))
    return pairs


def tsv_rows(relative: str, root: str | os.PathLike | None, columns: tuple[str, ...], **options) -> list[dict]:
    """The rows of a data-root TSV (checksum verified) as text cells, refused in one line without ``columns``."""
    from pragmeter.datasets.common import read_columns

    options.setdefault("sep", "\t")
    options.setdefault("quoting", 3)  # csv.QUOTE_NONE: NLI text holds unbalanced quotes
    return read_columns(relative, root, columns, encoding="utf-8-sig", **options).to_dict("records")


def csv_rows(relative: str, root: str | os.PathLike | None, columns: tuple[str, ...]) -> list[dict]:
    from pragmeter.datasets.common import read_columns

    return read_columns(relative, root, columns, encoding="utf-8-sig").to_dict("records")


def jsonl_rows(relative: str, root: str | os.PathLike | None) -> list[dict]:
    from pragmeter.io.tables import jsonl_records

    return jsonl_records(data_file(relative, root))


def json_list(relative: str, root: str | os.PathLike | None) -> list[dict]:
    from pragmeter.io import read_json

    rows = read_json(data_file(relative, root), list, "a JSON list of pairs")
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise DataError(f"{relative}: data row {number}: not a JSON object")
    return rows


def check_split(name: str, split: str, splits: Iterable[str]) -> str:
    from pragmeter.datasets.common import checked_split

    return checked_split(name, split, tuple(splits))
