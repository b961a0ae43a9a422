"""Decision biases tuned on validation: they move the argmax towards a class the model under-predicts, never lower
the validation metric, stay 0 where the argmax is already best, and travel with the model folder."""

from __future__ import annotations

import numpy as np

from pragmeter.classify.model import decide
from pragmeter.classify.training import tune_decision_bias
from pragmeter.metrics.classification import classification_report

LABELS = ["common", "other", "rare"]


def under_predicted_rare_class(n: int = 600, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """Probabilities of a model that is right about the rare class's ranking but too shy to name it."""
    rng = np.random.default_rng(seed)
    golds = rng.choice(LABELS, size=n, p=[0.6, 0.3, 0.1]).tolist()
    logits = rng.normal(0, 1, size=(n, 3))
    for row, gold in enumerate(golds):
        logits[row, LABELS.index(gold)] += 2.0
    logits[:, 2] -= 2.5  # the rare class is almost never the argmax
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return probabilities, golds


def test_bias_finds_the_rare_class_and_raises_validation_macro_f1():
    probabilities, golds = under_predicted_rare_class()
    bias, before, after = tune_decision_bias(probabilities, golds, LABELS)
    assert bias["common"] == 0.0 and bias["rare"] > 1.0
    assert after > before + 0.05
    report = classification_report(golds, decide(probabilities, LABELS, bias), LABELS)
    assert report["macro_f1"] == after  # the returned figure is the metric of the returned bias
    plain = classification_report(golds, decide(probabilities, LABELS, {}), LABELS)
    assert plain["macro_f1"] == before and plain["precision_recall_f1"]["rare"]["f1"] < \
        report["precision_recall_f1"]["rare"]["f1"]
    # chosen on one sample, it carries to another of the same model (what validation -> test relies on)
    held_out, held_golds = under_predicted_rare_class(seed=1)
    assert classification_report(held_golds, decide(held_out, LABELS, bias), LABELS)["macro_f1"] > \
        classification_report(held_golds, decide(held_out, LABELS, {}), LABELS)["macro_f1"]


def test_no_bias_where_the_argmax_is_already_perfect():
    golds = ["common", "other", "rare"] * 20
    probabilities = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]] * 20)
    bias, before, after = tune_decision_bias(probabilities, golds, LABELS)
    assert before == after == 1.0 and set(bias.values()) == {0.0}
    assert decide(probabilities, LABELS, bias) == golds


def test_decide_without_bias_is_the_plain_argmax():
    probabilities, _ = under_predicted_rare_class(50)
    assert decide(probabilities, LABELS, {}) == [LABELS[i] for i in probabilities.argmax(axis=1)]
    assert decide(probabilities, LABELS, {"rare": 0.0}) == decide(probabilities, LABELS, {})
