"""Run tasks against a backend: build every prompt, answer them concurrently through the cache, parse,
score each run, combine runs, and write the results JSON (and per-sample JSONL with ``log_samples``)."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path

from pragmeter.errors import PragmeterError
from pragmeter.harness.backends.base import BackendFatal, ChatBackend
from pragmeter.harness.cache import ResponseCache
from pragmeter.harness.client import CachedClient, Counters
from pragmeter.harness.results import environment, model_signature, write_results, write_samples
from pragmeter.harness.task import Sample, ScoreContext, Task, text_hash


@dataclass
class EvalConfig:
    tasks: list[Task]
    backend: ChatBackend
    output: Path
    judge: ChatBackend | None = None
    limit: int | None = None
    log_samples: bool = False
    cache_path: Path | None = None  # None: no cache
    progress: bool = True
    command: list[str] | None = None


def _task_max_tokens(task: Task) -> int | None:
    return task.max_tokens


async def _answer_all(config: EvalConfig, client: CachedClient) -> dict[str, list[Sample]]:
    jobs = []
    for task in config.tasks:
        items = task.items()[: config.limit] if config.limit else task.items()
        for run in range(task.runs):
            for item in items:
                jobs.append((task, run, item, task.messages(item, run)))
    counters = Counters(len(jobs), "eval", enabled=config.progress)
    try:
        async with asyncio.TaskGroup() as group:
            pending = [group.create_task(client.chat(messages, _task_max_tokens(task), counters=counters))
                       for task, _, _, messages in jobs]
    except* BackendFatal as failure:
        raise PragmeterError(str(failure.exceptions[0])) from None
    finally:
        counters.close()
    samples: dict[str, list[Sample]] = {task.name: [] for task in config.tasks}
    for (task, run, item, messages), job in zip(jobs, pending):
        answer = job.result()
        samples[task.name].append(Sample(
            task=task.name, run=run, item_id=task.item_id(item), messages=messages, response=answer.text,
            parsed=task.parse(answer.text, item) if answer.error is None else None, gold=task.gold(item),
            error=answer.error, cached=answer.cached, fields=task.fields(item),
        ))
    return samples


async def _evaluate(config: EvalConfig) -> dict:
    cache = ResponseCache(config.cache_path) if config.cache_path else None
    client = CachedClient(config.backend, cache)
    judge = CachedClient(config.judge, cache) if config.judge else None
    try:
        samples = await _answer_all(config, client)
        context = ScoreContext(judge=judge, progress=config.progress)
        results = {}
        try:
            for task in config.tasks:
                results[task.name] = await _task_results(task, samples[task.name], context, config)
        except* BackendFatal as failure:
            raise PragmeterError(str(failure.exceptions[0])) from None
    finally:
        await config.backend.aclose()
        if config.judge:
            await config.judge.aclose()
        if cache is not None:
            cache.close()
    if config.log_samples:
        for task in config.tasks:
            write_samples(config.output, task.name, [s.record() for s in samples[task.name]])
    return results


async def _task_results(task: Task, samples: list[Sample], context: ScoreContext, config: EvalConfig) -> dict:
    per_run = []
    for run in range(task.runs):
        per_run.append(await task.score([s for s in samples if s.run == run], context))
    metrics = per_run[0] if task.runs == 1 else task.combine_runs(per_run, samples)
    settings = config.backend.settings()
    max_tokens = settings.get("max_tokens") or task.max_tokens
    signature = task.signature(model_signature(settings, task.max_tokens))
    if config.judge is not None and task.uses_judge:
        from pragmeter.harness.task import JUDGE_MAX_TOKENS

        signature += f"|judge={model_signature(config.judge.settings(), JUDGE_MAX_TOKENS)}"
    return {
        "version": task.version,
        "headline": task.headline(),
        "metrics": metrics,
        "runs": per_run if task.runs > 1 else None,
        "n_items": len(samples) // task.runs,
        "n_requests": len(samples),
        "invalid": sum(not s.valid for s in samples),
        "errors": sum(s.error is not None for s in samples),
        "first_error": next((s.error for s in samples if s.error is not None), None),
        "cache_hits": sum(s.cached for s in samples),
        "arguments": task.args,
        "max_tokens": max_tokens,
        "prompt_hashes": {name: text_hash(text) for name, text in sorted(task.templates().items())},
        "dataset_checksums": task.checksums(),
        "metric_signatures": task.metric_signatures(),
        "signature": signature,
    }


def evaluate(config: EvalConfig) -> dict:
    """Run everything and write ``results.json``; returns the results payload."""
    config.output.mkdir(parents=True, exist_ok=True)
    results = asyncio.run(_evaluate(config))
    payload = {
        **environment(),
        "command": config.command,
        "model": config.backend.settings(),
        "judge": config.judge.settings() if config.judge else None,
        "limit": config.limit,
        "results": results,
        "signature": " || ".join(r["signature"] for r in results.values()),
    }
    write_results(config.output, payload)
    return payload


def summary_lines(payload: dict) -> list[str]:
    lines = []
    for name, result in payload["results"].items():
        value = result["metrics"].get(result["headline"])
        if isinstance(value, dict):
            value = f"{value['mean']:.4f} ± {value['sd']:.4f}"
        elif isinstance(value, float):
            value = f"{value:.4f}"
        lines.append(f"{name}: {result['headline']}={value}  items={result['n_items']} "
                     f"invalid={result['invalid']} errors={result['errors']} cached={result['cache_hits']}")
    return lines


def print_summary(payload: dict, stream=None) -> None:
    stream = stream or sys.stdout  # looked up per call: a default bound at import outlives a replaced stdout
    for line in summary_lines(payload):
        print(line, file=stream)
