"""``pragmeter analyze stratify``: accuracy per ImpScore bin for a predictions file or harness results."""

from __future__ import annotations

import argparse
from pathlib import Path

from pragmeter.cli.common import INSTRUMENT, add, add_input_option, load_model, refuse_existing
from pragmeter.errors import PragmeterError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "stratify", help="accuracy by implicitness: per ImpScore bin, with Wilson CIs and a trend statistic",
        description="Put items into ImpScore bins [0, 0.25) … [1.75, 2] (paper Figure 7) and write "
                    "stratified_<name>.json (per-bin n, accuracy, Wilson 95% CI; Spearman ρ of bin centre vs "
                    "accuracy; logistic slope of correctness on score with 95% CI) and a PNG. INPUT is a "
                    "predictions table (text, gold, prediction), a samples_<task>.jsonl of `pragmeter eval "
                    "--log-samples`, or a results folder holding such logs. The paper's hate-detection experiment "
                    "for any LLM: pragmeter eval --tasks hate_detection --log-samples --output R …; "
                    "pragmeter analyze stratify --input R --gold-value yes.")
    add_input_option(parser, "predictions table, samples JSONL, or harness results folder")
    parser.add_argument("--column", "--text-column", dest="text_column", default="text",
                        help="text column of a table (default: text)")
    parser.add_argument("--gold-column", default="gold", help="gold label column of a table (default: gold)")
    parser.add_argument("--prediction-column", default="prediction",
                        help="predicted label column of a table (default: prediction); missing = wrong")
    parser.add_argument("--correct-column", default=None, help="a 1/0 correctness column instead of gold/prediction")
    parser.add_argument("--score-column", default=None,
                        help="ImpScore column already in the table (e.g. from `pragmeter score`); else scored now")
    parser.add_argument("--gold-value", default=None,
                        help="only items with this gold label (e.g. yes: the paper's detection rate on hate speech)")
    parser.add_argument("--name", default=None, help="name of the outputs (default: file stem or task name)")
    add(parser, output={"help": "output folder (default: the results folder, or the input file's folder)"})
    add(parser, "overwrite", "no_cache", "impscore_old_name", *INSTRUMENT)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.analysis.stratify import load_predictions, stratify_all

    inputs = load_predictions(args.input, args.gold_value, args.text_column, args.gold_column, args.prediction_column,
                              args.correct_column, args.score_column)
    if args.name:
        if len(inputs) > 1:
            raise PragmeterError("--name needs a single input (this folder holds several sample logs)")
        inputs[0].name = args.name
    path = Path(args.input)
    output = Path(args.output) if args.output else path if path.is_dir() else path.parent
    refuse_existing([output / f"stratified_{p.name}.json" for p in inputs], args.overwrite)
    for line in stratify_all(inputs, output, lambda: load_model(args, cache=not args.no_cache)):
        print(line)
    return 0
