"""Scoring a column of values: one implementation for ``pragmeter score --input`` and the Ray engine's actors.

Every value gets a score or, in ``impscore_error``, the reason it has none (empty text, missing value); values are
scored in chunks so a progress bar can follow and the embedding cache fills as the job goes.
"""

from __future__ import annotations

import sys

import numpy as np

SCORE_COLUMN, ERROR_COLUMN = "impscore", "impscore_error"
CHUNK = 256  # each chunk's embeddings reach the on-disk cache at once: an interrupted job keeps them


def score_values(model, values: list, progress: bool | None = False) -> tuple[np.ndarray, list[str]]:
    """Scores of the valid values (NaN elsewhere) and why each other value has none ("" when scored).

    ``progress``: a tqdm bar on stderr (None: only when stderr is a terminal)."""
    import pandas as pd
    from tqdm import tqdm

    from pragmeter.impscore.model import invalid_text_reason

    # Ray hands string columns over with pd.NA for missing values; the local reader gives NaN or None.
    values = [None if v is pd.NA else v for v in values]
    errors = [invalid_text_reason(v) for v in values]
    valid = [i for i, e in enumerate(errors) if e is None]
    scores = np.full(len(values), np.nan, dtype=np.float64)
    with tqdm(total=len(valid), desc="scoring", unit="text", disable=None if progress is None else not progress,
              file=sys.stderr) as bar:
        for start in range(0, len(valid), CHUNK):
            rows = valid[start : start + CHUNK]
            scores[rows] = model.score([values[i] for i in rows])
            bar.update(len(rows))
    return scores, [e or "" for e in errors]


def score_frame(model, frame, column: str, progress: bool | None = False):
    """``frame`` (every column, in order) plus ``impscore`` and ``impscore_error`` for its ``column``."""
    scores, errors = score_values(model, frame[column].tolist(), progress)
    frame = frame.copy()
    frame[SCORE_COLUMN] = scores
    frame[ERROR_COLUMN] = errors
    return frame
