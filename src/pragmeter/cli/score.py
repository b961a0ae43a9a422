"""``pragmeter score``: implicitness of sentences given on the command line or in a file; ``pragmeter distance A B``:
pragmatic distance of two sentences."""

from __future__ import annotations

import argparse
import sys

from pragmeter.cli.common import INSTRUMENT, add, load_model, positive_int
from pragmeter.errors import PragmeterError
from pragmeter.impscore.scoring import ERROR_COLUMN, SCORE_COLUMN


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "score", help="implicitness scores of sentences or of a file's text column",
        description="Score implicitness in [0, 2] (higher = more implicit). Give sentences as arguments ('-': "
                    "standard input's lines, printed as they are scored), or a file with --input/--column/--output "
                    "(txt, csv, tsv, jsonl, parquet); the output keeps every input column in input order and adds "
                    f"'{SCORE_COLUMN}' and '{ERROR_COLUMN}' (why a row has no score).")
    parser.add_argument("texts", nargs="*", help="sentences to score; '-' reads them from standard input, one a line "
                                                 "(a line that cannot be scored is printed with nan)")
    parser.add_argument("--input", help="file to score")
    add(parser, column={"help": "text column of --input (default: text)"},
        output={"help": "output file (format from its extension)"}, overwrite={"help": "replace --output if it exists"})
    add(parser, "no_progress")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any row could not be scored")
    add(parser, "no_cache", "impscore_old_name", *INSTRUMENT)
    group = parser.add_argument_group("Ray engine (--engine ray; needs the 'ray' extra)")
    group.add_argument("--engine", choices=["local", "ray"], default="local",
                       help="local: this process (default); ray: Ray Data actors, --input a file or folder, "
                            "--output a folder of parquet parts")
    group.add_argument("--id-column", default="id", help="row id column of the input (default id; made when absent)")
    group.add_argument("--ray-address", help="Ray cluster to join (default: $RAY_ADDRESS, else a local instance)")
    group.add_argument("--actors", type=positive_int,
                       help="scoring actors (default: cluster CPUs or GPUs / per-actor share)")
    group.add_argument("--cpus-per-actor", type=float, default=1, help="CPUs per actor (default 1)")
    group.add_argument("--gpus-per-actor", type=float, default=0,
                       help="GPUs per actor (default 0; >0 runs the encoder in torch on cuda); --backend and "
                            "--precision apply to the actors as to a local run (auto: torch on GPU actors)")
    parser.set_defaults(func=run)

    distance = subparsers.add_parser("distance", help="pragmatic distance between two sentences",
                                     description="Print the pragmatic distance ‖h_p(A) − h_p(B)‖ of two sentences.")
    distance.add_argument("a", help="first sentence")
    distance.add_argument("b", help="second sentence")
    add(distance, "impscore_old_name", *INSTRUMENT)
    distance.set_defaults(func=lambda args: print(f"{load_model(args).pragmatic_distance(args.a, args.b):.4f}"))


def run(args: argparse.Namespace) -> int:
    from pragmeter.impscore.scoring import score_texts_or_table

    if args.engine == "ray":
        return score_on_ray(args)
    failed = score_texts_or_table(args.texts, args.input, args.output, args.column,
                                  lambda cache: load_model(args, cache and not args.no_cache), args.overwrite,
                                  progress=False if args.no_progress else None)
    return 1 if failed and args.strict else 0


def score_on_ray(args: argparse.Namespace) -> int:
    """``pragmeter score --engine ray``."""
    from pragmeter.scale.ray_engine import score_with_ray, summary_lines

    if args.texts or not args.input or not args.output:
        raise PragmeterError("--engine ray scores files: give --input FILE_OR_FOLDER --output FOLDER")
    summary = score_with_ray(args.input, args.output, model=args.impscore, column=args.column,
                             id_column=args.id_column, backend=args.backend, actors=args.actors,
                             cpus_per_actor=args.cpus_per_actor, gpus_per_actor=args.gpus_per_actor,
                             batch_size=args.batch_size, overwrite=args.overwrite, address=args.ray_address,
                             device=args.device, precision=args.precision)
    print(*summary_lines(summary, args.output), sep="\n", file=sys.stderr)
    return 1 if summary["failed"] and args.strict else 0
