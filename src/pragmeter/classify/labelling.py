"""Labelling a user table with a local classifier (``pragmeter classifier predict``): every row kept, in order."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

log = logging.getLogger("pragmeter")

if TYPE_CHECKING:  # pandas and numpy load when a table is labelled: building the CLI parser stays fast
    import pandas as pd

PREDICTION_COLUMN, ERROR_COLUMN = "prediction", "prediction_error"


def row_errors(frame: pd.DataFrame, columns: list[str], path: str | os.PathLike) -> list[str]:
    """Per row, why it cannot be labelled ("" when it can): the first of ``columns`` without a text an encoder takes
    (:func:`pragmeter.text.invalid_text_reason`: empty, only spaces or invisible characters, a NUL…)."""
    from pragmeter.io import require_column
    from pragmeter.text import invalid_text_reason

    values = [require_column(frame, column, path).tolist() for column in columns]
    errors = []
    for row in range(len(frame)):
        reasons = [(c, invalid_text_reason(v[row])) for c, v in zip(columns, values)]
        bad = [(c, reason) for c, reason in reasons if reason]
        errors.append(f"field {bad[0][0]!r} is empty or not text ({bad[0][1]})" if bad else "")
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
                device: str | None = None, overwrite: bool = False, progress: bool = True, backend: str = "auto",
                precision: str = "auto") -> pd.DataFrame:
    """``pragmeter classifier predict``: the table at ``path`` labelled by the classifier folder ``model``
    (:func:`label_frame`) and written to ``output``, its rows reported (the ``pragmeter`` logger); returns it. The
    folder opens as every command opens it (:func:`pragmeter.classify.opening.open_classifier`: ``backend``,
    ``precision`` and ``device`` resolved once) and its runtime's signature is said. The output and the table are
    checked before the model loads, so a bad file fails fast."""
    from pragmeter.classify.opening import open_classifier
    from pragmeter.io import check_output, read_table, report_rows, write_table

    check_output(output, overwrite)
    frame = read_table(path)
    classifier, runtime = open_classifier(model, backend=backend, precision=precision, device=device,
                                          progress=progress)
    # how it runs, as `interpret` says it: a precision chosen by the folder's claim is seen
    log.info(f"classifier {model}: {runtime.signature()}")
    out = label_frame(classifier, frame, path, column, premise_column, hypothesis_column, batch_size,
                      progress=progress)
    write_table(out, output, overwrite=overwrite)
    report_rows(out[ERROR_COLUMN].tolist(), "labelled", output, ERROR_COLUMN,
                lambda row, reason: f"{path}: data row {row + 1}: {reason}")
    if classifier.truncated:  # labelled on their first max_length tokens only: say so, as `score` does
        log.info(f"note: {classifier.truncated} row(s) exceeded the classifier's token limit and were truncated")
    return out


PAIR_COLUMNS = ("premise", "hypothesis")
READING_COLUMNS = ("context", "utterance", "readings")
CHOICE_COLUMN, SCORES_COLUMN = "choice", "scores"


def readings_of(value) -> list[str] | str:
    """A row's readings (a list, or a JSON list in a text cell) or why they are not usable."""
    import json

    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return "field 'readings' is not a JSON list of texts"
    if hasattr(value, "tolist"):  # a parquet list cell
        value = value.tolist()
    if not isinstance(value, list) or len(value) < 2:
        return "field 'readings' must be a list of at least two texts"
    from pragmeter.text import invalid_text_reason

    empty = [(i, invalid_text_reason(text)) for i, text in enumerate(value) if invalid_text_reason(text)]
    return f"field 'readings': reading {empty[0][0]} is empty or not text ({empty[0][1]})" if empty else value


def table_kind(frame: pd.DataFrame, path: str | os.PathLike) -> str:
    """"pairs" (premise, hypothesis columns) or "readings" (context, utterance, readings); a DataError naming the
    file and its columns otherwise."""
    from pragmeter.errors import DataError

    if set(PAIR_COLUMNS) <= set(frame.columns):
        return "pairs"
    if set(READING_COLUMNS) <= set(frame.columns):
        return "readings"
    raise DataError(f"{path}: needs columns premise and hypothesis, or context, utterance and readings; "
                    f"available columns: {', '.join(map(str, frame.columns)) or '(none)'}")


def interpret_frame(interpreter, frame: pd.DataFrame, path: str | os.PathLike, batch_size: int = 64,
                    progress: bool = True) -> pd.DataFrame:
    """``frame`` read by an :class:`~pragmeter.interpreter.model.Interpreter`, every row kept in order. Rows of
    ``premise``/``hypothesis`` get the predicted label and one ``p_<label>`` column per label; rows of
    ``context``/``utterance``/``readings`` (a list, or a JSON list in a text cell; ``context`` may be empty) get the
    index of the reading chosen (``choice``) and every reading's score (``scores``, a JSON list). A row that cannot be
    read keeps its reason in ``prediction_error``. ``path`` names the table in errors."""
    import json

    import numpy as np

    from pragmeter.interpreter.model import premise

    if table_kind(frame, path) == "pairs":
        return label_frame(interpreter.classifier, frame, path, premise_column="premise",
                           hypothesis_column="hypothesis", batch_size=batch_size, progress=progress)
    errors = row_errors(frame, ["utterance"], path)
    contexts = frame["context"].tolist()
    readings: list = [None] * len(frame)
    for row, value in enumerate(frame["readings"].tolist()):
        context = contexts[row]
        if not errors[row] and context is not None and not isinstance(context, str) and not (
                isinstance(context, float) and np.isnan(context)):
            errors[row] = "field 'context' is not text"
        if not errors[row]:
            parsed = readings_of(value)
            if isinstance(parsed, str):
                errors[row] = parsed
            else:
                readings[row] = parsed
    valid = [row for row, error in enumerate(errors) if not error]
    premises = [premise(contexts[row] if isinstance(contexts[row], str) else "", frame["utterance"].iloc[row])
                for row in valid]
    ranked = iter(interpreter.scores_many(premises, [readings[row] for row in valid], batch_size, progress))
    choices, scores = [], []
    for error in errors:
        values = None if error else next(ranked)
        choices.append(int(np.argmax(values)) if values else -1)
        scores.append(json.dumps([round(v, 6) for v in values]) if values else "")
    out = frame.copy()
    out[CHOICE_COLUMN], out[SCORES_COLUMN], out[ERROR_COLUMN] = choices, scores, errors
    return out


def interpret_table(load_interpreter, path: str | os.PathLike, output: str | os.PathLike, batch_size: int = 64,
                    overwrite: bool = False, progress: bool = True) -> pd.DataFrame:
    """``pragmeter interpret --input``: :func:`interpret_frame` of the table at ``path``, written atomically to
    ``output``; rows that could not be read are reported (the first one by file, row and field). The
    output and the table's columns are checked before ``load_interpreter()`` loads the model: a bad file fails
    fast."""
    from pragmeter.io import check_output, read_table, report_rows, write_table
    from pragmeter.io.tables import table_format

    check_output(output, overwrite)
    frame = read_table(path)
    table_kind(frame, path)
    out = interpret_frame(load_interpreter(), frame, path, batch_size, progress)
    written = out
    if table_format(Path(output)) == ".jsonl":  # a JSON line holds the list itself (a table cell holds its JSON text)
        import json

        written = out.assign(**{SCORES_COLUMN: [json.loads(v) if v else None for v in out[SCORES_COLUMN]]})
    write_table(written, output, overwrite=overwrite)
    report_rows(out[ERROR_COLUMN].tolist(), "interpreted", output, ERROR_COLUMN,
                lambda row, reason: f"{path}: data row {row + 1}: {reason}")
    return out
