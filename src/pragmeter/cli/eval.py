"""``pragmeter eval``: run benchmark tasks against a chat model and write a results JSON; ``pragmeter tasks``: the
tasks and groups it can run, with their versions."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pragmeter.cli.common import INCOMPLETE, add, load_chat_backend, non_negative_int, positive_int, response_cache


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
    add(parser, "llm", "model_args")
    parser.add_argument("--mode", choices=("generate", "logprob"), default=None,
                        help="answer mode of every task: generate (parse the answer) or logprob (score the options "
                             "by log-probability; the server must return logprobs); same as --task-arg TASK.mode=…")
    parser.add_argument("--judge-model", default=None,
                        help="backend of the LLM judge (Emphasized-Talk auto-gpt4 scores)")
    parser.add_argument("--judge-model-args", default="", help="as --model-args, for the judge (temperature defaults "
                                                               "to 1: its 3 samples are averaged)")
    parser.add_argument("--task-arg", action="append", default=[], metavar="TASK.KEY=VALUE",
                        help="a task argument, e.g. inli.split=val or hate_detection.path=texts.csv (repeatable)")
    add(parser, "overwrite", output={"required": True, "help": "output folder"})
    add(parser, limit={"help": "first N items of each task only (for trials)"})
    parser.add_argument("--sample", type=positive_int, default=None,
                        help="a seeded sample of N items per task, stratified by gold answer (a larger N extends a "
                             "smaller one, so a reduced run grows into the full one through the cache)")
    parser.add_argument("--sample-seed", type=non_negative_int, default=0, help="seed of --sample (default 0)")
    parser.add_argument("--log-samples", action="store_true", help="write every prompt, answer, parse and gold")
    add(parser, "response_cache", "no_response_cache", "no_progress", "data_root")
    parser.set_defaults(func=run)
    tasks = subparsers.add_parser("tasks", help="list the benchmark tasks with their versions",
                                  description="List evaluation tasks (name, version, description, arguments) and task "
                                              "groups.")
    tasks.set_defaults(func=run_tasks)


def run(args: argparse.Namespace) -> int:
    from pragmeter.eval.runner import run_eval

    output = Path(args.output)
    judge = (lambda: load_chat_backend(args.judge_model, args.judge_model_args, temperature="1") if args.judge_model
             else None)
    summary, complete = run_eval(args.tasks, output, lambda: load_chat_backend(args.model, args.model_args), judge,
                                 args.task_arg, args.mode, args.data_root, args.overwrite, args.limit, args.sample,
                                 args.sample_seed, args.log_samples,
                                 response_cache(args, output / "cache" / "responses.jsonl"), not args.no_progress,
                                 list(sys.argv))
    print(*summary, sep="\n")
    return 0 if complete else INCOMPLETE


def run_tasks(args: argparse.Namespace) -> int:
    from pragmeter.eval.registry import listing

    print(*listing(), sep="\n")
    return 0
