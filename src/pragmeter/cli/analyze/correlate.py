"""``pragmeter analyze correlate``: Pearson, Kendall and Spearman correlation between two score columns."""

from __future__ import annotations

import argparse
import json

from pragmeter.cli.common import add_input_option


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


def run(args: argparse.Namespace) -> int:
    from pragmeter.analysis.correlate import correlate_columns, format_correlations

    result = correlate_columns(args.input, args.x, args.y, args.y_table,
                               [k.strip() for k in args.on.split(",")] if args.on else None)
    print(json.dumps(result, indent=2) if args.json else format_correlations(result))
    return 0
