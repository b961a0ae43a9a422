"""Choosing an interpreter's explicit weight: the weight w on P(explicit) in a reading's score, P(implied) +
w P(explicit) (:mod:`pragmeter.interpreter.model`, module notes), chosen on development choice splits and recorded in
the model folder.

:func:`weight_accuracies` measures each weight through the interpreter's own scoring (the evaluators call
``scores_many``, as ``choose`` does), the model's forward pass made once per split since w does not change the
probabilities. :func:`choose_weight` applies one of two rules, which differ only in which weights are admissible:

- ``each-split``: every split but the target keeps its accuracy at w = 1 less one standard error;
- ``mean``: the mean accuracy of the splits but the target keeps its value at w = 1 less that mean's standard error
  (the splits taken as independent: the root of the summed squared standard errors over their number), and no split
  loses more than :data:`COLLAPSE`. Near the ceiling one split's standard error is two or three items, so
  ``each-split`` admits a weight only where nothing else moves; ``mean`` trades a small loss on one split against
  the others and still refuses a weight that breaks one.

Under either, the admissible weight with the best target accuracy is chosen (ties: the larger), and it replaces 1
only where its gain on the target exceeds the target's standard error at w = 1.
:func:`record_weight` writes the chosen weight into the folder's config and the evidence into its metrics.json.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pragmeter.errors import PragmeterError

WEIGHTS = (1.0, 0.5, 0.25, 0.1, 0.0)  # the grid, the plain sum first
METRICS_KEY = "explicit_weight"  # metrics.json's entry of how the weight was chosen
COLLAPSE = 0.05  # under ``mean``, the most accuracy any one split may lose against w = 1
# rule -> what it admits and chooses (module notes), as the evidence recorded with a weight says it
RULES = {
    "each-split": "the admissible weight (every other split within one standard error of its accuracy at 1) with the "
                  "best target accuracy, if its gain exceeds the target's standard error",
    "mean": f"the admissible weight (the other splits' mean accuracy within its standard error of its value at 1, and "
            f"no split losing more than {COLLAPSE:g}) with the best target accuracy, if its gain exceeds the target's "
            f"standard error",
}


class _Remembered:
    """A classifier whose probabilities are computed once per list of pairs: the weight changes the scores, never the
    probabilities, so each weight is measured through the whole scoring path without another forward pass."""

    def __init__(self, classifier):
        self._classifier, self._seen = classifier, {}

    def __getattr__(self, name):
        return getattr(self._classifier, name)

    def probabilities(self, premises, hypotheses, batch_size: int = 64, progress: bool = False):
        key = (tuple(premises), tuple(hypotheses))
        if key not in self._seen:
            self._seen[key] = self._classifier.probabilities(premises, hypotheses, batch_size, progress)
        return self._seen[key].copy()


def weight_accuracies(interpreter, evaluators: Mapping[str, object], weights: Sequence[float] = WEIGHTS
                      ) -> dict[str, dict[str, float]]:
    """{weight (as text): {split: accuracy}} of ``interpreter`` scored with each of ``weights`` on each evaluator
    (name -> a ReadingChoiceEvaluator, whose metrics hold ``{name}_accuracy``). The interpreter must answer every pair
    once, as it does in fp32: one whose close calls are answered again in fp32 is refused, since each weight would
    settle other items."""
    from pragmeter.interpreter.model import Interpreter

    if interpreter.rechecks_close_calls:
        raise PragmeterError("measure explicit weights in fp32 (precision='fp32'): close calls answered again in fp32 "
                             "depend on the weight")
    remembered = _Remembered(interpreter.classifier)
    results = {}
    for weight in weights:
        reader = Interpreter(remembered, interpreter.name, weight)
        results[f"{float(weight):g}"] = {name: float(evaluator(reader)[f"{name}_accuracy"])
                                         for name, evaluator in evaluators.items()}
    return results


def choose_weight(accuracies: Mapping[str, Mapping[str, float]], sizes: Mapping[str, int], target: str,
                  rule: str = "each-split") -> dict:
    """The rule ``rule`` (module notes) over :func:`weight_accuracies`' results, ``sizes`` each split's items: returns
    ``{"weight", "rule", "admissible": [weights], "floors": {split: its lowest admissible accuracy}, "target",
    "target_gain", "target_standard_error"}``, with ``"mean_floor"`` and ``"means": {weight: mean}`` under ``mean``.
    The grid must hold w = 1 and the target split."""
    from pragmeter.metrics.intervals import proportion_standard_error as standard_error

    if rule not in RULES:
        raise PragmeterError(f"unknown weight rule {rule!r} (known: {', '.join(RULES)})")
    if "1" not in accuracies:
        raise PragmeterError("the weights measured must include 1, the plain sum the rule compares against")
    plain = accuracies["1"]
    if target not in plain:
        raise PragmeterError(f"the target split {target!r} was not measured (splits: {', '.join(plain)})")
    others = [name for name in plain if name != target]
    extra = {}
    if rule == "each-split":
        floors = {name: plain[name] - standard_error(plain[name], sizes[name]) for name in others}
        admissible = [weight for weight, row in accuracies.items()
                      if all(row[name] >= floor - 1e-12 for name, floor in floors.items())]
    else:
        floors = {name: plain[name] - COLLAPSE for name in others}
        means = {weight: sum(row[name] for name in others) / len(others) if others else 0.0
                 for weight, row in accuracies.items()}
        mean_error = (sum(standard_error(plain[name], sizes[name]) ** 2 for name in others) ** 0.5 / len(others)
                      if others else 0.0)
        mean_floor = means["1"] - mean_error
        admissible = [weight for weight, row in accuracies.items()
                      if means[weight] >= mean_floor - 1e-12
                      and all(row[name] >= floor - 1e-12 for name, floor in floors.items())]
        extra = {"mean_floor": mean_floor, "means": means}
    best = max(admissible, key=lambda weight: (accuracies[weight][target], float(weight)))
    error = standard_error(plain[target], sizes[target])
    gain = accuracies[best][target] - plain[target]
    return {"weight": float(best) if gain > error else 1.0, "rule": rule,
            "admissible": [float(w) for w in admissible], "floors": floors, **extra, "target": target,
            "target_gain": gain, "target_standard_error": error}


def record_weight(folder: str | os.PathLike, weight: float, evidence: dict) -> None:
    """Write ``weight`` as the interpreter folder's explicit weight (its config's ``pragmeter.explicit_weight``) and
    ``evidence`` (how it was chosen) into its metrics.json, each file replaced atomically; the folder must hold an
    interpreter with an explicit label. A shipped folder's card (README.md, written from its metrics) is written
    again, so it says the score the folder ranks readings by (its notes kept: ``release.add_card_note``)."""
    from pragmeter.classify.model import read_json_object, read_settings
    from pragmeter.interpreter.model import explicit_weight_of, meant_columns
    from pragmeter.io import write_json_atomic

    folder = Path(folder)
    path, config, settings = read_settings(folder)
    if not config.get("pragmeter"):
        raise PragmeterError(f"{path}: a plain NLI folder has no pragmeter settings to record a weight in; export it "
                             f"with `pragmeter interpret export` first")
    meant_columns(settings, folder.name)
    weight = explicit_weight_of(settings, folder.name, weight)
    config["pragmeter"]["explicit_weight"] = weight
    metrics_path = folder / "metrics.json"
    metrics = read_json_object(metrics_path) if metrics_path.is_file() else {}
    metrics[METRICS_KEY] = {"weight": weight, **evidence}
    card = None
    from pragmeter.interpreter.release import SHIPPED_METRICS, card_text, write_card

    if SHIPPED_METRICS <= metrics.keys():  # a shipped folder's card is written from its metrics: it says the weight
        card = card_text(folder, metrics)
    write_json_atomic(path, config)
    write_json_atomic(metrics_path, metrics)
    if card is not None:
        write_card(folder, card)
