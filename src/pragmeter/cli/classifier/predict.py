"""``pragmeter predict``: label a file with a fine-tuned local classifier (from ``pragmeter train inli|ishate-*``)."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import add_overwrite_option, add_progress_option, positive_int, torch_device

PREDICTION_COLUMN, ERROR_COLUMN = "prediction", "prediction_error"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "predict", help="label a file's texts or (premise, hypothesis) pairs with a local classifier",
        description="Label every row of --input with a classifier folder from `pragmeter train`. Pair models read "
                    "--premise-column and --hypothesis-column, single-text models --column. The output keeps every "
                    f"input column in input order and adds '{PREDICTION_COLUMN}', one 'p_<label>' probability "
                    f"column per label and '{ERROR_COLUMN}' (why a row has no prediction: an empty text).")
    parser.add_argument("--model", required=True, help="classifier folder")
    parser.add_argument("--input", required=True, help="csv, tsv, jsonl, parquet or txt file")
    parser.add_argument("--output", required=True, help="output file (format from its extension)")
    parser.add_argument("--column", default="text", help="text column for single-text models (default text)")
    parser.add_argument("--premise-column", default="premise", help="premise column for pair models (default premise)")
    parser.add_argument("--hypothesis-column", default="hypothesis",
                        help="hypothesis column for pair models (default hypothesis)")
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--device", type=torch_device, default=None, help="cpu, cuda… (default: cuda when available)")
    add_overwrite_option(parser, "--output if it exists")
    add_progress_option(parser)
    parser.set_defaults(func=run)


def _errors(frame, columns: list[str], path: str) -> list[str]:
    """Per row, why it cannot be labelled ("" when it can): the first of ``columns`` without a text."""
    from pragmeter.io import require_column

    values = [require_column(frame, column, path).tolist() for column in columns]
    errors = []
    for row in range(len(frame)):
        empty = [c for c, v in zip(columns, values) if not isinstance(v[row], str) or not v[row].strip()]
        errors.append(f"field {empty[0]!r} is empty or not text" if empty else "")
    return errors


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from pragmeter.classify.loading import load_classifier
    from pragmeter.errors import PragmeterError
    from pragmeter.io import check_output, read_table, write_table

    if args.batch_size < 1:
        raise PragmeterError("--batch-size must be at least 1")
    check_output(args.output, args.overwrite)
    frame = read_table(args.input)  # read and checked before the model loads: a bad file fails fast
    classifier = load_classifier(args.model, args.device)
    pair = classifier.settings.input_kind == "pair"
    columns = [args.premise_column, args.hypothesis_column] if pair else [args.column]
    errors = _errors(frame, columns, args.input)
    valid = [row for row, error in enumerate(errors) if not error]
    texts = [frame[columns[0]].iloc[row] for row in valid]
    pairs = [frame[columns[1]].iloc[row] for row in valid] if pair else None
    probabilities = np.full((len(frame), len(classifier.labels)), np.nan)
    if valid:
        probabilities[valid] = classifier.probabilities(texts, pairs, args.batch_size, progress=not args.no_progress)
    out = frame.copy()
    decided = iter(classifier.decide(probabilities[valid]))  # with the folder's decision bias
    out[PREDICTION_COLUMN] = [next(decided) if not e else "" for e in errors]
    for i, label in enumerate(classifier.labels):
        out[f"p_{label}"] = probabilities[:, i]
    out[ERROR_COLUMN] = errors
    write_table(out, args.output, overwrite=args.overwrite)
    print(f"labelled {len(valid)} of {len(out)} rows -> {args.output}", file=sys.stderr)
    if len(valid) < len(out):
        first = errors.index(next(e for e in errors if e))
        print(f"warning: {len(out) - len(valid)} row(s) not labelled (reason in column '{ERROR_COLUMN}'; first: "
              f"{args.input}: data row {first + 1}: {errors[first]})", file=sys.stderr)
    return 0
