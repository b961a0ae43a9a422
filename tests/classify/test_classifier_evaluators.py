"""The classifiers' and the interpreter's evaluators: flat figures under the evaluator's name, the primary metric
selection reads, the same answers as the model's own methods."""

from __future__ import annotations

import numpy as np
import pytest

from pragmeter.classify.evaluators import ClassificationEvaluator, ReadingChoiceEvaluator
from pragmeter.classify.examples import Examples
from pragmeter.errors import InvalidParameter
from pragmeter.interpreter.model import Interpreter, premise
from pragmeter.testing.tiny_nli import tiny_nli_folder

EXCHANGES = [("Can you pass the salt?", "My hands are full."), ("Is it cold outside?", "Take a coat."),
             ("Did you like the film?", "I left after ten minutes."), ("Are you coming?", "I am on my way.")]
PREMISES = [premise(context, utterance) for context, utterance in EXCHANGES]
READINGS = [["I cannot pass it.", "Here is the salt.", "I like salt."], ["It is cold.", "It is warm."],
            ["I did not like it.", "I liked it.", "The film was long."], ["Yes.", "No."]]


@pytest.fixture(scope="module")
def interpreter(tmp_path_factory):
    folder = tiny_nli_folder(tmp_path_factory.mktemp("tiny") / "nli", seed=3)
    return Interpreter.load(folder, backend="torch", precision="fp32", device="cpu", progress=False)


def test_a_choice_evaluator_chooses_as_choose_does(interpreter):
    golds = [0, 0, 0, 0]
    evaluator = ReadingChoiceEvaluator(PREMISES, READINGS, golds, "dev", also={"other": [1, 1, 1, 1]})
    evaluation = evaluator.evaluate(interpreter)
    chosen = [interpreter.choose(context, utterance, r) for (context, utterance), r in zip(EXCHANGES, READINGS)]
    assert [row["chosen"] for row in evaluation.details["per_item"]] == chosen
    metrics = evaluation.metrics
    assert evaluator.primary_metric == "dev_accuracy"
    assert metrics["dev_accuracy"] == pytest.approx(np.mean([c == 0 for c in chosen]))
    assert metrics["dev_other_accuracy"] == pytest.approx(np.mean([c == 1 for c in chosen]))
    assert metrics["dev_accuracy_n"] == 4 and metrics["dev_accuracy_ci_low"] <= metrics["dev_accuracy"]
    assert all(isinstance(v, float) for v in metrics.values())
    with pytest.raises(InvalidParameter, match="one per premise"):
        ReadingChoiceEvaluator(PREMISES, READINGS, [0, 0], "dev")


def test_a_classification_evaluator_reports_the_classifiers_own_decisions(interpreter):
    examples = Examples(PREMISES, ["entailed", "neutral", "contradiction", "entailed"],
                        ["The speaker cannot.", "It rains.", "The film was good.", "The speaker is coming."])
    evaluator = ClassificationEvaluator(examples, "val", "macro_f1")
    evaluation = evaluator.evaluate(interpreter.classifier)
    decided = interpreter.classifier.decide(interpreter.classifier.probabilities(examples.texts, examples.pairs))
    assert evaluation.details["predictions"] == decided
    assert evaluator.primary_metric == "val_macro_f1"
    assert evaluation.metrics["val_accuracy"] == pytest.approx(np.mean([d == g for d, g in zip(decided,
                                                                                                examples.labels)]))
    assert {f"val_f1_{label}" for label in interpreter.labels} <= set(evaluation.metrics)
    with pytest.raises(InvalidParameter, match="select_on"):
        ClassificationEvaluator(examples, "val", "loss")
