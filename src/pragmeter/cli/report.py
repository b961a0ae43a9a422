"""``pragmeter report``: one self-contained HTML page per model from a folder of results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="one self-contained HTML page per model: metrics, stratified plots, profiles",
        description="Collect every results.json (pragmeter eval), stratified_*.json, generation_check.json and "
                    "profile_*.json under RESULTS_DIR and write OUTPUT/<model>.html (plots embedded, inline CSS, "
                    "opens offline), OUTPUT/index.html and the plots as PNG in OUTPUT/plots/. Harness results with "
                    "logged samples that have no stratified result yet are stratified first (ImpScore, cached "
                    "embeddings); hate_detection is stratified on its hateful items, as in the paper's Figure 7.")
    parser.add_argument("results_dir", help="folder with results (searched recursively)")
    parser.add_argument("--output", default=None, help="report folder (default: RESULTS_DIR/report)")
    parser.add_argument("--no-stratify", action="store_true", help="do not stratify logged samples first")
    parser.add_argument("--impscore", default=None, help="ImpScore model for stratifying (default: the shipped one)")
    parser.add_argument("--batch-size", type=int, default=64, help="ImpScore encoder batch size (default 64)")
    parser.add_argument("--device", default=None, help="ImpScore torch device (default: best available)")
    parser.set_defaults(func=run)


# The label whose items the paper's accuracy counts, per task (detection rate on hateful texts).
GOLD_FILTER = {"hate_detection": "yes"}


def stratify_logged_samples(results_dir: Path, args: argparse.Namespace) -> int:
    """Stratify every per-sample log that has texts and no stratified_<task>.json beside it; return how many."""
    from pragmeter.analysis import stratify
    from pragmeter.errors import DataError
    from pragmeter.io import read_records

    done, model = 0, None
    for results in sorted(results_dir.rglob("results.json")):
        try:
            logs = stratify.sample_logs(results.parent)
        except DataError as error:  # e.g. a truncated results.json: said here, and again by the page writer
            print(f"warning: {error}; its sample logs are not stratified", file=sys.stderr)
            continue
        for log, settings in logs:
            task = log.stem.removeprefix("samples_")
            if (results.parent / f"stratified_{task}.json").exists():
                continue
            try:
                records = read_records(log)
                if not records or not isinstance(records[0][1].get("text"), str):
                    continue  # a task that logs no text cannot be stratified
                predictions = stratify.from_samples(log, GOLD_FILTER.get(task), settings)
            except DataError as error:
                print(f"warning: {error}; not stratified", file=sys.stderr)
                continue
            if not predictions.texts:
                continue
            if model is None:
                from pragmeter.analysis.profile import attach_embedding_cache
                from pragmeter.impscore.model import ImpScore

                model = attach_embedding_cache(ImpScore.load(args.impscore, device=args.device,
                                                             batch_size=args.batch_size))
            scores = stratify.score_predictions(predictions, model)
            stratify.write_stratified(predictions, scores, results.parent, model.signature())
            done += 1
    return done


def run(args: argparse.Namespace) -> int:
    from pragmeter.analysis.report import render

    results_dir = Path(args.results_dir)
    output = Path(args.output) if args.output else results_dir / "report"
    if not args.no_stratify and results_dir.is_dir():
        count = stratify_logged_samples(results_dir, args)
        if count:
            print(f"stratified {count} per-sample log(s)", file=sys.stderr)
    pages = render(results_dir, output)
    for page in pages:
        print(page)
    print(f"index: {output / 'index.html'}", file=sys.stderr)
    return 0
