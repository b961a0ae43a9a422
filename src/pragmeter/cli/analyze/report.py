"""``pragmeter report``: one self-contained HTML page per model from a folder of results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragmeter.cli.common import (add_input_option, add_overwrite_option, add_runtime_options, positive_int,
                                  refuse_existing, torch_device)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="one self-contained HTML page per model: metrics, stratified plots, profiles",
        description="Collect every results.json (pragmeter eval), stratified_*.json, generation_check.json and "
                    "profile_*.json under RESULTS_DIR and write OUTPUT/<model>.html (plots embedded, inline CSS, "
                    "opens offline), OUTPUT/index.html and the plots as PNG in OUTPUT/plots/. Harness results with "
                    "logged samples that have no stratified result yet are stratified first (ImpScore, cached "
                    "embeddings); hate_detection is stratified on its hateful items, as in the paper's Figure 7.")
    add_input_option(parser, "folder with results (searched recursively)")
    parser.add_argument("--output", default=None, help="report folder (default: RESULTS_DIR/report)")
    add_overwrite_option(parser)
    parser.add_argument("--no-stratify", action="store_true", help="do not stratify logged samples first")
    parser.add_argument("--impscore", default=None, help="ImpScore model for stratifying (default: the shipped one)")
    parser.add_argument("--batch-size", type=positive_int, default=64, help="ImpScore encoder batch size (default 64)")
    parser.add_argument("--device", type=torch_device, default=None, help="ImpScore torch device (default: best available)")
    add_runtime_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.analysis.report import render

    results_dir = Path(args.input)
    output = Path(args.output) if args.output else results_dir / "report"
    refuse_existing([output / "index.html"], args.overwrite)
    if not args.no_stratify and results_dir.is_dir():
        from pragmeter.analysis.report import stratify_logged_samples

        count = stratify_logged_samples(results_dir, args.impscore, args.device, args.batch_size, args.backend,
                                        args.precision)
        if count:
            print(f"stratified {count} per-sample log(s)", file=sys.stderr)
    pages = render(results_dir, output)
    for page in pages:
        print(page)
    print(f"index: {output / 'index.html'}", file=sys.stderr)
    return 0
