"""The evaluator interface every model check in pragmeter shares, with sentence-transformers' evaluator habits:
build one with its data, call it with a model, get a flat ``{name: float}`` dict whose keys carry the evaluator's
name (``grice_dev_accuracy``), and read ``primary_metric`` for the key that model selection compares. A figure that
is a mean over items carries a seeded percentile-bootstrap 95% interval and its n as keys of their own beside it
(``…_ci_low``, ``…_ci_high``, ``…_n``). What is not one number (per item, per group, the bootstrap's signature)
comes with :meth:`Evaluator.evaluate`, for tables and results files.

ImpScore's checks are in :mod:`pragmeter.impscore.evaluators`, the classifiers' and the interpreter's in
:mod:`pragmeter.classify.evaluators`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pragmeter.metrics.intervals import bootstrap_ci

RESAMPLES = 2000
CI_LOW, CI_HIGH, N = "_ci_low", "_ci_high", "_n"  # the suffixes of a figure's interval and count keys


def with_interval(values: Sequence[float], seed: int = 0, resamples: int = RESAMPLES) -> dict:
    """Mean of per-item values with its bootstrap 95% interval and n."""
    low, high = bootstrap_ci(values, resamples, seed)
    return {"value": float(np.mean(values)) if len(values) else float("nan"), "ci95": [low, high], "n": len(values)}


def interval_metrics(metric: str, values: Sequence[float], seed: int = 0) -> dict[str, float]:
    """``metric`` (the mean of per-item ``values``) with its bootstrap interval and n, as flat keys."""
    figure = with_interval(values, seed)
    return {metric: figure["value"], metric + CI_LOW: figure["ci95"][0], metric + CI_HIGH: figure["ci95"][1],
            metric + N: float(figure["n"])}


@dataclass(frozen=True)
class Evaluation:
    """One evaluator's run: ``metrics`` (what ``__call__`` returns: flat floats, keys prefixed by the evaluator's
    name) and ``details`` (per item, group, source or category, the bootstrap's signature: not figures)."""

    metrics: dict[str, float]
    details: dict = field(default_factory=dict)


class Evaluator(ABC):
    """One check. ``__call__(model)`` returns flat ``{name: float}`` figures (sentence-transformers' evaluator
    interface), ``primary_metric`` names the key model selection reads (higher is better); :meth:`evaluate` returns
    them with their details."""

    name: str
    metric: str  # the headline figure, before the evaluator's name is put in front of it
    reported: tuple[str, ...] = ()  # further headline figures printed beside it
    greater_is_better = True

    @property
    def primary_metric(self) -> str:
        return self.key(self.metric)

    def key(self, metric: str) -> str:
        """The result key of one of this evaluator's figures (its name in front, as sentence-transformers'
        ``prefix_name_to_metrics``)."""
        return f"{self.name}_{metric}"

    def prefixed(self, metrics: dict) -> dict[str, float]:
        """``metrics`` as this evaluator's result: prefixed keys, float values (figures a check could not compute,
        None, are left out)."""
        return {self.key(k): float(v) for k, v in metrics.items() if v is not None}

    @abstractmethod
    def evaluate(self, model) -> Evaluation:
        ...

    def __call__(self, model) -> dict[str, float]:
        return self.evaluate(model).metrics

    def figure(self, metrics: dict[str, float], metric: str):
        """``{"value", "ci95", "n"}`` for a figure with an interval, else the plain value (a count as an int)."""
        key = self.key(metric)
        if key + CI_LOW in metrics:
            return {"value": metrics[key], "ci95": [metrics[key + CI_LOW], metrics[key + CI_HIGH]],
                    "n": int(metrics[key + N])}
        value = metrics[key]
        return int(value) if metric.startswith("n_") else value

    def summary(self, evaluation: Evaluation) -> dict:
        """The headline figures of a run, as printed (primary first; per-category means where the check has
        categories)."""
        metrics = evaluation.metrics
        out = {key: self.figure(metrics, key) for key in (self.metric, *self.reported) if self.key(key) in metrics}
        for category, row in evaluation.details.get("per_category", {}).items():
            out.update({f"{category}: {key}": row[key] for key in (self.metric, *self.reported) if key in row})
        return out
