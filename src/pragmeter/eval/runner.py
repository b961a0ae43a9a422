"""Run tasks against a backend: build every prompt, answer them concurrently through the cache, parse,
score each run, combine runs, and write the results JSON (and per-sample JSONL with ``log_samples``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pragmeter.errors import InvalidParameter, PragmeterError
from pragmeter.provenance import RunRecord
from pragmeter.llm.backends.base import BackendFatal, ChatBackend
from pragmeter.llm.batch import answer_all, cached_clients
from pragmeter.llm.client import Answer
from pragmeter.llm.request import Request
from pragmeter.eval.results import model_signature, write_results, write_samples
from pragmeter.eval.task import Sample, ScoreContext, Task
from pragmeter.io.atomic import make_folders, remove_made
from pragmeter.text import text_hash
from pragmeter.llm import choice

log = logging.getLogger("pragmeter")


UNASKABLE = "unaskable"  # the sample field (and results key) of prompts the model can never take, with the reason


@dataclass
class EvalConfig:
    tasks: list[Task]
    backend: ChatBackend
    output: Path
    judge: ChatBackend | None = None
    limit: int | None = None
    sample: int | None = None  # a seeded sample of N items per task, stratified by gold answer
    sample_seed: int = 0
    log_samples: bool = False
    cache_path: Path | None = None  # None: no cache
    progress: bool = True
    command: list[str] | None = None


def stratified_order(task: Task, seed: int) -> list:
    """The task's items in a seeded order whose every prefix is stratified by gold answer: each label's items
    are shuffled (by a hash of seed and item id), then labels take turns in proportion to their size
    (Sainte-Laguë), so the first N items keep the label shares and a larger N extends a smaller one."""
    from collections import defaultdict

    groups: dict[str, list] = defaultdict(list)
    for item in task.items():
        groups[str(task.gold(item))].append(item)
    for group in groups.values():
        group.sort(key=lambda item: text_hash(f"{seed}:{task.item_id(item)}"))
    taken = dict.fromkeys(groups, 0)
    order = []
    for _ in range(sum(map(len, groups.values()))):
        label = min((l for l in sorted(groups) if taken[l] < len(groups[l])),
                    key=lambda l: (taken[l] + 0.5) / len(groups[l]))
        order.append(groups[label][taken[label]])
        taken[label] += 1
    return order


def selected_items(task: Task, config: EvalConfig) -> list:
    """The items a run evaluates: all, the first ``limit``, or a stratified seeded ``sample``."""
    if config.sample:
        return stratified_order(task, config.sample_seed)[: config.sample]
    return task.items()[: config.limit] if config.limit else task.items()


def _jobs(config: EvalConfig) -> list[tuple[Task, int, object, Request]]:
    jobs = []
    for task in config.tasks:
        items = selected_items(task, config)
        for run in range(task.runs):
            for item in items:
                jobs.append((task, run, item, task.request(item, run)))
    return jobs


def check_kinds(jobs: list[tuple[Task, int, object, Request]], backend: ChatBackend) -> None:
    """Refuse, before any request, a task that asks the backend a kind of request it does not answer (a local
    classifier given a chat-only task): a PragmeterError naming the task, the kind and the kinds it answers."""
    for task, *_, request in jobs:
        if request.kind not in backend.kinds:
            model = backend.identity().get("model") or backend.identity().get("backend")
            raise PragmeterError(f"task {task.name} asks {request.kind} requests, and the model {model} answers only "
                                 f"{' and '.join(sorted(backend.kinds))} requests")


async def _evaluate(config: EvalConfig) -> dict:
    jobs = _jobs(config)
    check_kinds(jobs, config.backend)
    # A prompt the model can never take (a local classifier given an empty text) is not sent: it is an invalid
    # answer, listed in the results, and the run is complete (a rerun could not answer it either).
    unaskable = [config.backend.unaskable(request) for *_, request in jobs]
    asked = [i for i, reason in enumerate(unaskable) if reason is None]
    async with cached_clients(config.cache_path, config.backend, config.judge) as (client, judge):
        answers = dict(zip(asked, await answer_all(client, [jobs[i][3] for i in asked], "eval", config.progress)))
        samples: dict[str, list[Sample]] = {task.name: [] for task in config.tasks}
        for index, (task, run, item, request) in enumerate(jobs):
            reason, fields = unaskable[index], task.fields(item)
            answer = answers[index] if reason is None else Answer(None, cached=False)
            if reason is not None:
                fields = {**fields, UNASKABLE: reason}
            parsed, option_logprobs = (None, None) if answer.error is not None or reason is not None else \
                task.read_answer(answer.text, answer.top_logprobs, item)
            samples[task.name].append(Sample(
                task=task.name, run=run, item_id=task.item_id(item), messages=request.messages, response=answer.text,
                parsed=parsed, gold=task.gold(item), error=answer.error, cached=answer.cached,
                fields=fields, option_logprobs=option_logprobs,
            ))
        context = ScoreContext(judge=judge, progress=config.progress)
        results = {}
        try:
            for task in config.tasks:
                results[task.name] = await _task_results(task, samples[task.name], context, config)
        except* BackendFatal as failure:
            raise PragmeterError(str(failure.exceptions[0])) from None
    if config.log_samples:
        for task in config.tasks:
            write_samples(config.output, task.name, [s.record() for s in samples[task.name]])
    return results


async def _task_results(task: Task, samples: list[Sample], context: ScoreContext, config: EvalConfig) -> dict:
    # A request that failed after every retry is not an answer: it is left out of the scores (and asked again by a
    # rerun), never counted as a wrong answer. A run with no answer at all has no metrics.
    answered = [s for s in samples if s.error is None]
    per_run = []
    for run in range(task.runs):
        run_samples = [s for s in answered if s.run == run]
        per_run.append(await task.score(run_samples, context) if run_samples else {})
    if not all(per_run):
        metrics = per_run[0] if task.runs == 1 else {}
    else:
        metrics = per_run[0] if task.runs == 1 else task.combine_runs(per_run, answered)
    settings = config.backend.settings()
    max_tokens = settings.get("max_tokens") or task.max_tokens
    signature = task.signature(model_signature(settings, task.max_tokens))
    if config.sample:
        signature = signature.replace("|runs=", f"|sample={config.sample},seed={config.sample_seed},stratified|runs=", 1)
    if config.judge is not None and task.uses_judge:
        from pragmeter.eval.task import JUDGE_MAX_TOKENS

        signature += f"|judge={model_signature(config.judge.settings(), JUDGE_MAX_TOKENS)}"
    return {
        "version": task.version,
        "mode": task.mode,
        "headline": task.headline(),
        "metrics": metrics,
        "runs": per_run if task.runs > 1 else None,
        "n_items": len(samples) // task.runs,
        "n_requests": len(samples),
        "n_asked": len(samples),
        "n_answered": len(answered),
        "complete": len(answered) == len(samples),
        "invalid": sum(not s.valid for s in answered),
        # the items the model could not be asked (counted in invalid), each with the reason
        UNASKABLE: {s.item_id: s.fields[UNASKABLE] for s in samples if UNASKABLE in s.fields},
        "errors": len(samples) - len(answered),
        "first_error": next((s.error for s in samples if s.error is not None), None),
        "cache_hits": sum(s.cached for s in samples),
        "arguments": task.args,
        "max_tokens": max_tokens,
        "prompt_hashes": {name: text_hash(text) for name, text in sorted(task.templates().items())},
        "dataset_checksums": task.checksums(),
        "metric_signatures": {**task.metric_signatures(),
                              **({"answer": choice.SIGNATURE} if task.mode == "logprob" else {})},
        "signature": signature,
    }


def evaluate(config: EvalConfig) -> dict:
    """Run everything and write ``results.json``; returns the results payload."""
    made: list[Path] = []
    make_folders(config.output, made)
    try:
        if config.cache_path is not None and config.cache_path.parent == config.output / "cache":
            from pragmeter.io.untrusted import folder_inside

            folder_inside(config.output, "cache")  # the output's own cache folder: never a link to someone else's
        results = asyncio.run(_evaluate(config))
    except BaseException:  # a run that got no answer leaves no empty output folder behind (answers cached stay)
        remove_made(made)
        raise
    signature = " || ".join(r["signature"] for r in results.values())
    payload = {
        "run": RunRecord.now(signature, config.command).to_dict(),
        "command": config.command,
        "model": config.backend.settings(),
        "judge": config.judge.settings() if config.judge else None,
        "limit": config.limit,
        "sample": {"n": config.sample, "seed": config.sample_seed, "stratified_by": "gold"} if config.sample else None,
        "results": results,
        # False while some request failed after every retry: the same command resumes it (no --overwrite needed)
        "complete": all(r["complete"] for r in results.values()),
        "signature": signature,
    }
    write_results(config.output, payload)
    return payload


def finished_results(output: Path) -> Path | None:
    """``output/results.json`` when it holds a complete run (what ``--overwrite`` guards), else None: an
    incomplete run (``"complete": false``) is resumed by the same command."""
    path = output / "results.json"
    if not path.is_file():
        return None
    try:
        import json

        return None if json.loads(path.read_text(encoding="utf-8")).get("complete") is False else path
    except (OSError, ValueError, AttributeError):
        return path  # unreadable: not ours to judge, so it is guarded as a finished one


def summary_lines(payload: dict) -> list[str]:
    from pragmeter.metrics.intervals import format_estimate

    lines = []
    for name, result in payload["results"].items():
        value = result["metrics"].get(result["headline"])
        if isinstance(value, (dict, float)):
            value = format_estimate(value)  # runs: mean ± SD [95% CI]; items= below is its n
        elif value is None:
            value = "n/a"
        asked = result.get("n_asked", result["n_requests"])
        answered = result.get("n_answered", asked - result["errors"])
        unaskable = result.get(UNASKABLE) or {}
        lines.append(f"{name}: {result['headline']}={value}  items={result['n_items']} "
                     f"answered {answered}/{asked} invalid={result['invalid']} errors={result['errors']} "
                     f"cached={result['cache_hits']}"
                     + (f"  ({len(unaskable)} invalid as the model cannot be asked them: "
                        f"{', '.join(list(unaskable)[:5])}{', …' if len(unaskable) > 5 else ''}; "
                        f"{next(iter(unaskable.values()))})" if unaskable else ""))
    return lines


def failure_lines(payload: dict, output: Path) -> list[str]:
    """Warnings for the tasks whose requests failed after every retry, and the one saying how to resume (none
    when every request was answered)."""
    failed = {name: r for name, r in payload["results"].items() if r["errors"]}
    lines = [f"warning: {name}: {result['errors']} of {result['n_asked']} request(s) failed after retries and are not "
             f"scored, e.g. {result['first_error']}" for name, result in failed.items()]
    if failed:
        lines.append(f"pragmeter eval: incomplete: {output / 'results.json'} is marked incomplete; run the same "
                     "command again to ask only the failed requests")
    return lines


def run_eval(tasks: str, output: Path, backend: Callable[[], ChatBackend],
             judge: Callable[[], ChatBackend | None] = lambda: None, task_args: Sequence[str] = (),
             mode: str | None = None, root: str | Path | None = None, overwrite: bool = False,
             limit: int | None = None, sample: int | None = None, sample_seed: int = 0, log_samples: bool = False,
             cache_path: Path | None = None, progress: bool = True,
             command: list[str] | None = None) -> tuple[list[str], bool]:
    """``pragmeter eval``: the tasks ``tasks`` names (``registry.instantiate`` with ``task_args`` and ``mode``), run
    by :func:`evaluate` into ``output``. Everything is checked before ``backend()`` and ``judge()`` build the chat
    backends: ``limit`` and ``sample`` (not both), the tasks, and a finished ``results.json`` (refused unless
    ``overwrite``). Returns the summary (a line per task) and whether every request was answered (else the output
    is marked incomplete); the results file and any failures are said through the ``pragmeter`` logger."""
    from pragmeter.eval import registry
    from pragmeter.io import check_outputs

    if limit is not None and limit < 1:
        raise InvalidParameter("limit", limit, "must be at least 1")
    if sample is not None and sample < 1:
        raise InvalidParameter("sample", sample, "must be at least 1")
    if sample is not None and limit is not None:
        raise InvalidParameter("sample", sample, "give one or the other", also={"limit": limit})
    instances = registry.instantiate(tasks, list(task_args), mode, root)
    check_outputs(filter(None, [finished_results(output)]), overwrite)
    payload = evaluate(EvalConfig(
        tasks=instances, backend=backend(), judge=judge(), output=output, limit=limit, sample=sample,
        sample_seed=sample_seed, log_samples=log_samples, progress=progress, cache_path=cache_path, command=command))
    log.info(f"results: {output / 'results.json'}")
    failures = failure_lines(payload, output)
    for line in failures:
        log.warning(line)
    return summary_lines(payload), not failures
