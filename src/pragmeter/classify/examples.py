"""Labelled examples for a classifier, and what a recipe hands to training."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Examples:
    """Parallel lists; ``pairs`` is None for single-text classification (else the hypothesis of each text)."""

    texts: list[str]
    labels: list[str]
    pairs: list[str] | None = None
    groups: list[str] | None = None  # e.g. the source dataset, for accuracy per group
    soft: list[tuple[float, ...]] | None = None  # a teacher's probabilities per example (classify/distillation.py)

    def __post_init__(self):
        for name in ("pairs", "groups", "soft"):
            values = getattr(self, name)
            if values is not None and len(values) != len(self.texts):
                raise ValueError(f"{name} has {len(values)} entries for {len(self.texts)} texts")
        if len(self.labels) != len(self.texts):
            raise ValueError(f"labels has {len(self.labels)} entries for {len(self.texts)} texts")

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, indices: Sequence[int]) -> "Examples":
        pick = lambda values: None if values is None else [values[i] for i in indices]  # noqa: E731
        return Examples([self.texts[i] for i in indices], [self.labels[i] for i in indices], pick(self.pairs),
                        pick(self.groups), pick(self.soft))

    def head(self, n: int | None) -> "Examples":
        """The first ``n`` examples (all when n is None), for smoke runs on small slices."""
        return self if n is None else self.subset(range(min(n, len(self))))

    def extend(self, other: "Examples") -> "Examples":
        if (self.soft is None) != (other.soft is None):
            raise ValueError("only one of the two has a teacher's probabilities: label both or neither")
        join = lambda a, b: None if a is None else a + b  # noqa: E731
        return Examples(self.texts + other.texts, self.labels + other.labels, join(self.pairs, other.pairs),
                        join(self.groups, other.groups), join(self.soft, other.soft))


@dataclass
class ChoiceExamples:
    """Choice items for training with a loss over their readings' scores (what ``Interpreter.choose`` decides on):
    parallel lists of premises, each premise's readings and the index of the meant one; optionally ``soft``, a
    teacher's probabilities for each item's readings (one row per reading, columns in the student's label order), the
    anchor of ``FineTuneConfig.choice_anchor``."""

    premises: list[str]
    readings: list[tuple[str, ...]]
    golds: list[int]
    groups: list[str] | None = None
    soft: list[tuple[tuple[float, ...], ...]] | None = None

    def __post_init__(self):
        for name in ("readings", "golds", "groups", "soft"):
            values = getattr(self, name)
            if values is not None and len(values) != len(self.premises):
                raise ValueError(f"{name} has {len(values)} entries for {len(self.premises)} premises")
        for index, (options, gold) in enumerate(zip(self.readings, self.golds)):
            if len(options) < 2 or not 0 <= gold < len(options):
                raise ValueError(f"item {index}: {len(options)} readings with the meant one at {gold}")
            if self.soft is not None and len(self.soft[index]) != len(options):
                raise ValueError(f"item {index}: {len(self.soft[index])} rows of the teacher's probabilities for "
                                 f"{len(options)} readings")

    def __len__(self) -> int:
        return len(self.premises)

    @property
    def pair_count(self) -> int:
        return sum(len(options) for options in self.readings)

    def subset(self, indices: Sequence[int]) -> "ChoiceExamples":
        pick = lambda values: None if values is None else [values[i] for i in indices]  # noqa: E731
        return ChoiceExamples(pick(self.premises), pick(self.readings), pick(self.golds), pick(self.groups),
                              pick(self.soft))

    def head(self, n: int | None) -> "ChoiceExamples":
        return self if n is None else self.subset(range(min(n, len(self))))

    def as_examples(self) -> Examples:
        """One row per item (readings joined by a unit separator, the meant index as label): for fingerprints."""
        return Examples(list(self.premises), [str(g) for g in self.golds], ["\x1f".join(r) for r in self.readings])

    def reading_pairs(self) -> Examples:
        """One pair per (item, reading), item after item (label ``meant`` or ``other``), with ``soft`` flattened
        alike: what a teacher labels, and what a run's digest records of the teacher's answers."""
        texts = [premise for premise, options in zip(self.premises, self.readings) for _ in options]
        pairs = [reading for options in self.readings for reading in options]
        labels = ["meant" if i == gold else "other" for options, gold in zip(self.readings, self.golds)
                  for i in range(len(options))]
        soft = None if self.soft is None else [row for rows in self.soft for row in rows]
        return Examples(texts, labels, pairs, soft=soft)


def run_fingerprint(settings: dict, *splits: Examples) -> str:
    """What a resumed run must share with the interrupted one: its settings and every example of ``splits``."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for examples in splits:
        for row in zip(examples.texts, examples.pairs or [""] * len(examples), examples.labels):
            digest.update("\x1f".join(row).encode("utf-8") + b"\x1e")
        if examples.soft is not None:  # a teacher's probabilities are data too (none: the digest stays as it was)
            digest.update(json.dumps([[round(float(v), 6) for v in row] for row in examples.soft]).encode())
    return digest.hexdigest()


@dataclass
class RecipeData:
    """A recipe's splits and how to read its model's output."""

    name: str
    labels: list[str]
    input_kind: str  # "pair" or "single"
    train: Examples
    val: Examples
    test: Examples
    arguments: dict = field(default_factory=dict)
    answer_words: dict[str, str] = field(default_factory=dict)  # label -> word the harness task parses
    data_files: dict[str, str] = field(default_factory=dict)  # data-root path -> sha256
    description: str = ""
    report_groups: dict[str, list[str]] = field(default_factory=dict)  # extra test accuracies over group sets
    paper: dict = field(default_factory=dict)  # the paper's figures for the same setting
    choice: ChoiceExamples | None = None  # trained with the loss over readings' scores beside ``train``
