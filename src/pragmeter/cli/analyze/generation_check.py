"""``pragmeter analyze generation-check``: can a chat model write sentences from most explicit to most implicit
(A.15)?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragmeter.cli.common import INSTRUMENT, MODEL_ARGS_HELP, add, load_chat_backend, load_model, refuse_existing
from pragmeter.errors import PragmeterError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
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
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.analysis.generation import default_topics, generation_check, read_topics, summary_lines

    if args.runs < 1:
        raise PragmeterError("--runs must be at least 1")
    topics = read_topics(args.topics) if args.topics else default_topics()
    backend = load_chat_backend(args.model, args.model_args, temperature="1")
    output = Path(args.output)
    refuse_existing([output / "generation_check.json"], args.overwrite)
    cache = None if args.no_response_cache else output / "cache" / "responses.jsonl"
    impscore = load_model(args)  # fail before asking
    payload = generation_check(backend, impscore, topics, args.runs, output, cache, progress=not args.no_progress)
    for line in summary_lines(payload):
        print(line)
    print(f"valid {payload['n_valid']} of {payload['n_requests']} answers -> {output / 'generation_check.json'}",
          file=sys.stderr)
    if payload["n_valid"] == 0:
        raise PragmeterError("no answer had four sentences; see generations.jsonl")
    return 0
