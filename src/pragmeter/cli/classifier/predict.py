"""``pragmeter predict``: label a file with a fine-tuned local classifier (from ``pragmeter train inli|ishate-*``)."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import positive_int, torch_device

PREDICTION_COLUMN = "prediction"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "predict", help="label a file's texts or (premise, hypothesis) pairs with a local classifier",
        description="Label every row of --input with a classifier folder from `pragmeter train`. Pair models read "
                    "--premise-column and --hypothesis-column, single-text models --column. The output keeps every "
                    f"input column in input order and adds '{PREDICTION_COLUMN}' and one 'p_<label>' probability "
                    "column per label.")
    parser.add_argument("--model", required=True, help="classifier folder")
    parser.add_argument("--input", required=True, help="csv, tsv, jsonl, parquet or txt file")
    parser.add_argument("--output", required=True, help="output file (format from its extension)")
    parser.add_argument("--column", default="text", help="text column for single-text models (default text)")
    parser.add_argument("--premise-column", default="premise", help="premise column for pair models (default premise)")
    parser.add_argument("--hypothesis-column", default="hypothesis",
                        help="hypothesis column for pair models (default hypothesis)")
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--device", type=torch_device, default=None, help="cpu, cuda… (default: cuda when available)")
    parser.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    parser.add_argument("--no-progress", action="store_true")
    parser.set_defaults(func=run)


def _texts(frame, column: str, path: str) -> list[str]:
    from pragmeter.errors import DataError
    from pragmeter.io import require_column

    values = require_column(frame, column, path)
    for row, value in enumerate(values):
        if not isinstance(value, str) or not value.strip():
            raise DataError(f"{path}: row {row + 1}: field {column!r} is empty or not text")
    return list(values)


def run(args: argparse.Namespace) -> int:
    from pragmeter.classify.model import TextClassifier
    from pragmeter.errors import PragmeterError
    from pragmeter.io import read_table, write_table

    if args.batch_size < 1:
        raise PragmeterError("--batch-size must be at least 1")
    classifier = TextClassifier.load(args.model, args.device)
    frame = read_table(args.input)
    if classifier.settings.input_kind == "pair":
        texts = _texts(frame, args.premise_column, args.input)
        pairs = _texts(frame, args.hypothesis_column, args.input)
    else:
        texts, pairs = _texts(frame, args.column, args.input), None
    probabilities = classifier.probabilities(texts, pairs, args.batch_size, progress=not args.no_progress)
    out = frame.copy()
    out[PREDICTION_COLUMN] = [classifier.labels[i] for i in probabilities.argmax(axis=1)]
    for i, label in enumerate(classifier.labels):
        out[f"p_{label}"] = probabilities[:, i]
    write_table(out, args.output, overwrite=args.overwrite)
    print(f"{len(out)} rows -> {args.output}", file=sys.stderr)
    return 0
