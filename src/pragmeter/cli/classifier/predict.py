"""``pragmeter classifier predict``: label a file with a fine-tuned local classifier (from ``pragmeter classifier
train``)."""

from __future__ import annotations

import argparse

from pragmeter.classify.labelling import ERROR_COLUMN, PREDICTION_COLUMN
from pragmeter.cli.common import add, report_rows


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "predict", help="label a file's texts or (premise, hypothesis) pairs with a local classifier",
        description="Label every row of --input with a classifier folder from `pragmeter classifier train`. Pair models "
                    "read --premise-column and --hypothesis-column, single-text models --column. The output keeps every "
                    f"input column in input order and adds '{PREDICTION_COLUMN}', one 'p_<label>' probability "
                    f"column per label and '{ERROR_COLUMN}' (why a row has no prediction: an empty text).")
    parser.add_argument("--model", required=True, help="classifier folder")
    parser.add_argument("--input", required=True, help="csv, tsv, jsonl, parquet or txt file")
    add(parser, output={"required": True, "help": "output file (format from its extension)"},
        column={"help": "text column for single-text models (default text)"})
    parser.add_argument("--premise-column", default="premise", help="premise column for pair models (default premise)")
    parser.add_argument("--hypothesis-column", default="hypothesis",
                        help="hypothesis column for pair models (default hypothesis)")
    add(parser, "no_progress", batch_size={"default": 64, "help": "texts per batch (default 64)"},
        device={"help": "cpu, cuda… (default: cuda when available)"}, overwrite={"help": "replace --output if it exists"})
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.classify.labelling import label_frame
    from pragmeter.classify.loading import load_classifier
    from pragmeter.io import check_output, read_table, write_table

    check_output(args.output, args.overwrite)
    frame = read_table(args.input)  # read and checked before the model loads: a bad file fails fast
    out = label_frame(load_classifier(args.model, args.device), frame, args.input, args.column, args.premise_column,
                      args.hypothesis_column, args.batch_size, progress=not args.no_progress)
    write_table(out, args.output, overwrite=args.overwrite)
    report_rows(out[ERROR_COLUMN].tolist(), "labelled", args.output, ERROR_COLUMN,
                lambda row, reason: f"{args.input}: data row {row + 1}: {reason}")
    return 0
