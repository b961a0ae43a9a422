"""``pragmeter classifier drinq-nli``: answer DRInQ with a local INLI classifier (no API), with bootstrap CIs."""

from __future__ import annotations

import argparse

from pragmeter.cli.common import RenamedFlag, add, add_input_option


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "drinq-nli", help="answer DRInQ zero-shot with a local INLI classifier",
        description="Premise = context + question, hypothesis = each option; picks the option with the highest "
                    "P(implied)+P(explicit). Prints accuracy against the human consensus and against "
                    "implied_comment with 95% item-level bootstrap CIs; --output writes them as JSON and "
                    "--predictions the per-item choices.")
    parser.add_argument("--model", required=True, help="INLI classifier folder (4-way or 3-way)")
    add(parser, output={"help": "results JSON to write"})
    parser.add_argument("--predictions", default=None, help="per-item table to write (csv, jsonl, parquet…)")
    add_input_option(parser, "your own file in the DRInQ CSV schema (default: the release)", required=False,
                     legacy_positional=False)
    parser.add_argument("--path", dest="input", action=RenamedFlag, new="--input")
    parser.add_argument("--limit", type=int, default=None, help="first N items only")
    add(parser, "device", "no_progress", "data_root", seed={"help": "bootstrap seed (default 0)"},
        batch_size={"default": 64, "help": "option pairs per batch (default 64)"},
        overwrite={"help": "replace --predictions and the output files if they exist"})
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.classify.drinq import accuracy_text, evaluate_drinq, write_drinq_outputs
    from pragmeter.io import check_output

    for target in filter(None, (args.output, args.predictions)):
        check_output(target, args.overwrite)
    metrics, rows = evaluate_drinq(args.model, args.data_root, args.input, args.limit, args.device, args.batch_size,
                                   args.seed, progress=not args.no_progress)
    print(accuracy_text(metrics))
    write_drinq_outputs(metrics, rows, args.model, args.input, args.limit, args.output, args.predictions,
                        args.overwrite)
    return 0
