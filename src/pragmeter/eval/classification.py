"""Shared shape of label-classification tasks (INLI, ISHate, yes/no detection): a label parser, gold labels,
and the classification report; per-item correctness is stored with each sample. In ``mode=logprob`` the options
are the labels' answer words (or ``letters``, when two words begin alike) scored by log-probability."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from typing import Any, ClassVar

from pragmeter.metrics.classification import CLASSIFICATION_SIGNATURE, accuracy_by_group, classification_report, correct
from pragmeter.llm.parsing import LabelParser
from pragmeter.llm.request import PairInput, Request, TextInput
from pragmeter.eval.task import Sample, ScoreContext, Task


class ClassificationTask(Task):
    labels: ClassVar[tuple[str, ...]]  # gold label names, in report order
    answer_words: ClassVar[dict[str, str]]  # answer word -> label
    group_field: ClassVar[str | None] = None  # a sample field to break accuracy down by
    letters: ClassVar[dict[str, str] | None] = None  # label -> letter answered in logprob mode, when needed

    @cached_property
    def parser(self) -> LabelParser:
        return LabelParser(self.answer_words)

    def parse(self, response: str | None, item) -> Any:
        return self.parser(response)

    def reference_answer(self, item) -> str:
        if self.mode == "logprob":
            return self.choices(item)[self.gold(item)]
        return next(word for word, label in self.answer_words.items() if label == self.gold(item))

    def label_answers(self) -> dict[str, str]:
        """label -> the answer text parsed as it (the first of its answer words)."""
        return {label: next(w for w, l in self.answer_words.items() if l == label) for label in self.labels}

    def request(self, item, run: int) -> Request:
        """The task's request, its text or pair input carrying :meth:`label_answers`: a local classifier answers a
        label in the text the task parses as it, whatever words its folder was trained with."""
        request = super().request(item, run)
        if isinstance(request.input, (TextInput, PairInput)) and not request.input.answers:
            request = replace(request, input=replace(request.input, answers=self.label_answers()))
        return request

    def choices(self, item) -> dict[str, str]:
        if self.letters:
            return dict(self.letters)
        return self.label_answers()

    def extra_metrics(self, samples: list[Sample]) -> dict:
        return {}

    async def score(self, samples: list[Sample], context: ScoreContext) -> dict:
        golds = [s.gold for s in samples]
        predictions = [s.parsed for s in samples]
        for sample in samples:
            sample.scores["correct"] = correct(sample.gold, sample.parsed)
        report = classification_report(golds, predictions, self.labels)
        if self.group_field:
            report[f"accuracy_by_{self.group_field}"] = accuracy_by_group(
                golds, predictions, [s.fields[self.group_field] for s in samples])
        report.update(self.extra_metrics(samples))
        return report

    def metric_signatures(self) -> dict[str, str]:
        return {"classification": f"{CLASSIFICATION_SIGNATURE}|labels={','.join(self.labels)}"}
