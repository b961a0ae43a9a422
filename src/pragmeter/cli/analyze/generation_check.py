"""``pragmeter generation-check``: can a chat model write sentences from most explicit to most implicit (A.15)?"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from pragmeter.cli.common import (add_overwrite_option, add_progress_option, add_runtime_options, load_model,
                                  positive_int, refuse_existing, torch_device)
from pragmeter.errors import PragmeterError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "generation-check", help="ask a chat model for sentences from most explicit to most implicit; score them",
        description="The ImpScore paper's generation check (A.15): for each topic, ask the model for four "
                    "sentences from most explicit to most implicit, RUNS times; score them with ImpScore and write "
                    "OUTPUT/generation_check.json (mean score per requested level with SD over runs, Kendall τ "
                    "between requested and scored order), a PNG and generations.jsonl. Responses are cached in "
                    "OUTPUT/cache/responses.jsonl, so a rerun resumes.")
    parser.add_argument("--model", default="openai-chat", help="chat backend (default openai-chat)")
    parser.add_argument("--model-args", default="",
                        help="KEY=VALUE pairs as for pragmeter eval (base_url, model, temperature…); temperature "
                             "defaults to 1 here so runs differ")
    parser.add_argument("--topics", default=None, help="file with one topic per line (default: 10 shipped topics)")
    parser.add_argument("--runs", type=int, default=5, help="independent runs (default 5, as in the paper)")
    parser.add_argument("--output", required=True, help="output folder")
    add_overwrite_option(parser)
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the response cache")
    add_progress_option(parser)
    parser.add_argument("--impscore", default=None, help="ImpScore model name or folder (default: the shipped one)")
    parser.add_argument("--batch-size", type=positive_int, default=64, help="ImpScore encoder batch size (default 64)")
    parser.add_argument("--device", type=torch_device, default=None, help="ImpScore torch device (default: best available)")
    add_runtime_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from pragmeter.analysis.generation import default_topics, generate, read_topics, write_generation_check
    from pragmeter.llm.backends import load_backend, parse_model_args

    if args.runs < 1:
        raise PragmeterError("--runs must be at least 1")
    topics = read_topics(args.topics) if args.topics else default_topics()
    model_args = parse_model_args(args.model_args)
    model_args.setdefault("temperature", "1")
    backend = load_backend(args.model, model_args)
    settings = backend.settings()
    output = Path(args.output)
    refuse_existing([output / "generation_check.json"], args.overwrite)
    cache = None if args.no_cache else output / "cache" / "responses.jsonl"
    impscore = load_model(args)  # fail before asking
    generations = asyncio.run(generate(backend, topics, args.runs, cache, progress=not args.no_progress))
    valid = [g for g in generations if g.sentences is not None]
    flat = [s for g in valid for s in g.sentences]
    values = impscore.score(flat) if flat else np.zeros(0)
    width = len(valid[0].sentences) if valid else 0
    scores = {(g.run, g.topic): values[i * width:(i + 1) * width] for i, g in enumerate(valid)}
    payload = write_generation_check(generations, scores, args.runs, topics, output, settings, impscore.signature())
    for level in payload["levels"]:
        mean = "-" if level["mean"] is None else f"{level['mean']:.4f}"
        sd = "-" if level["sd_over_runs"] is None else f"{level['sd_over_runs']:.4f}"
        print(f"{level['level']:>14}: mean ImpScore {mean} (SD over runs {sd})")
    tau = payload["kendall_tau_per_group"]
    if tau["mean"] is not None:
        print(f"Kendall tau (requested vs scored order): {tau['mean']:+.3f} per group over {tau['n']} groups; "
              f"levels: {payload['kendall_tau_levels']}")
    print(f"valid {payload['n_valid']} of {payload['n_requests']} answers -> {output / 'generation_check.json'}",
          file=sys.stderr)
    if payload["n_valid"] == 0:
        raise PragmeterError("no answer had four sentences; see generations.jsonl")
    return 0
