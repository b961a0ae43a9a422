"""``pragmeter score``: implicitness of sentences given on the command line or in a file; ``pragmeter distance A B``:
pragmatic distance of two sentences."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from pragmeter.cli.common import INSTRUMENT, add, load_model, positive_int
from pragmeter.errors import PragmeterError
from pragmeter.impscore.scoring import ERROR_COLUMN, SCORE_COLUMN, chunk_size, score_table, score_values

STDIN = "-"  # given as the only sentence: the sentences are standard input's lines (pragmeter.io.stdin_lines)


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
    add(parser, "no_cache", *INSTRUMENT)
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
    add(distance, *INSTRUMENT)
    distance.set_defaults(func=lambda args: print(f"{load_model(args).pragmatic_distance(args.a, args.b):.4f}"))


def run(args: argparse.Namespace) -> int:
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


def score_lines(lines: Iterable[str], load_model: Callable[[], Any], name: str = "standard input",
                step: int | None = None) -> tuple[int, Any]:
    """``pragmeter score -``: each of ``lines`` printed with its score, ``step`` lines (default :func:`chunk_size`)
    at a time as they arrive, so a pipe flows and memory stays flat. A line that cannot be scored (empty, blank) is
    printed with ``nan``, so output lines match input lines; the first is named in a warning on stderr. A line that
    cannot be read (``lines`` raises) ends the command after every line before it is printed. Returns how many lines
    could not be scored, and the model (None when ``lines`` was empty: nothing is loaded)."""
    step, model, count, failed, first = step or chunk_size(), None, 0, 0, ""
    lines = iter(lines)
    while True:
        chunk, unreadable = [], None
        try:
            chunk.extend(itertools.islice(lines, step))  # keeps the lines read before one that raises
        except PragmeterError as error:
            unreadable = error
        if chunk:
            model = model or load_model()  # once a step is read: empty input fails before loading
            scores, errors = score_values(model, chunk)
            for number, (text, score, error) in enumerate(zip(chunk, scores, errors), count + 1):
                print(f"{score:.4f}\t{text}")
                if error:
                    failed += 1
                    first = first or f"line {number}: {error}"
            sys.stdout.flush()
            count += len(chunk)
        if unreadable:
            raise unreadable
        if not chunk:
            break
    if not count:
        raise PragmeterError(f"nothing to score: {name} was empty")
    if failed:
        print(f"warning: {failed} of {count} line(s) not scored (printed with nan; first: {first})", file=sys.stderr)
    return failed, model


def score_texts_or_table(texts: Sequence[str], input_path: str | os.PathLike | None, output: str | os.PathLike | None,
                         column: str, load_model: Callable[[bool], Any], overwrite: bool = False,
                         progress: bool | None = False, stdin: BinaryIO | None = None) -> int:
    """``pragmeter score``: the sentences ``texts``, each printed with its score (``["-"]``: the lines of ``stdin``,
    default standard input, :func:`score_lines`), or the table ``input_path`` scored into ``output``
    (:func:`score_table`, its rows reported on stderr); then a note on stderr when texts were truncated.
    ``load_model(cache)`` gives the ImpScore model (``cache``: for a table or standard input, which may use the
    embedding cache). Returns how many rows could not be scored."""
    if input_path and texts:
        raise PragmeterError("give sentences or --input, not both")
    if input_path and not output:
        raise PragmeterError("--input needs --output (a .csv, .tsv, .jsonl or .parquet file)")
    if not input_path and not texts:
        raise PragmeterError("nothing to score: give sentences, or --input FILE --output FILE")
    if output and not input_path:  # sentences are printed; a file the user asked for would silently not appear
        raise PragmeterError("--output goes with --input FILE (sentences given as arguments are printed: put them "
                             "in a .txt file, one a line, to score them into a file)")
    failed = 0
    if list(texts) == [STDIN]:
        from pragmeter.io import stdin_lines

        stream = sys.stdin.buffer if stdin is None else stdin
        # typed at a terminal: each line is answered as it is entered
        failed, model = score_lines(stdin_lines(stream), lambda: load_model(True), step=1 if stream.isatty() else None)
    elif not input_path:
        model = load_model(False)
        for text, score in zip(texts, model.score(texts)):
            print(f"{score:.4f}\t{text}")
    else:
        from pragmeter.io import report_rows  # pandas: not imported when sentences are scored

        frame, model = score_table(input_path, column, output, lambda: load_model(True), overwrite, progress=progress)
        failed = report_rows(frame[ERROR_COLUMN].tolist(), "scored", Path(output), ERROR_COLUMN,
                             lambda row, reason: f"row {row + 1}, field {column!r}: {reason}")
    if model.truncated:
        print(f"note: {model.truncated} text(s) exceeded the encoder's token limit and were truncated", file=sys.stderr)
    return failed
