"""One generation run: a chat backend behind the harness's response cache, running stages of prompts.

A stage sends one prompt per input, checks each answer (empty, refused, malformed -> asked again as an
independent sample, up to ``retries`` more times, then dropped), and counts what came in, what came out and
why the rest was dropped. Every answer that arrives is in the cache at once, so a killed run started again
sends no request that had been answered — retries included, since retry ``k`` is cached as sample ``k``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pragmeter.errors import InvalidParameter, PragmeterError
from pragmeter.generate.prompts import prompt_hash
from pragmeter.generate.validation import ABSTAINED, Malformed, is_refusal, strings_in
from pragmeter.llm.backends.base import ChatBackend
from pragmeter.llm.batch import run_batch
from pragmeter.llm.cache import ResponseCache
from pragmeter.llm.client import CachedClient, Counters
from pragmeter.llm.request import Messages, Request

log = logging.getLogger("pragmeter")

DROP_REASONS = ("empty", "refused", "malformed", "failed")


@dataclass
class Outcome:
    """The fate of one prompt: ``value`` is the parsed answer when ``status`` is "ok"."""

    status: str  # ok | abstained | empty | refused | malformed | failed
    value: Any = None
    reason: str | None = None  # why it was dropped (last attempt)
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class StageCounts:
    name: str
    n_in: int = 0
    n_out: int = 0
    statuses: Counter = field(default_factory=Counter)
    requests: int = 0
    cached: int = 0
    retried: int = 0
    filtered: Counter = field(default_factory=Counter)  # later, non-LLM filters of this stage's output

    def line(self) -> str:
        dropped = ", ".join(f"{r} {self.statuses[r]}" for r in DROP_REASONS)
        abstained = f", abstained {self.statuses['abstained']}" if self.statuses["abstained"] else ""
        return (f"stage {self.name}: in {self.n_in} -> out {self.n_out} (dropped: {dropped}{abstained}; "
                f"requests {self.requests}, cached {self.cached}, retried {self.retried})")

    def record(self) -> dict:
        return {"stage": self.name, "in": self.n_in, "out": self.n_out, "statuses": dict(self.statuses),
                "filtered": dict(self.filtered), "requests": self.requests, "cached": self.cached,
                "retried": self.retried}


class GenerationSession:
    def __init__(self, backend: ChatBackend, cache_path: Path | None, retries: int = 2, progress: bool = True,
                 on_line: Callable[[str], None] | None = None):
        if retries < 0:
            raise InvalidParameter("retries", retries, "must be at least 0")
        self.backend = backend
        self.cache = ResponseCache(cache_path) if cache_path is not None else None
        self.client = CachedClient(backend, self.cache)
        self.retries, self.progress = retries, progress
        self.say = on_line or log.info  # the run's counts, a line at a time (the command shows them on stdout)
        self.stages: list[StageCounts] = []
        self.prompt_hashes: dict[str, str] = {}

    @property
    def model(self) -> str:
        return str(self.backend.identity().get("model"))

    def settings(self) -> dict:
        return self.backend.settings()

    async def _one(self, messages: Messages, parse: Callable[[str], Any], max_tokens: int | None,
                   counts: StageCounts, counters: Counters) -> Outcome:
        outcome = Outcome("failed")
        for attempt in range(self.retries + 1):
            answer = await self.client.chat(Request(messages, max_tokens, sample=attempt),
                                            counters if attempt == 0 else None)
            counts.requests += 1
            counts.cached += answer.cached
            counts.retried += attempt > 0
            outcome.attempts = attempt + 1
            if answer.error is not None:  # the backend already retried transport errors; a rerun tries again
                outcome.status, outcome.reason = "failed", answer.error
                return outcome
            outcome.status, outcome.value, outcome.reason = self._check(answer.text, parse)
            if outcome.status in ("ok", "abstained"):
                return outcome
        outcome.value = None
        return outcome

    @staticmethod
    def _check(text: str | None, parse: Callable[[str], Any]) -> tuple[str, Any, str | None]:
        if not isinstance(text, str) or not text.strip():
            return "empty", None, "no content"
        try:
            value = parse(text)
        except Malformed as problem:
            return ("refused", None, "refusal") if is_refusal(text) else ("malformed", None, str(problem))
        if value is ABSTAINED:
            return "abstained", None, None
        if any(is_refusal(s) for s in strings_in(value)):
            return "refused", None, "refusal"
        return "ok", value, None

    async def stage(self, name: str, prompts: list[Messages], parse: Callable[[str], Any] | list[Callable[[str], Any]],
                    max_tokens: int | None = None, templates: dict[str, str] | None = None) -> list[Outcome]:
        """Answer every prompt; returns one Outcome per prompt, in order, and says the stage's counts.

        ``parse`` turns an answer into its value or raises Malformed; give a list for one parser per prompt.
        ``templates`` (name -> text) are the templates used, whose hashes go into the report.
        """
        parsers = parse if isinstance(parse, list) else [parse] * len(prompts)
        for template_name, text in (templates or {}).items():
            self.prompt_hashes[template_name] = prompt_hash(text)
        counts = StageCounts(name, n_in=len(prompts))
        outcomes = await run_batch(
            len(prompts), lambda i, counters: self._one(prompts[i], parsers[i], max_tokens, counts, counters),
            name, self.progress)
        counts.statuses.update(o.status for o in outcomes)
        counts.n_out = counts.statuses["ok"]
        self.stages.append(counts)
        self.report(counts)
        return outcomes

    def filtered(self, stage: str, reason: str, count: int) -> None:
        """Count items a later, non-LLM check removed from what stage ``stage`` produced (too similar, no
        negative, duplicate…); said at once and written to the report with the stage."""
        counts = next(c for c in self.stages if c.name == stage)
        counts.filtered[reason] += count
        self.say(f"after stage {stage}: {reason}: {count} removed")

    def report(self, counts: StageCounts) -> None:
        self.say(counts.line())

    def why_empty(self) -> str:
        """Where the items were lost, for a run that produced no rows: the first stage with nothing out (or after
        its filters), with its drop counts."""
        for counts in self.stages:
            drops = [f"{reason} {n}" for reason, n in counts.statuses.items() if reason != "ok" and n]
            drops += [f"{reason} {n}" for reason, n in counts.filtered.items() if n]
            if counts.n_out == 0 or counts.n_out <= sum(counts.filtered.values()):
                return f"stage {counts.name}: {counts.n_in} in, none left ({', '.join(drops) or 'no input'})"
        return "every item was filtered out"

    def failed_requests(self) -> int:
        return sum(c.statuses["failed"] for c in self.stages)

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self.cache is not None:
            self.cache.close()


def run_pipeline(pipeline: Callable[[GenerationSession, Path], Any], backend: ChatBackend, output: Path,
                 cache_path: Path | None, retries: int = 2, progress: bool = True,
                 on_line: Callable[[str], None] | None = None) -> tuple[Any, GenerationSession]:
    """Run one generation pipeline (``pipeline(session, output)``, a coroutine) to its end with a fresh session,
    closing the backend after; (its result, the session: its failed requests). A run that generated no rows is an
    error naming where the items were lost, never a silent success."""
    session = GenerationSession(backend, cache_path, retries=retries, progress=progress, on_line=on_line)

    async def main():
        try:
            return await pipeline(session, output)
        finally:
            await session.aclose()

    result = asyncio.run(main())
    if result is not None and len(result) == 0:
        raise PragmeterError(f"no rows generated ({session.why_empty()}); see the stage counts above")
    return result, session
