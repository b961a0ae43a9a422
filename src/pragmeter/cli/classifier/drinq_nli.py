"""``pragmeter drinq-nli``: answer DRInQ with a local INLI classifier (no API), with bootstrap CIs."""

from __future__ import annotations

import argparse

from pragmeter.cli.common import (RenamedFlag, add_data_root_option, add_input_option, add_overwrite_option,
                                  add_progress_option, positive_int, torch_device)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "drinq-nli", help="answer DRInQ zero-shot with a local INLI classifier",
        description="Premise = context + question, hypothesis = each option; picks the option with the highest "
                    "P(implied)+P(explicit). Prints accuracy against the human consensus and against "
                    "implied_comment with 95% item-level bootstrap CIs; --output writes them as JSON and "
                    "--predictions the per-item choices.")
    parser.add_argument("--model", required=True, help="INLI classifier folder (4-way or 3-way)")
    parser.add_argument("--output", default=None, help="results JSON to write")
    parser.add_argument("--predictions", default=None, help="per-item table to write (csv, jsonl, parquet…)")
    add_input_option(parser, "your own file in the DRInQ CSV schema (default: the release)", required=False,
                     legacy_positional=False)
    parser.add_argument("--path", dest="input", action=RenamedFlag, new="--input")
    parser.add_argument("--limit", type=int, default=None, help="first N items only")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--batch-size", type=positive_int, default=64)
    parser.add_argument("--device", type=torch_device, default=None)
    add_overwrite_option(parser, "--predictions and the output files if they exist")
    add_progress_option(parser)
    add_data_root_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.classify.drinq import evaluate_drinq, write_drinq_outputs
    from pragmeter.io import check_output

    for target in filter(None, (args.output, args.predictions)):
        check_output(target, args.overwrite)
    metrics, rows = evaluate_drinq(args.model, args.data_root, args.input, args.limit, args.device, args.batch_size,
                                   args.seed, progress=not args.no_progress)
    for name in ("consensus", "implied_comment"):
        m = metrics[name]
        print(f"accuracy vs {name}: {m['accuracy']:.4f} (95% CI {m['ci95'][0]:.4f}–{m['ci95'][1]:.4f}), "
              f"n={metrics['n']}")
    write_drinq_outputs(metrics, rows, args.model, args.input, args.limit, args.output, args.predictions,
                        args.overwrite)
    return 0
