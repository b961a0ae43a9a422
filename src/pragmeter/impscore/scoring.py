"""Scoring a column of values: one implementation for ``pragmeter score --input`` (:func:`score_table`) and the Ray
engine's actors (the command itself, which prints, is pragmeter.cli.score).

Every value gets a score or, in ``impscore_error``, the reason it has none (empty text, missing value); values are
scored in chunks so a progress bar can follow and the embedding cache fills as the job goes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from pragmeter.errors import PragmeterError

SCORE_COLUMN, ERROR_COLUMN = "impscore", "impscore_error"
CHUNK_ENV, DEFAULT_CHUNK = "PRAGMETER_CHUNK_SIZE", 256


def chunk_size(default: int = DEFAULT_CHUNK) -> int:
    """Texts encoded per step of a long job (``$PRAGMETER_CHUNK_SIZE``, else ``default``): each step's embeddings
    reach the on-disk cache at once, so an interrupted job keeps every finished step and the progress bar moves per
    step."""
    value = os.environ.get(CHUNK_ENV, "").strip()
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise PragmeterError(f"${CHUNK_ENV}={value!r} must be a whole number >= 1 (texts per step; default "
                             f"{DEFAULT_CHUNK})")
    return int(value)


def in_steps(function, texts: list[str], description: str, progress: bool | None = None) -> np.ndarray:
    """``function`` (an encoder or scorer of a list of texts) applied :func:`chunk_size` texts at a time, its results
    concatenated; each step reaches the embedding cache before the next starts. ``progress``: a tqdm bar on stderr
    (None: only when stderr is a terminal)."""
    from tqdm import tqdm

    step, parts = chunk_size(), []
    with tqdm(total=len(texts), desc=description, unit="text", disable=None if progress is None else not progress,
              file=sys.stderr) as bar:
        for start in range(0, len(texts), step):
            parts.append(function(texts[start : start + step]))
            bar.update(len(parts[-1]))
    return np.concatenate(parts)


def encode_in_chunks(model, texts: list[str], description: str = "embedding") -> np.ndarray:
    """Encoder embeddings of ``texts`` (through the model's cache), in cache-committed steps (:func:`in_steps`)."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return in_steps(model.encode, texts, description)


def score_values(model, values: list, progress: bool | None = False) -> tuple[np.ndarray, list[str]]:
    """Scores of the valid values (NaN elsewhere) and why each other value has none ("" when scored).

    ``progress``: a tqdm bar on stderr (None: only when stderr is a terminal)."""
    import pandas as pd

    from pragmeter.text import invalid_text_reason

    # Ray hands string columns over with pd.NA for missing values; the local reader gives NaN or None.
    values = [None if v is pd.NA else v for v in values]
    errors = [invalid_text_reason(v) for v in values]
    valid = [i for i, e in enumerate(errors) if e is None]
    scores = np.full(len(values), np.nan, dtype=np.float64)
    if valid:  # scored step by step: a huge file never holds all its embeddings at once
        scores[valid] = in_steps(model.score, [values[i] for i in valid], "scoring", progress)
    return scores, [e or "" for e in errors]


def score_frame(model, frame, column: str, progress: bool | None = False):
    """``frame`` (every column, in order) plus ``impscore`` and ``impscore_error`` for its ``column``."""
    scores, errors = score_values(model, frame[column].tolist(), progress)
    frame = frame.copy()
    frame[SCORE_COLUMN] = scores
    frame[ERROR_COLUMN] = errors
    return frame


def require_output_columns_free(frame, path: str | os.PathLike) -> None:
    """A DataError naming ``path`` and the column when the table already has a column that scoring adds (its values
    would be silently replaced)."""
    from pragmeter.errors import DataError

    taken = [name for name in (SCORE_COLUMN, ERROR_COLUMN) if name in frame.columns]
    if taken:
        raise DataError(f"{path}: already has a column {taken[0]!r}, which scoring adds; rename that column "
                        "(its values would be replaced)")


def score_table(path: str | os.PathLike, column: str, output: str | os.PathLike, load_model: Callable[[], Any],
                overwrite: bool = False, progress: bool | None = False) -> tuple[Any, Any]:
    """``pragmeter score --input``: the table at ``path`` scored on ``column`` (:func:`score_frame`) and written to
    ``output``; returns it and the model. The output and the table are checked before ``load_model()`` runs, so a
    bad file fails fast."""
    from pragmeter.io import check_output, read_table, require_column, write_table

    output = check_output(output, overwrite)
    frame = read_table(path, text_columns=[column])  # an integer id column stays integers in the output
    require_column(frame, column, path)
    require_output_columns_free(frame, path)
    model = load_model()
    frame = score_frame(model, frame, column, progress=progress)
    write_table(frame, output, overwrite=overwrite)
    return frame, model
