"""``pragmeter eval``: run benchmark tasks against a chat model and write a results JSON."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragmeter.cli.common import (INCOMPLETE, add_data_root_option, add_llm_options, add_overwrite_option,
                                  add_progress_option, add_response_cache_options, load_chat_backend, refuse_existing)
from pragmeter.errors import PragmeterError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval", help="run benchmark tasks (INLI, DRInQ, Emphasized-Talk, ISHate…) against a chat model",
        description="Evaluate a model served by any OpenAI-compatible server with the papers' protocols. Writes "
                    "OUTPUT/results.json (metrics, settings, hashes, signature) and with --log-samples "
                    "OUTPUT/samples_<task>.jsonl. Responses are cached in OUTPUT/cache/responses.jsonl as they "
                    "arrive, so rerunning an interrupted command resumes it. Requests that fail after every retry are "
                    "not scored: the run exits 3 with results.json marked \"complete\": false, and the same command "
                    "again (no --overwrite needed) asks only those. List tasks with `pragmeter tasks`.")
    parser.add_argument("--tasks", required=True, help="comma-separated task or group names (e.g. inli,drinq)")
    add_llm_options(parser)
    parser.add_argument("--mode", choices=("generate", "logprob"), default=None,
                        help="answer mode of every task: generate (parse the answer) or logprob (score the options "
                             "by log-probability; the server must return logprobs); same as --task-arg TASK.mode=…")
    parser.add_argument("--judge-model", default=None, help="backend of the LLM judge (Emphasized-Talk auto-gpt4 scores)")
    parser.add_argument("--judge-model-args", default="",
                        help="as --model-args, for the judge (temperature defaults to 1: its 3 samples are averaged)")
    parser.add_argument("--task-arg", action="append", default=[], metavar="TASK.KEY=VALUE",
                        help="a task argument, e.g. inli.split=val or hate_detection.path=texts.csv (repeatable)")
    parser.add_argument("--output", required=True, help="output folder")
    add_overwrite_option(parser)
    parser.add_argument("--limit", type=int, default=None, help="first N items of each task only (for trials)")
    parser.add_argument("--sample", type=int, default=None,
                        help="a seeded sample of N items per task, stratified by gold answer (a larger N extends a "
                             "smaller one, so a reduced run grows into the full one through the cache)")
    parser.add_argument("--sample-seed", type=int, default=0, help="seed of --sample (default 0)")
    parser.add_argument("--log-samples", action="store_true", help="write every prompt, answer, parse and gold")
    add_response_cache_options(parser, "OUTPUT/cache/responses.jsonl")
    add_progress_option(parser)
    add_data_root_option(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.eval import registry
    from pragmeter.eval.runner import EvalConfig, evaluate, finished_results, print_summary

    if args.limit is not None and args.limit < 1:
        raise PragmeterError("--limit must be at least 1")
    if args.sample is not None and (args.sample < 1 or args.limit is not None):
        raise PragmeterError("--sample must be at least 1, and not given with --limit")
    tasks = registry.instantiate(args.tasks, args.task_arg, args.mode, args.data_root)
    finished = finished_results(Path(args.output))
    refuse_existing([finished] if finished else [], args.overwrite)
    backend = load_chat_backend(args.model, args.model_args)
    judge = load_chat_backend(args.judge_model, args.judge_model_args, temperature="1") if args.judge_model else None
    output = Path(args.output)
    cache = (None if args.no_response_cache else Path(args.response_cache) if args.response_cache
             else output / "cache" / "responses.jsonl")
    payload = evaluate(EvalConfig(
        tasks=tasks, backend=backend, judge=judge, output=output, limit=args.limit, sample=args.sample,
        sample_seed=args.sample_seed, log_samples=args.log_samples,
        cache_path=cache, progress=not args.no_progress, command=list(sys.argv),
    ))
    print_summary(payload)
    print(f"results: {output / 'results.json'}", file=sys.stderr)
    failed = {name: r for name, r in payload["results"].items() if r["errors"]}
    for name, result in failed.items():
        print(f"warning: {name}: {result['errors']} of {result['n_asked']} request(s) failed after retries and "
              f"are not scored, e.g. {result['first_error']}", file=sys.stderr)
    if failed:
        print(f"pragmeter eval: incomplete: {output / 'results.json'} is marked incomplete; run the same command "
              "again to ask only the failed requests", file=sys.stderr)
        return INCOMPLETE
    return 0
