"""The ImpScore authors' released corpus (``all_data.csv``: pos_implicit, pos_explicit, neg_implicit,
neg_explicit): its pairs already carry their negatives."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from pragmeter.errors import DataError

OFFICIAL_COLUMNS = ["pos_implicit", "pos_explicit", "neg_implicit", "neg_explicit"]


def is_official(frame: pd.DataFrame) -> bool:
    return set(OFFICIAL_COLUMNS) <= set(frame.columns)


def require_values(frame: pd.DataFrame, columns: list[str], path: str | os.PathLike) -> None:
    """DataError naming the first data row whose cell in one of ``columns`` is missing or blank."""
    for column in columns:
        empty = frame[column].isna() | (frame[column].astype(str).str.strip() == "")
        if empty.any():
            row = int(np.flatnonzero(empty.to_numpy())[0])
            raise DataError(f"{path}: data row {row + 1}, field {column!r}: empty value")


def official_pairs(frame: pd.DataFrame, path: str | os.PathLike) -> pd.DataFrame:
    """The official schema's rows as (pair_id, source, implicit, explicit, negative, negative_pair_id, pragmatic,
    origin); every row is a paraphrase pair with its own negative (negative_pair_id -1)."""
    missing = [c for c in OFFICIAL_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}; available: {', '.join(map(str, frame.columns))}")
    require_values(frame, OFFICIAL_COLUMNS, path)
    return pd.DataFrame({
        "pair_id": np.arange(len(frame)),
        "source": frame["source"].astype(str) if "source" in frame.columns else "all_data",
        "implicit": frame["pos_implicit"].astype(str),
        "explicit": frame["pos_explicit"].astype(str),
        "negative": frame["neg_explicit"].astype(str),
        "negative_pair_id": -1,
        "pragmatic": True,
        "origin": [f"{Path(path).name}#{i}" for i in range(len(frame))],
    })
