"""Generation check (ImpScore paper A.15): ask a chat model for four sentences per topic, from most explicit to
most implicit, over several runs; score them with ImpScore and report the mean score per requested level
(mean and SD over runs of the per-run averages over topics) and Kendall τ between requested and scored order.

The prompt is the paper's. Runs are independent samples (``sample`` index in the cache key; the seed, when
given, is offset per run), so the model should sample (temperature > 0; the command defaults to 1).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from pragmeter.metrics.correlation import kendall_tau
from pragmeter.errors import InvalidParameter, PragmeterError

log = logging.getLogger("pragmeter")

PROMPT = ("Given the topic {topic}, please generate four sentences about it, ranging from most explicit to most "
          "implicit. Output each sentence on a new line.")
LEVELS = ("most explicit", "explicit", "implicit", "most implicit")
MAX_TOKENS = 400
_BULLET = re.compile(r"^\s*(?:[-*•]+|\(?\d+[.):]|\(?[a-d][.)])\s*", re.IGNORECASE)
_LEVEL_LABEL = re.compile(r"^\s*\**\s*\(?(?:most\s+|least\s+|very\s+|slightly\s+|moderately\s+)?"
                          r"(?:explicit|implicit)\)?\s*\**\s*[:\-–—]\s*\**\s*", re.IGNORECASE)


def default_topics() -> list[str]:
    text = resources.files("pragmeter.analysis").joinpath("generation_topics.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def read_topics(path: str | Path) -> list[str]:
    from pragmeter.io.tables import lines, read_text

    topics = [line.strip() for line in lines(read_text(path)) if line.strip()]
    if not topics:
        raise PragmeterError(f"{path}: no topics (one per line)")
    return topics


def parse_sentences(text: str | None) -> list[str] | None:
    """The four sentences of an answer, most explicit first, or None when there are not exactly four.

    Numbering, bullets, level labels ("Most explicit: …"), markdown bold and surrounding quotes are removed;
    lines that are only a heading (ending with ':') are dropped."""
    if not text:
        return None
    sentences = []
    for line in text.splitlines():
        line = line.strip()
        if not line or (line.endswith(":") and len(line.split()) <= 6):
            continue
        line = _BULLET.sub("", line)
        line = _LEVEL_LABEL.sub("", line).strip().strip("*").strip()
        line = line.strip('"“”').strip()
        if line:
            sentences.append(line)
    return sentences if len(sentences) == len(LEVELS) else None


@dataclass
class Generation:
    run: int
    topic: str
    response: str | None
    sentences: list[str] | None
    error: str | None = None
    cached: bool = False


async def generate(backend, topics: list[str], runs: int, cache_path: Path | None, progress: bool = True
                   ) -> list[Generation]:
    from pragmeter.llm.batch import answer_all, cached_clients
    from pragmeter.llm.request import Request

    jobs = [(run, topic) for run in range(runs) for topic in topics]
    prompts = [Request([{"role": "user", "content": PROMPT.format(topic=topic)}], MAX_TOKENS, sample=run)
               for run, topic in jobs]
    async with cached_clients(cache_path, backend) as (client,):
        answers = await answer_all(client, prompts, "generation", progress)
    return [Generation(run=run, topic=topic, response=answer.text, sentences=parse_sentences(answer.text),
                       error=answer.error, cached=answer.cached) for (run, topic), answer in zip(jobs, answers)]


def summarise(generations: list[Generation], scores: dict[tuple[int, str], np.ndarray], runs: int) -> dict:
    """Mean ImpScore per level (per run over topics, then mean and SD over runs) and Kendall τ."""
    order = np.arange(len(LEVELS), dtype=np.float64)
    per_run = np.full((runs, len(LEVELS)), np.nan)
    taus = []
    for run in range(runs):
        groups = [scores[(g.run, g.topic)] for g in generations if g.run == run and (g.run, g.topic) in scores]
        if groups:
            per_run[run] = np.mean(np.stack(groups), axis=0)
    for generation in generations:
        key = (generation.run, generation.topic)
        if key in scores:
            tau = kendall_tau(order, scores[key])
            if tau is not None:
                taus.append(tau)
    levels = []
    for index, level in enumerate(LEVELS):
        values = per_run[:, index][~np.isnan(per_run[:, index])]
        levels.append({"level": level, "mean": float(values.mean()) if values.size else None,
                       "sd_over_runs": float(values.std(ddof=1)) if values.size > 1 else None,
                       "per_run": [None if np.isnan(v) else float(v) for v in per_run[:, index]]})
    means = [lv["mean"] for lv in levels]
    valid = len(scores)
    return {
        "levels": levels,
        "kendall_tau_levels": kendall_tau(order, means) if None not in means else None,
        "kendall_tau_per_group": {"mean": float(np.mean(taus)) if taus else None,
                                  "sd": float(np.std(taus, ddof=1)) if len(taus) > 1 else None, "n": len(taus),
                                  "share_perfect_order": float(np.mean(np.isclose(taus, 1.0))) if taus else None},
        "n_requests": len(generations), "n_valid": valid, "n_invalid": len(generations) - valid,
        "n_errors": sum(g.error is not None for g in generations),
    }


def write_generation_check(generations: list[Generation], scores: dict[tuple[int, str], np.ndarray], runs: int,
                           topics: list[str], output: Path, model_settings: dict, impscore: str) -> dict:
    import json

    from pragmeter.analysis.plots import generation_figure
    from pragmeter.provenance import RunRecord
    from pragmeter.text import text_hash
    from pragmeter.io import atomic_path, write_json_atomic

    output.mkdir(parents=True, exist_ok=True)
    summary = summarise(generations, scores, runs)
    samples_file = "generations.jsonl"
    with atomic_path(output / samples_file) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for g in generations:
            key = (g.run, g.topic)
            record = {"run": g.run, "topic": g.topic, "prompt": PROMPT.format(topic=g.topic), "response": g.response,
                      "sentences": g.sentences, "valid": key in scores, "error": g.error, "cached": g.cached,
                      "impscores": scores[key].tolist() if key in scores else None,
                      "kendall_tau": kendall_tau(np.arange(len(LEVELS)), scores[key]) if key in scores else None}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    png = "generation_check.png"
    model_name = model_settings.get("model", "model")
    generation_figure(f"generation check — {model_name} ({runs} runs × {len(topics)} topics)", list(LEVELS),
                      [lv["mean"] for lv in summary["levels"]], [lv["sd_over_runs"] for lv in summary["levels"]],
                      output / png)
    payload = {"kind": "pragmeter-generation-check", "version": 1, "model": model_settings,
               "impscore_model": impscore, "prompt": PROMPT, "prompt_hash": text_hash(PROMPT), "runs": runs,
               "topics": topics, **summary, "plots": [png], "samples_file": samples_file,
               "run": RunRecord.now(text_hash(PROMPT)).to_dict()}
    write_json_atomic(output / "generation_check.json", payload)
    return payload


def generation_check(backend, impscore, topics: list[str], runs: int, output: Path, cache: Path | None,
                     progress: bool = True) -> dict:
    """The paper's generation check (A.15) end to end: ask ``backend`` for the graded sentences of every topic
    ``runs`` times (answers cached in ``cache``), score the valid answers with ``impscore`` and write
    ``output/generation_check.json``, its plot and ``generations.jsonl``; the payload written."""
    import asyncio

    settings = backend.settings()  # as configured, before any request
    if cache is not None and cache.parent == output / "cache":
        from pragmeter.io.untrusted import folder_inside

        output.mkdir(parents=True, exist_ok=True)
        folder_inside(output, "cache")  # the output's own cache folder: never a link to someone else's
    generations = asyncio.run(generate(backend, topics, runs, cache, progress=progress))
    valid = [g for g in generations if g.sentences is not None]
    flat = [s for g in valid for s in g.sentences]
    values = impscore.score(flat) if flat else np.zeros(0)
    width = len(valid[0].sentences) if valid else 0
    scores = {(g.run, g.topic): values[i * width:(i + 1) * width] for i, g in enumerate(valid)}
    return write_generation_check(generations, scores, runs, topics, output, settings, impscore.signature())


def summary_lines(payload: dict) -> list[str]:
    """The generation check in a few lines: mean score per requested level (SD over runs), then Kendall τ."""
    lines = []
    for level in payload["levels"]:
        mean = "-" if level["mean"] is None else f"{level['mean']:.4f}"
        sd = "-" if level["sd_over_runs"] is None else f"{level['sd_over_runs']:.4f}"
        lines.append(f"{level['level']:>14}: mean ImpScore {mean} (SD over runs {sd})")
    tau = payload["kendall_tau_per_group"]
    if tau["mean"] is not None:
        lines.append(f"Kendall tau (requested vs scored order): {tau['mean']:+.3f} per group over {tau['n']} groups; "
                     f"levels: {payload['kendall_tau_levels']}")
    return lines


def run_generation_check(backend: Callable[[], object], impscore: Callable[[], object], topics: str | Path | None,
                         runs: int, output: Path, response_cache: bool = True, overwrite: bool = False,
                         progress: bool = True) -> Iterator[str]:
    """``pragmeter analyze generation-check``: :func:`generation_check` on the topics of the file ``topics`` (default:
    the shipped ones), answers cached in ``output/cache/responses.jsonl`` unless not ``response_cache``. Checks
    everything (``runs``, topics, ``backend()``, the output unless ``overwrite``, ``impscore()``) before asking;
    yields the summary lines, then says the count of valid answers (the ``pragmeter`` logger); no valid answer is an
    error."""
    from pragmeter.io import check_output

    if runs < 1:
        raise InvalidParameter("runs", runs, "must be at least 1")
    topic_list = read_topics(topics) if topics else default_topics()
    chat = backend()
    check_output(output / "generation_check.json", overwrite)
    model = impscore()  # fail before asking
    cache = output / "cache" / "responses.jsonl" if response_cache else None
    payload = generation_check(chat, model, topic_list, runs, output, cache, progress=progress)
    yield from summary_lines(payload)
    log.info(f"valid {payload['n_valid']} of {payload['n_requests']} answers -> {output / 'generation_check.json'}")
    if payload["n_valid"] == 0:
        raise PragmeterError("no answer had four sentences; see generations.jsonl")
