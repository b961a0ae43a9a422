"""Correlation between two score columns of one table, or of two tables joined on key columns."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from pragmeter.errors import PragmeterError
from pragmeter.io import read_table, require_column
from pragmeter.metrics.correlation import correlations


def _numeric(series: pd.Series, column: str, path: str | os.PathLike) -> pd.Series:
    series = series.mask(series.map(lambda v: isinstance(v, str) and not v.strip()))  # blank = missing
    values = pd.to_numeric(series, errors="coerce")
    bad = series.notna() & values.isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise PragmeterError(f"{path}: data row {row + 1}: column {column!r} is {series.iloc[row]!r}, not a number")
    return values


def paired_columns(path: str | os.PathLike, x: str, y: str, y_table: str | os.PathLike | None = None,
                   on: list[str] | None = None) -> pd.DataFrame:
    """Columns ``_x`` and ``_y`` side by side: both from ``path``, or ``y`` from ``y_table`` joined on the ``on``
    columns (unique in ``y_table``; inner join). Blank cells are missing; any other non-number is an error naming
    its file, row and column."""
    left = read_table(path)
    x_values = _numeric(require_column(left, x, path), x, path)
    if y_table is None:
        return pd.DataFrame({"_x": x_values, "_y": _numeric(require_column(left, y, path), y, path)})
    if not on:
        raise PragmeterError("--y-table needs --on KEY (the column that identifies a row in both tables)")
    right = read_table(y_table)
    for key in on:
        require_column(left, key, path)
        require_column(right, key, y_table)
    right = right[on].assign(_y=_numeric(require_column(right, y, y_table), y, y_table))
    if right.duplicated(on).any():
        raise PragmeterError(f"{y_table}: key {','.join(on)!r} is not unique")
    return left[on].assign(_x=x_values).merge(right, on=on, how="inner")[["_x", "_y"]]


def correlate_columns(path: str | os.PathLike, x: str, y: str, y_table: str | os.PathLike | None = None,
                      on: list[str] | None = None) -> dict:
    """Pearson, Kendall and Spearman correlation of ``x`` and ``y`` over the rows that have both (at least 3);
    ``dropped`` counts the rows left out for a missing value."""
    pairs = paired_columns(path, x, y, y_table, on)
    complete = pairs.dropna()
    if len(complete) < 3:
        raise PragmeterError(f"{path}: only {len(complete)} rows have both {x!r} and {y!r}; need at least 3")
    return {"x": x, "y": y, **correlations(complete["_x"].to_numpy(float), complete["_y"].to_numpy(float)),
            "dropped": int(len(pairs) - len(complete))}


def format_correlations(result: dict) -> str:
    """:func:`correlate_columns`'s result as text: n and rows dropped, then r and p of each coefficient."""
    return "\n".join([f"n={result['n']} (dropped {result['dropped']} rows with a missing value)",
                      *(f"{name:<8}  r={result[name]['r']:+.4f}  p={result[name]['p']:.3g}"
                        for name in ("pearson", "kendall", "spearman"))])
