"""``pragmeter stratify``: accuracy per ImpScore bin for a predictions file or harness results."""

from __future__ import annotations

import argparse
from pathlib import Path

from pragmeter.cli.common import (add_embedding_cache_options, add_impscore_options, add_input_option,
                                  add_overwrite_option, load_model, refuse_existing)
from pragmeter.errors import PragmeterError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "stratify", help="accuracy by implicitness: per ImpScore bin, with Wilson CIs and a trend statistic",
        description="Put items into ImpScore bins [0, 0.25) … [1.75, 2] (paper Figure 7) and write "
                    "stratified_<name>.json (per-bin n, accuracy, Wilson 95%% CI; Spearman ρ of bin centre vs "
                    "accuracy; logistic slope of correctness on score with 95%% CI) and a PNG. INPUT is a "
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
    parser.add_argument("--output", default=None,
                        help="output folder (default: the results folder, or the input file's folder)")
    add_overwrite_option(parser)
    add_embedding_cache_options(parser, folder=False)
    add_impscore_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from functools import cache

    from pragmeter.analysis.stratify import load_predictions, stratify_predictions

    inputs = load_predictions(args.input, args.gold_value, args.text_column, args.gold_column, args.prediction_column,
                              args.correct_column, args.score_column)
    if args.name:
        if len(inputs) > 1:
            raise PragmeterError("--name needs a single input (this folder holds several sample logs)")
        inputs[0].name = args.name
    path = Path(args.input)
    output = Path(args.output) if args.output else path if path.is_dir() else path.parent
    refuse_existing([output / f"stratified_{p.name}.json" for p in inputs], args.overwrite)

    @cache
    def impscore():  # loaded once, and only for inputs without a score column
        return load_model(args, cache=not args.no_cache)

    for predictions in inputs:
        payload = stratify_predictions(predictions, output, impscore)
        print(f"{payload['name']}: n={payload['n']} accuracy={payload['accuracy']:.4f} -> "
              f"{output / ('stratified_' + payload['name'] + '.json')}")
        for b in payload["bins"]:
            accuracy = "   -  " if b["accuracy"] is None else f"{b['accuracy']:.4f} [{b['ci_low']:.3f}, {b['ci_high']:.3f}]"
            print(f"  [{b['low']:.2f}, {b['high']:.2f}{']' if b['high'] == 2.0 else ')'} n={b['n']:<6} {accuracy}")
        trend = payload["trend"]
        rho, slope = trend["spearman_bin_centre_vs_accuracy"], trend["logistic_slope_per_score_unit"]
        if rho["rho"] is not None:
            print(f"  Spearman rho(bin centre, accuracy) = {rho['rho']:+.3f} (p={rho['p_value']:.3g}, {rho['n']} bins)")
        if slope["slope"] is not None:
            print(f"  logistic slope = {slope['slope']:+.3f} per score unit [{slope['ci_low']:+.3f}, {slope['ci_high']:+.3f}] "
                  f"(n={payload['n']})")
    return 0
