"""Multiple-choice tasks that a chat model and a local interpreter answer alike.

Every item is a :class:`ChoiceItem`: the situation (``context``), what is said (``utterance``), the readings to
choose from (``options``, each under the key the answer names: a letter or a number) and the meant one (``answer``),
the same shape as a DRInQ item (context, question, options, consensus) that ``interpreter/drinq.py`` answers. A chat
model reads the task's prompt (its paper's where there is one) and answers with the key; a local interpreter reads the
structure instead: each request carries the item and the answer text that the task parses as each option
(:class:`pragmeter.llm.request.ChoiceInput`), so a backend can choose a reading and answer in the task's format
without parsing prompts (``choose(context, utterance, readings)`` → ``answers[key]``).

:class:`ChoiceTask` scores accuracy against the meant option (invalid answers are wrong), with a 95% bootstrap interval
over items (each item's correctness averaged over runs) and accuracy by each of ``group_fields``. Each sample logs the
item's ``text`` (what ``analyze stratify`` scores with ImpScore) and its ``extra`` fields.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from typing import Any, ClassVar

from pragmeter.datasets.items import ChoiceItem  # noqa: F401  (the item tasks are built of)
from pragmeter.eval.task import Sample, ScoreContext, Task
from pragmeter.llm.request import ChoiceInput
from pragmeter.metrics.classification import accuracy_by_group, correct
from pragmeter.metrics.intervals import BOOTSTRAP_SIGNATURE, bootstrap_ci, mean_sd

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0


def option_key(response: str | None, item: ChoiceItem) -> str | None:
    """The option a free-text answer names: the last "answer is (X)" or "Answer: X"; else a key the answer begins
    with, alone or marked as a key ("B", "(B)", "2)", "B. …"; never the article of "A sarcastic …"); else an answer
    that is exactly one option's reading (case and final punctuation ignored). Keys match as written (upper case)."""
    if not isinstance(response, str) or not response.strip():
        return None
    keys = "|".join(re.escape(key) for key in sorted(item.keys, key=len, reverse=True))
    stated = re.findall(rf"(?i:\banswer(?:\s+is)?)\s*:?\s*\(?({keys})\b\)?", response)
    if stated:
        return stated[-1]
    leading = re.match(rf"^[^\w(]*(?:\(({keys})\)|({keys})(?:[.):,\n]|\s*$))", response.strip())
    if leading:
        return leading.group(1) or leading.group(2)
    plain = lambda text: text.strip().rstrip(".!").strip().casefold()  # noqa: E731
    matches = [key for key, reading in item.options if plain(reading) == plain(response)]
    return matches[0] if len(matches) == 1 else None


class ChoiceTask(Task):
    """A task whose items are :class:`ChoiceItem`; subclasses build the items and the prompt."""

    group_fields: ClassVar[tuple[str, ...]] = ()  # ``extra`` fields to break accuracy down by

    @abstractmethod
    def build(self) -> list[ChoiceItem]:
        """All items, in a fixed order."""

    @abstractmethod
    def prompt(self, item: ChoiceItem, run: int) -> str:
        """The user message asking about ``item``."""

    def answer_text(self, key: str) -> str:
        """The answer that names option ``key`` (what a perfect model replies)."""
        return key

    def load(self) -> list[ChoiceItem]:
        return self.build()

    def messages(self, item: ChoiceItem, run: int) -> list[dict]:
        return [{"role": "user", "content": self.prompt(item, run)}]

    def request_input(self, item: ChoiceItem) -> ChoiceInput:
        return ChoiceInput(item, {key: self.answer_text(key) for key in item.keys})

    def parse(self, response: str | None, item: ChoiceItem) -> str | None:
        return option_key(response, item)

    def gold(self, item: ChoiceItem) -> str:
        return item.answer

    def reference_answer(self, item: ChoiceItem) -> str:
        return self.answer_text(item.answer)

    def choices(self, item: ChoiceItem) -> dict[str, str]:
        return {key: key for key in item.keys}

    def fields(self, item: ChoiceItem) -> dict:
        return {"text": item.text, **item.extra}

    async def score(self, samples: list[Sample], context: ScoreContext) -> dict:
        for sample in samples:
            sample.scores["correct"] = correct(sample.gold, sample.parsed)
        n = len(samples)
        values = [s.scores["correct"] for s in samples]
        metrics: dict[str, Any] = {"accuracy": sum(values) / n if n else float("nan"), "n": n,
                                   "invalid": sum(not s.valid for s in samples),
                                   "ci95": list(bootstrap_ci(values, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)) if n else []}
        for group in self.group_fields:
            metrics[f"accuracy_by_{group}"] = accuracy_by_group(
                [s.gold for s in samples], [s.parsed for s in samples], [s.fields[group] for s in samples])
        return metrics

    def combine_runs(self, per_run: list[dict], samples: list[Sample]) -> dict:
        by_item: dict[str, list[float]] = {}
        for sample in samples:
            by_item.setdefault(sample.item_id, []).append(sample.scores["correct"])
        item_means = [sum(v) / len(v) for v in by_item.values()]
        combined: dict[str, Any] = {key: mean_sd([run[key] for run in per_run]) for key in ("accuracy", "invalid")}
        combined["accuracy"]["ci95"] = list(bootstrap_ci(item_means, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED))
        combined["n"] = per_run[0]["n"]
        return combined

    def metric_signatures(self) -> dict[str, str]:
        runs = f"|runs={self.runs}:mean,sd(ddof=1)" if self.runs > 1 else ""
        return {"accuracy": f"accuracy|gold=meant option|invalid=wrong{runs}",
                "ci95": BOOTSTRAP_SIGNATURE.format(n=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED)
                + "|item value=mean over runs"}
