"""Evaluators for classifiers and the interpreter, behind the one evaluator interface
(:mod:`pragmeter.metrics.evaluator`): build one with its data, call it with a model, get flat prefixed figures
(``val_accuracy``, ``grice_dev_accuracy``), read ``primary_metric`` for the key selection compares; per-item answers
and reports come with :meth:`~pragmeter.metrics.evaluator.Evaluator.evaluate`'s details.

- :class:`ClassificationEvaluator`: labelled examples (single texts or premise/hypothesis pairs) and any classifier
  pragmeter loads (``probabilities`` and ``decide``): accuracy, macro-F1 and each label's F1. Training selects on
  it, shipping compares ranks with it.
- :class:`ReadingChoiceEvaluator`: choice items (a premise, its readings, the meant one) and an interpreter: the
  share of items whose highest-scoring reading (:meth:`Interpreter.scores_many`) is the meant one, with its
  interval. The GRICE and Circa development splits and DRInQ are read so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pragmeter.errors import InvalidParameter
from pragmeter.metrics.classification import classification_report
from pragmeter.metrics.evaluator import RESAMPLES, Evaluation, Evaluator, interval_metrics
from pragmeter.metrics.intervals import BOOTSTRAP_SIGNATURE

SELECT_ON = ("accuracy", "macro_f1")


class ClassificationEvaluator(Evaluator):
    """Accuracy, macro-F1 and per-label F1 (``f1_<label>``) of a classifier's decisions on labelled examples
    (:class:`pragmeter.classify.examples.Examples`); ``select_on`` is the primary metric. Details: the harness's
    classification report, the predictions and the class probabilities (rows in input order)."""

    reported = ("macro_f1", "n")

    def __init__(self, examples, name: str = "val", select_on: str = "accuracy", batch_size: int = 128,
                 progress: bool = False):
        if select_on not in SELECT_ON:
            raise InvalidParameter("select_on", select_on, choices=SELECT_ON)
        self.examples, self.name, self.metric = examples, name, select_on
        self.batch_size, self.progress = batch_size, progress
        if select_on != "accuracy":
            self.reported = ("accuracy", "n")

    def evaluate(self, classifier) -> Evaluation:
        examples = self.examples
        probabilities = classifier.probabilities(examples.texts, examples.pairs, self.batch_size, self.progress)
        predictions = classifier.decide(probabilities)
        report = classification_report(examples.labels, predictions, classifier.labels)
        figures = {"accuracy": report["accuracy"], "macro_f1": report["macro_f1"], "n": report["n"],
                   **{f"f1_{label}": values["f1"] for label, values in report["precision_recall_f1"].items()}}
        return Evaluation(self.prefixed(figures),
                          {"report": report, "predictions": predictions, "probabilities": probabilities})


class ReadingChoiceEvaluator(Evaluator):
    """Choice items for an interpreter: each premise's readings scored as what was meant, the highest chosen (the
    first among equal scores, as ``choose``), accuracy against ``golds`` (the index of the meant reading; -1: none of
    them) with its bootstrap interval. ``also`` names further answer keys of the same items (``NAME_accuracy`` each,
    from the same scores). Details: per item, the chosen index and the scores."""

    metric = "accuracy"

    def __init__(self, premises: Sequence[str], readings: Sequence[Sequence[str]], golds: Sequence[int],
                 name: str = "choice", seed: int = 0, batch_size: int = 64, progress: bool = False,
                 also: dict[str, Sequence[int]] | None = None):
        self.also = {key: list(values) for key, values in (also or {}).items()}
        for key, values in {"golds": golds, "readings": readings, **self.also}.items():
            if len(values) != len(premises):
                raise InvalidParameter(key, len(values), f"{name}: give one per premise ({len(premises)} premises)")
        self.premises, self.readings, self.golds = list(premises), [list(r) for r in readings], list(golds)
        self.name, self.seed, self.batch_size, self.progress = name, seed, batch_size, progress
        self.reported = tuple(f"{key}_accuracy" for key in self.also)

    def evaluate(self, interpreter) -> Evaluation:
        scores = interpreter.scores_many(self.premises, self.readings, self.batch_size, self.progress)
        chosen = [int(np.argmax(row)) for row in scores]
        figures = interval_metrics("accuracy", [c == g for c, g in zip(chosen, self.golds)], self.seed)
        for key, golds in self.also.items():
            figures.update(interval_metrics(f"{key}_accuracy", [c == g for c, g in zip(chosen, golds)], self.seed))
        return Evaluation(self.prefixed(figures),
                          {"per_item": [{"chosen": c, "meant": g, "scores": s}
                                        for c, g, s in zip(chosen, self.golds, scores)],
                           "bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)})
