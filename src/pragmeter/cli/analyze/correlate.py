"""``pragmeter correlate``: Pearson, Kendall and Spearman correlation between two score columns."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

import numpy as np

from pragmeter.cli.common import add_input_option
from pragmeter.errors import PragmeterError

if TYPE_CHECKING:  # pandas is imported when the command runs: building the CLI parser stays fast
    import pandas as pd


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "correlate", help="Pearson, Kendall and Spearman correlation between two score columns",
        description="Correlate two numeric columns, e.g. a judge score and human ratings. X and Y come from --input "
                    "(txt/csv/tsv/jsonl/parquet, e.g. a samples_<task>.jsonl), or Y from --y-table joined on --on. "
                    "Rows where either value is missing are dropped and counted.")
    add_input_option(parser, "table holding the X column")
    parser.add_argument("--x", required=True, help="first score column")
    parser.add_argument("--y", required=True, help="second score column")
    parser.add_argument("--y-table", default=None, help="other table holding --y (joined on --on)")
    parser.add_argument("--on", default=None, help="key column(s) for the join, comma-separated (e.g. item_id)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run)


def _numeric(series: pd.Series, column: str, path: str) -> pd.Series:
    import pandas as pd

    series = series.mask(series.map(lambda v: isinstance(v, str) and not v.strip()))  # blank = missing
    values = pd.to_numeric(series, errors="coerce")
    bad = series.notna() & values.isna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise PragmeterError(f"{path}: data row {row + 1}: column {column!r} is {series.iloc[row]!r}, not a number")
    return values


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from pragmeter.io import read_table, require_column
    from pragmeter.metrics.correlation import correlations

    left = read_table(args.input)
    x = _numeric(require_column(left, args.x, args.input), args.x, args.input)
    if args.y_table:
        if not args.on:
            raise PragmeterError("--y-table needs --on KEY (the column that identifies a row in both tables)")
        keys = [k.strip() for k in args.on.split(",")]
        right = read_table(args.y_table)
        for key in keys:
            require_column(left, key, args.input)
            require_column(right, key, args.y_table)
        y_values = _numeric(require_column(right, args.y, args.y_table), args.y, args.y_table)
        right = right[keys].assign(_y=y_values)
        if right.duplicated(keys).any():
            raise PragmeterError(f"{args.y_table}: key {args.on!r} is not unique")
        merged = left[keys].assign(_x=x).merge(right, on=keys, how="inner")
        pairs = merged[["_x", "_y"]]
    else:
        pairs = pd.DataFrame({"_x": x, "_y": _numeric(require_column(left, args.y, args.input), args.y, args.input)})
    complete = pairs.dropna()
    if len(complete) < 3:
        raise PragmeterError(f"{args.input}: only {len(complete)} rows have both {args.x!r} and {args.y!r}; need at least 3")
    result = {"x": args.x, "y": args.y, **correlations(complete["_x"].to_numpy(float), complete["_y"].to_numpy(float)),
              "dropped": int(len(pairs) - len(complete))}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"n={result['n']} (dropped {result['dropped']} rows with a missing value)")
        for name in ("pearson", "kendall", "spearman"):
            print(f"{name:<8}  r={result[name]['r']:+.4f}  p={result[name]['p']:.3g}")
    return 0
