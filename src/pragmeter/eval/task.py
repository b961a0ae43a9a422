"""The task interface: dataset + prompt template(s) + answer parser + metrics, declared in one module each.

A task module in ``pragmeter.tasks`` lists its classes in ``TASKS``; the registry finds them. The runner asks a
task for its items and the request of each item in each run (:meth:`Task.request`: the chat messages, and the
structured input they were written from, :mod:`pragmeter.llm.request`, which a model that reads items instead of
prose answers), parses each answer, then hands the samples of one run to ``score`` (which fills each sample's
per-item ``scores`` and returns the corpus metrics).

Multiple-choice tasks may also offer ``mode=logprob`` (a task argument): the model is asked for one token with
its most likely alternatives, and each option is scored by its log-probability (:mod:`pragmeter.llm.choice`),
so no answer is unparseable. ``choices(item)`` gives the options' answer texts for that mode.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, ClassVar

from pragmeter.errors import PragmeterError
from pragmeter.llm.client import CachedClient
from pragmeter.llm.request import Input, Request
from pragmeter.metrics.intervals import mean_sd
from pragmeter.text import text_hash
from pragmeter.llm import choice


@cache
def load_template(name: str) -> str:
    """A prompt template shipped in ``pragmeter/tasks/prompts`` (sources cited in its README)."""
    return resources.files("pragmeter.tasks").joinpath("prompts", name).read_text(encoding="utf-8").rstrip("\n")


JUDGE_MAX_TOKENS = 512  # judges analyse before scoring


@dataclass
class Sample:
    """One answered prompt: what was asked, what came back, how it parsed and scored."""

    task: str
    run: int
    item_id: str
    messages: list[dict]
    response: str | None
    parsed: Any  # None = invalid answer (unparseable, empty, or the request failed)
    gold: Any
    error: str | None = None
    cached: bool = False
    fields: dict = field(default_factory=dict)  # task-specific extras (text, source…)
    scores: dict = field(default_factory=dict)  # per-item metric values
    option_logprobs: dict | None = None  # mode=logprob: log P(answer begins option) per option


    @property
    def valid(self) -> bool:
        return self.parsed is not None

    def record(self) -> dict:
        extra = {}
        if self.option_logprobs is not None:  # -inf (option not among the alternatives) is written as null
            extra["option_logprobs"] = {k: None if v == -math.inf else v for k, v in self.option_logprobs.items()}
        return {"task": self.task, "run": self.run, "item_id": self.item_id, **self.fields,
                "prompt": self.messages, "response": self.response, "parsed": self.parsed, "gold": self.gold,
                "valid": self.valid, "error": self.error, "cached": self.cached, **extra, **self.scores}


@dataclass
class ScoreContext:
    """What scoring may need beyond the samples: a judge model (cached like the model under test)."""

    judge: CachedClient | None = None
    progress: bool = True
    extra: dict = field(default_factory=dict)


class Task(ABC):
    name: ClassVar[str]
    version: ClassVar[str]
    description: ClassVar[str]
    citation: ClassVar[str] = ""
    published: ClassVar[tuple[str, ...]] = ()  # published human and model figures, each naming its source
    runs: ClassVar[int] = 1
    max_tokens: ClassVar[int | None] = None  # default when the model arguments give none
    arguments: ClassVar[dict[str, str]] = {}  # accepted --task-arg keys -> default (as text)
    uses_judge: ClassVar[bool] = False  # scored with the judge model when one is given
    # Answer modes; a task with "logprob" lists "mode" in its arguments and implements choices().
    MODES: ClassVar[tuple[str, ...]] = ("generate", "logprob")

    def __init__(self, args: dict[str, str] | None = None, data_root: str | os.PathLike | None = None):
        args = dict(args or {})
        unknown = set(args) - set(self.arguments)
        if unknown:
            known = ", ".join(sorted(self.arguments)) or "none"
            raise PragmeterError(f"task {self.name}: unknown argument(s) {', '.join(sorted(unknown))} (known: {known})")
        self.args = {**self.arguments, **args}
        if self.mode not in self.MODES:
            raise PragmeterError(f"task {self.name}: {self.name}.mode={self.mode!r} is not one of "
                                 f"{', '.join(self.MODES)}")
        if self.mode == "logprob":
            self.max_tokens = 1  # only the first token's alternatives are read
        self.data_root = data_root
        self._items: list | None = None
        self.check_arguments(set(args))

    def check_arguments(self, given: set[str]) -> None:
        """Refuse bad task arguments before any work: a default that is a whole number takes whole numbers >= 0,
        a yes/no default takes yes/no (true/false, 1/0), ``path`` and ``*_path`` name an existing file. Tasks add their own."""
        for key in sorted(given):
            value, default = self.args[key], self.arguments[key]
            where = f"task {self.name}: argument {key}={value!r}"
            if default.isdigit() and not value.strip().isdigit():
                raise PragmeterError(f"{where} must be a whole number >= 0 (default {default})")
            if default in ("yes", "no") and value.lower() not in ("yes", "no", "true", "false", "1", "0"):
                raise PragmeterError(f"{where} must be yes or no")
            if (key == "path" or key.endswith("_path")) and value and not os.path.isfile(os.path.expanduser(value)):
                folder = os.path.isdir(os.path.expanduser(value))
                raise PragmeterError(f"{where}: {'is a folder; expected a file' if folder else 'no such file'}")

    @property
    def mode(self) -> str:
        """"generate" (parse the generated answer) or "logprob" (score the options by log-probability)."""
        return self.args.get("mode", "generate")

    @property
    def top_logprobs(self) -> int | None:
        """Alternatives to ask for with each answer (None: a plain answer)."""
        return choice.TOP_LOGPROBS if self.mode == "logprob" else None

    # -- data ---------------------------------------------------------------------------------------
    @abstractmethod
    def load(self) -> list:
        """All evaluation items, in a fixed order."""

    def items(self) -> list:
        if self._items is None:
            self._items = self.load()
        return self._items

    @abstractmethod
    def checksums(self) -> dict[str, str]:
        """sha256 of every data file read (data-root relative path or user path -> sha256)."""

    def item_id(self, item) -> str:
        return item.id

    def fields(self, item) -> dict:
        """Extras written with each sample (e.g. the text and source, for later stratification)."""
        return {}

    # -- prompting ----------------------------------------------------------------------------------
    @abstractmethod
    def templates(self) -> dict[str, str]:
        """Every template text this configuration uses (their hashes go into the results)."""

    @abstractmethod
    def messages(self, item, run: int) -> list[dict]:
        """The chat messages for ``item`` in run ``run`` (runs differ e.g. in sampled in-context examples)."""

    def request_input(self, item) -> Input | None:
        """The structured input ``item``'s messages ask about (a text, a premise and hypothesis, a multiple-choice
        item), for a model that reads it instead of the prose; None: the messages are all there is."""
        return None

    def request(self, item, run: int) -> Request:
        """What the model is asked about ``item`` in run ``run``: its messages, token budget, first-token
        alternatives in logprob mode, and its structured input."""
        return Request(self.messages(item, run), self.max_tokens, top_logprobs=self.top_logprobs,
                       input=self.request_input(item))

    @abstractmethod
    def parse(self, response: str | None, item) -> Any:
        """The parsed answer to ``item``, or None when it cannot be parsed (counted as invalid)."""

    def choices(self, item) -> dict[str, str]:
        """mode=logprob: option (the parsed answer it stands for) -> the answer text the model should begin."""
        raise NotImplementedError(f"task {self.name} has no logprob mode")

    def read_answer(self, text: str | None, alternatives, item) -> tuple[Any, dict | None]:
        """(parsed answer or None, per-option log-probabilities in logprob mode else None)."""
        if self.mode != "logprob":
            return self.parse(text, item), None
        scores = choice.option_logprobs(alternatives or (), self.choices(item))
        return choice.best_option(scores), scores

    @abstractmethod
    def gold(self, item) -> Any:
        ...

    @abstractmethod
    def reference_answer(self, item) -> str:
        """The answer text a perfect model would give (used to check the parser and metrics end to end)."""

    # -- scoring ------------------------------------------------------------------------------------
    @abstractmethod
    async def score(self, samples: list[Sample], context: ScoreContext) -> dict:
        """Corpus metrics of one run; also stores per-item values in ``sample.scores``."""

    @abstractmethod
    def metric_signatures(self) -> dict[str, str]:
        ...

    def headline(self) -> str:
        """Key of the main metric in the results."""
        return "accuracy"

    def combine_runs(self, per_run: list[dict], samples: list[Sample]) -> dict:
        """Metrics over several runs: mean ± SD of every top-level number (tasks may add more)."""
        numbers = [k for k, v in per_run[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        return {key: mean_sd([run[key] for run in per_run]) for key in numbers}

    def signature(self, model: str) -> str:
        """One line that pins the number: task, version, arguments, prompt and data hashes, model settings."""
        prompts = text_hash("\n\x00".join(self.templates()[k] for k in sorted(self.templates())))[:12]
        data = text_hash("".join(v for _, v in sorted(self.checksums().items())))[:12]
        args = ",".join(f"{k}={v}" for k, v in sorted(self.args.items()) if v != "")
        return f"{self.name}:v{self.version}|{args or 'default'}|prompt={prompts}|data={data}|runs={self.runs}|{model}"
