"""Labelling a user table with a local classifier (``pragmeter classifier predict``): every row kept, in order."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas and numpy load when a table is labelled: building the CLI parser stays fast
    import pandas as pd

PREDICTION_COLUMN, ERROR_COLUMN = "prediction", "prediction_error"


def row_errors(frame: pd.DataFrame, columns: list[str], path: str | os.PathLike) -> list[str]:
    """Per row, why it cannot be labelled ("" when it can): the first of ``columns`` without a text."""
    from pragmeter.io import require_column

    values = [require_column(frame, column, path).tolist() for column in columns]
    errors = []
    for row in range(len(frame)):
        empty = [c for c, v in zip(columns, values) if not isinstance(v[row], str) or not v[row].strip()]
        errors.append(f"field {empty[0]!r} is empty or not text" if empty else "")
    return errors


def label_frame(classifier, frame: pd.DataFrame, path: str | os.PathLike, column: str = "text",
                premise_column: str = "premise", hypothesis_column: str = "hypothesis", batch_size: int = 64,
                progress: bool = True) -> pd.DataFrame:
    """``frame`` with the predicted label (decided with the folder's decision bias), one ``p_<label>`` column per
    label and the reason a row has none (an empty text); pair models read the premise and hypothesis columns,
    single-text models ``column``. ``path`` names the table in errors."""
    import numpy as np

    pair = classifier.settings.input_kind == "pair"
    columns = [premise_column, hypothesis_column] if pair else [column]
    errors = row_errors(frame, columns, path)
    valid = [row for row, error in enumerate(errors) if not error]
    texts = [frame[columns[0]].iloc[row] for row in valid]
    pairs = [frame[columns[1]].iloc[row] for row in valid] if pair else None
    probabilities = np.full((len(frame), len(classifier.labels)), np.nan)
    if valid:
        probabilities[valid] = classifier.probabilities(texts, pairs, batch_size, progress=progress)
    out = frame.copy()
    decided = iter(classifier.decide(probabilities[valid]))
    out[PREDICTION_COLUMN] = [next(decided) if not e else "" for e in errors]
    for i, label in enumerate(classifier.labels):
        out[f"p_{label}"] = probabilities[:, i]
    out[ERROR_COLUMN] = errors
    return out


def label_table(model: str | os.PathLike, path: str | os.PathLike, output: str | os.PathLike, column: str = "text",
                premise_column: str = "premise", hypothesis_column: str = "hypothesis", batch_size: int = 64,
                device: str | None = None, overwrite: bool = False, progress: bool = True) -> pd.DataFrame:
    """``pragmeter classifier predict``: the table at ``path`` labelled by the classifier folder ``model``
    (:func:`label_frame`) and written to ``output``, its rows reported on stderr; returns it. The output and the
    table are checked before the model loads, so a bad file fails fast."""
    from pragmeter.classify.loading import load_classifier
    from pragmeter.io import check_output, read_table, report_rows, write_table

    check_output(output, overwrite)
    frame = read_table(path)
    classifier = load_classifier(model, device)
    out = label_frame(classifier, frame, path, column, premise_column, hypothesis_column, batch_size,
                      progress=progress)
    write_table(out, output, overwrite=overwrite)
    report_rows(out[ERROR_COLUMN].tolist(), "labelled", output, ERROR_COLUMN,
                lambda row, reason: f"{path}: data row {row + 1}: {reason}")
    if classifier.truncated:  # labelled on their first max_length tokens only: say so, as `score` does
        print(f"note: {classifier.truncated} row(s) exceeded the classifier's token limit and were truncated",
              file=sys.stderr)
    return out
