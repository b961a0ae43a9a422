"""``pragmeter analyze report``: one self-contained HTML page per model from a folder of results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragmeter.cli.common import RUNTIME, add, add_input_option, refuse_existing


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="one self-contained HTML page per model: metrics, stratified plots, profiles",
        description="Collect every results.json (pragmeter eval), stratified_*.json, generation_check.json and "
                    "profile_*.json under RESULTS_DIR and write OUTPUT/<model>.html (plots embedded, inline CSS, "
                    "opens offline), OUTPUT/index.html and the plots as PNG in OUTPUT/plots/. Harness results with "
                    "logged samples that have no stratified result yet are stratified first (ImpScore, cached "
                    "embeddings); hate_detection is stratified on its hateful items, as in the paper's Figure 7.")
    add_input_option(parser, "folder with results (searched recursively)")
    add(parser, "overwrite", output={"help": "report folder (default: RESULTS_DIR/report)"})
    parser.add_argument("--no-stratify", action="store_true", help="do not stratify logged samples first")
    add(parser, *RUNTIME, impscore={"help": "ImpScore model for stratifying (default: the shipped one)"},
        batch_size={"default": 64, "help": "ImpScore encoder batch size (default 64)"},
        device={"help": "ImpScore torch device (default: best available)"})
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.analysis.report import render, stratify_logged_samples

    results_dir = Path(args.input)
    output = Path(args.output) if args.output else results_dir / "report"
    refuse_existing([output / "index.html"], args.overwrite)
    if not args.no_stratify and results_dir.is_dir():
        count = stratify_logged_samples(results_dir, args.impscore, args.device, args.batch_size, args.backend,
                                        args.precision)
        if count:
            print(f"stratified {count} per-sample log(s)", file=sys.stderr)
    for page in render(results_dir, output):
        print(page)
    print(f"index: {output / 'index.html'}", file=sys.stderr)
    return 0
