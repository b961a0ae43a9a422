"""Correlation between two score columns of one table, or of two tables joined on key columns."""

from __future__ import annotations

import os

import pandas as pd

from pragmeter.errors import InvalidParameter, PragmeterError
from pragmeter.io import numeric_column, read_table, require_column
from pragmeter.metrics.correlation import correlations


def paired_columns(path: str | os.PathLike, x: str, y: str, y_table: str | os.PathLike | None = None,
                   on: list[str] | None = None) -> tuple[pd.DataFrame, dict | None]:
    """Columns ``_x`` and ``_y`` side by side: both from ``path``, or ``y`` from ``y_table`` joined on the ``on``
    columns (unique in ``y_table``; the rows whose key is in both tables), and with a join the rows of each table
    whose key is not in the other, counted (else None). Blank cells are missing; any other non-number is an error
    naming its file, row and column."""
    left = read_table(path)
    x_values = numeric_column(require_column(left, x, path), x, path)
    if y_table is None:
        return pd.DataFrame({"_x": x_values, "_y": numeric_column(require_column(left, y, path), y, path)}), None
    if not on:
        raise InvalidParameter("on", InvalidParameter.ALONE, "a second table needs the key column that identifies a row "
                               "in both tables", also={"y_table": y_table})
    right = read_table(y_table)
    for key in on:
        require_column(left, key, path)
        require_column(right, key, y_table)
    # keys compared as text: a JSONL's numeric id and a CSV's "1" are the same row (pandas refuses int vs str)
    right = right[on].astype(str).assign(_y=numeric_column(require_column(right, y, y_table), y, y_table))
    if right.duplicated(on).any():
        raise PragmeterError(f"{y_table}: key {','.join(on)!r} is not unique")
    # An outer join, so that the rows it leaves out are counted (and said) rather than lost silently.
    joined = left[on].astype(str).assign(_x=x_values).merge(right, on=on, how="outer", indicator=True)
    unmatched = {"on": on, "x": {"file": str(path), "rows": int((joined["_merge"] == "left_only").sum())},
                 "y": {"file": str(y_table), "rows": int((joined["_merge"] == "right_only").sum())}}
    return joined.loc[joined["_merge"] == "both", ["_x", "_y"]], unmatched


def unmatched_text(unmatched: dict | None) -> str:
    """The rows a join left out, e.g. "2 rows without a match on id: 1 in a.csv, 1 in b.csv" ("" when none)."""
    if not unmatched or not unmatched["x"]["rows"] + unmatched["y"]["rows"]:
        return ""
    sides = [unmatched["x"], unmatched["y"]]
    return (f"{sum(side['rows'] for side in sides)} rows without a match on {','.join(unmatched['on'])}: "
            + ", ".join(f"{side['rows']} in {side['file']}" for side in sides))


def correlate_columns(path: str | os.PathLike, x: str, y: str, y_table: str | os.PathLike | None = None,
                      on: list[str] | None = None) -> dict:
    """Pearson, Kendall and Spearman correlation of ``x`` and ``y`` over the rows that have both (at least 3);
    ``dropped`` counts the rows left out for a missing value, ``unmatched`` (with ``y_table``) those of each table
    left out for a key not in the other."""
    pairs, unmatched = paired_columns(path, x, y, y_table, on)
    complete = pairs.dropna()
    if len(complete) < 3:
        note = unmatched_text(unmatched)
        raise PragmeterError(f"{path}: only {len(complete)} rows have both {x!r} and {y!r}; need at least 3"
                             + (f" ({note})" if note else ""))
    return {"x": x, "y": y, **correlations(complete["_x"].to_numpy(float), complete["_y"].to_numpy(float)),
            "dropped": int(len(pairs) - len(complete)), **({"unmatched": unmatched} if unmatched else {})}


def format_correlations(result: dict) -> str:
    """:func:`correlate_columns`'s result as text: n and rows left out, then r and p of each coefficient."""
    note = unmatched_text(result.get("unmatched"))
    return "\n".join([f"n={result['n']} (dropped {result['dropped']} rows with a missing value"
                      + (f"; {note})" if note else ")"),
                      *(f"{name:<8}  r={result[name]['r']:+.4f}  p={result[name]['p']:.3g}"
                        for name in ("pearson", "kendall", "spearman"))])
