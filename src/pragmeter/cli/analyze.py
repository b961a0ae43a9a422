"""``pragmeter analyze profile|stratify|correlate|generation-check|report``: where models break as language gets more
implicit — ImpScore profiles of labelled sets, accuracy by implicitness, correlation of score columns, the paper's
generation check (A.15), and HTML reports of a results folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pragmeter.cli.common import (INSTRUMENT, MODEL_ARGS_HELP, RUNTIME, add, add_group, add_input_option,
                                  load_chat_backend, load_model, positive_int)


def register(subparsers) -> None:
    add_group(subparsers, "analyze", "analyses: profile, stratify, correlate, report, generation-check",
              "ImpScore profiles of labelled sets, accuracy by implicitness, correlation of score columns, the "
              "generation check, HTML reports.", _add_profile, _add_stratify, _add_correlate,
              _add_generation_check, _add_report)


def _add_profile(actions) -> None:
    from pragmeter.datasets.labelled_sets import BUILTINS, DEFAULT_CAP

    parser = actions.add_parser(
        "profile", help="implicitness distribution and pragmatic diversity of a dataset, per label",
        description="Score every text with ImpScore and write OUTPUT/profile_<name>.json (mean, SD, quantiles, "
                    "histograms per label value, pragmatic distances of random distinct pairs, label differences "
                    "with 95% CIs), PNG plots and the per-text scores. DATASET is a built-in set "
                    f"({', '.join(BUILTINS)}, or 'all' for every one plus an overview plot) or a file "
                    "(txt/csv/tsv/jsonl/parquet). Embeddings are cached on disk, so a rerun is fast.")
    add_input_option(parser, "built-in dataset name, 'all', or a file")
    add(parser, column={"help": "text column of a file (default: text)"})
    parser.add_argument("--label-column", action="append", default=[],
                        help="label column of a file; repeat for several groupings")
    parser.add_argument("--compare", action="append", default=[], metavar="A:B",
                        help="compare mean scores of label values A and B of the first label column (repeatable)")
    parser.add_argument("--pair-column", default=None,
                        help="a file column paired with the text (e.g. its implied statement): compared pair by pair")
    parser.add_argument("--max-per-label", type=positive_int, default=None,
                        help=f"sample at most N texts per value of the first label (seeded; default: all for files, "
                             f"{DEFAULT_CAP} for built-in sets)")
    parser.add_argument("--pairs", type=positive_int, default=2000,
                        help="random distinct pairs for diversity (default 2000)")
    add(parser, seed={"help": "seed of sampling and pairs (default 0)"},
        output={"default": "profiles", "help": "output folder (default: profiles)"})
    add(parser, "overwrite", "no_cache", *INSTRUMENT, "data_root")
    parser.set_defaults(func=run_profile)


def run_profile(args: argparse.Namespace) -> int:
    from pragmeter.analysis.profile import profile_source

    for line in profile_source(args.input, Path(args.output), lambda: load_model(args, cache=not args.no_cache),
                               args.data_root, args.column, args.label_column, args.pair_column, args.compare,
                               args.max_per_label, args.pairs, args.seed, args.overwrite):
        print(line)
    return 0


def _add_stratify(actions) -> None:
    parser = actions.add_parser(
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
    add(parser, "overwrite", "no_cache", *INSTRUMENT)
    parser.set_defaults(func=run_stratify)


def run_stratify(args: argparse.Namespace) -> int:
    from pragmeter.analysis.stratify import stratify_input

    for line in stratify_input(args.input, args.output, lambda: load_model(args, cache=not args.no_cache), args.name,
                               args.overwrite, args.gold_value, args.text_column, args.gold_column,
                               args.prediction_column, args.correct_column, args.score_column):
        print(line)
    return 0


def _add_correlate(actions) -> None:
    parser = actions.add_parser(
        "correlate", help="Pearson, Kendall and Spearman correlation between two score columns",
        description="Correlate two numeric columns, e.g. a judge score and human ratings. X and Y come from --input "
                    "(txt/csv/tsv/jsonl/parquet, e.g. a samples_<task>.jsonl), or Y from --y-table joined on --on. "
                    "Rows where either value is missing are dropped and counted.")
    add_input_option(parser, "table holding the X column")
    parser.add_argument("--x", required=True, help="first score column")
    parser.add_argument("--y", required=True, help="second score column")
    parser.add_argument("--y-table", default=None, help="other table holding --y (joined on --on)")
    parser.add_argument("--on", default=None, help="key column(s) for the join, comma-separated (e.g. item_id)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(func=run_correlate)


def run_correlate(args: argparse.Namespace) -> int:
    from pragmeter.analysis.correlate import correlate_columns, format_correlations

    result = correlate_columns(args.input, args.x, args.y, args.y_table,
                               [k.strip() for k in args.on.split(",")] if args.on else None)
    print(json.dumps(result, indent=2) if args.json else format_correlations(result))
    return 0


def _add_generation_check(actions) -> None:
    parser = actions.add_parser(
        "generation-check", help="ask a chat model for sentences from most explicit to most implicit; score them",
        description="The ImpScore paper's generation check (A.15): for each topic, ask the model for four "
                    "sentences from most explicit to most implicit, RUNS times; score them with ImpScore and write "
                    "OUTPUT/generation_check.json (mean score per requested level with SD over runs, Kendall τ "
                    "between requested and scored order), a PNG and generations.jsonl. Responses are cached in "
                    "OUTPUT/cache/responses.jsonl, so a rerun resumes.")
    add(parser, "llm", model_args={"help": MODEL_ARGS_HELP + "; temperature defaults to 1 here so runs differ"})
    parser.add_argument("--topics", default=None, help="file with one topic per line (default: 10 shipped topics)")
    parser.add_argument("--runs", type=int, default=5, help="independent runs (default 5, as in the paper)")
    add(parser, "overwrite", "no_response_cache", "no_progress", *INSTRUMENT,
        output={"required": True, "help": "output folder"})
    parser.set_defaults(func=run_generation_check)


def run_generation_check(args: argparse.Namespace) -> int:
    from pragmeter.analysis.generation import run_generation_check as check

    for line in check(lambda: load_chat_backend(args.model, args.model_args, temperature="1"), lambda: load_model(args),
                      args.topics, args.runs, Path(args.output), not args.no_response_cache, args.overwrite,
                      progress=not args.no_progress):
        print(line)
    return 0


def _add_report(actions) -> None:
    parser = actions.add_parser(
        "report", help="one self-contained HTML page per model: metrics, stratified plots, profiles",
        description="Collect every results.json (pragmeter eval), stratified_*.json, generation_check.json and "
                    "profile_*.json under RESULTS_DIR and write OUTPUT/<model>.html (plots embedded, inline CSS, "
                    "opens offline), OUTPUT/index.html and the plots as PNG in OUTPUT/plots/. Harness results with "
                    "logged samples that have no stratified result yet are stratified first, into OUTPUT/stratified/ "
                    "(ImpScore, cached embeddings; nothing is written into RESULTS_DIR); hate_detection is stratified on its hateful items, as in the paper's Figure 7.")
    add_input_option(parser, "folder with results (searched recursively)")
    add(parser, "overwrite", output={"help": "report folder (default: RESULTS_DIR/report)"})
    parser.add_argument("--no-stratify", action="store_true", help="do not stratify logged samples first")
    add(parser, *RUNTIME, impscore={"help": "ImpScore model for stratifying (default: the shipped one)"},
        batch_size={"default": 64, "help": "ImpScore encoder batch size (default 64)"},
        device={"help": "ImpScore torch device (default: best available)"})
    parser.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from pragmeter.analysis.report import make_report

    for page in make_report(Path(args.input), args.output, args.overwrite, not args.no_stratify,
                            args.impscore, args.device, args.batch_size, args.backend, args.precision):
        print(page)
    return 0
