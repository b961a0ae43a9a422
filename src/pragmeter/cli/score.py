"""``pragmeter score``: implicitness of sentences given on the command line or in a file."""

from __future__ import annotations

import argparse
import sys


from pragmeter.cli.common import add_impscore_options, add_progress_option, load_model
from pragmeter.errors import PragmeterError
from pragmeter.scale.options import add_arguments as add_ray_options

from pragmeter.impscore.scoring import ERROR_COLUMN, SCORE_COLUMN, score_frame


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "score", help="implicitness scores of sentences or of a file's text column",
        description="Score implicitness in [0, 2] (higher = more implicit). Give sentences as arguments, or a file "
                    "with --input/--column/--output (txt, csv, tsv, jsonl, parquet); the output keeps every input "
                    f"column in input order and adds '{SCORE_COLUMN}' and '{ERROR_COLUMN}' (why a row has no score).")
    parser.add_argument("texts", nargs="*", help="sentences to score")
    parser.add_argument("--input", help="file to score")
    parser.add_argument("--column", default="text", help="text column of --input (default: text)")
    parser.add_argument("--output", help="output file (format from its extension)")
    parser.add_argument("--overwrite", action="store_true", help="replace --output if it exists")
    add_progress_option(parser)
    parser.add_argument("--strict", action="store_true", help="exit 1 when any row could not be scored")
    parser.add_argument("--no-cache", action="store_true",
                        help="do not reuse or store embeddings in the on-disk cache (used by resumed file jobs)")
    add_impscore_options(parser)
    add_ray_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.engine == "ray":
        from pragmeter.scale.ray_engine import run_cli

        return run_cli(args)
    if args.input:
        if args.texts:
            raise PragmeterError("give sentences or --input, not both")
        if not args.output:
            raise PragmeterError("--input needs --output (a .csv, .tsv, .jsonl or .parquet file)")
        return score_file(args)
    if not args.texts:
        raise PragmeterError("nothing to score: give sentences, or --input FILE --output FILE")
    model = load_model(args)
    for text, score in zip(args.texts, model.score(args.texts)):
        print(f"{score:.4f}\t{text}")
    _report_truncation(model)
    return 0


def _report_truncation(model) -> None:
    if model.truncated:
        print(f"note: {model.truncated} text(s) exceeded the encoder's token limit and were truncated", file=sys.stderr)


def score_file(args: argparse.Namespace) -> int:
    from pragmeter.io import check_output, read_table, require_column, write_table

    output = check_output(args.output, args.overwrite)
    frame = read_table(args.input)
    require_column(frame, args.column, args.input)
    model = load_model(args, cache=not args.no_cache)

    frame = score_frame(model, frame, args.column, progress=False if args.no_progress else None)
    write_table(frame, output, overwrite=args.overwrite)
    errors = frame[ERROR_COLUMN].tolist()
    failed = sum(map(bool, errors))
    print(f"scored {len(errors) - failed} of {len(errors)} rows -> {output}", file=sys.stderr)
    if failed:
        first = next(i for i, e in enumerate(errors) if e)
        print(f"warning: {failed} row(s) not scored (reason in column '{ERROR_COLUMN}'; first: row {first + 1}, "
              f"field {args.column!r}: {errors[first]})", file=sys.stderr)
    _report_truncation(model)
    return 1 if failed and args.strict else 0
