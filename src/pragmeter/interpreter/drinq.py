"""DRInQ without an API: the interpreter (an INLI classifier) used zero-shot as a multiple-choice answerer.

Premise = the item's context followed by the question in quotes (the interpreter's premise of an utterance in
context), hypothesis = each option; the chosen option is the interpreter's most likely meant reading, P(implied) +
P(explicit) (P(entailed) for a 3-way model). Accuracy against the human consensus and against ``implied_comment``,
each with the harness's item-level 95% percentile bootstrap CI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from pragmeter.classify.evaluators import ReadingChoiceEvaluator
from pragmeter.datasets.drinq import DrinqItem
from pragmeter.interpreter.model import PREMISE_TEMPLATE, Interpreter
from pragmeter.interpreter.model import premise as interpreter_premise


def premise(item: DrinqItem) -> str:
    return interpreter_premise(item.context, item.question)


def evaluator(items: list[DrinqItem], seed: int = 0, batch_size: int = 64,
              progress: bool = False) -> ReadingChoiceEvaluator:
    """DRInQ as choice items (:class:`ReadingChoiceEvaluator` ``drinq``): accuracy against the human consensus
    (primary) and against the implied comment's option (``drinq_implied_comment_accuracy``)."""
    def index(item: DrinqItem, letter: str | None) -> int:
        letters = [option for option, _ in item.options]
        return letters.index(letter) if letter in letters else -1

    return ReadingChoiceEvaluator([premise(item) for item in items],
                                  [[text for _, text in item.options] for item in items],
                                  [index(item, item.consensus) for item in items], "drinq", seed, batch_size,
                                  progress, also={"implied_comment": [index(i, i.implied_letter) for i in items]})


def answer(items: list[DrinqItem], evaluation) -> list[dict]:
    """Per item of a DRInQ evaluation: the chosen letter and each option's score as the meant reading."""
    rows = []
    for item, row in zip(items, evaluation.details["per_item"]):
        letters = [letter for letter, _ in item.options]
        rows.append({"item_id": item.id, "prediction": letters[row["chosen"]], "consensus": item.consensus,
                     "implied_letter": item.implied_letter,
                     **{f"p_entailed_{letter}": float(s) for letter, s in zip(letters, row["scores"])}})
    return rows


def score(drinq: ReadingChoiceEvaluator, evaluation) -> dict:
    """The results file's figures of a DRInQ evaluation: each accuracy with its 95% CI, n and the method."""
    metric = lambda key: {"accuracy": drinq.figure(evaluation.metrics, key)["value"],  # noqa: E731
                          "ci95": drinq.figure(evaluation.metrics, key)["ci95"]}
    return {"consensus": metric("accuracy"), "implied_comment": metric("implied_comment_accuracy"),
            "n": len(drinq.premises),
            "method": "argmax over options of P(implied)+P(explicit) (P(entailed) for 3-way), premise = "
                      + PREMISE_TEMPLATE,
            "ci_signature": evaluation.details["bootstrap"]}


def accuracy_text(metrics: dict) -> str:
    """:func:`score`'s accuracies with their 95% CIs, one line each (against the consensus, the implied comment)."""
    return "\n".join(f"accuracy vs {name}: {metrics[name]['accuracy']:.4f} (95% CI {metrics[name]['ci95'][0]:.4f}–"
                     f"{metrics[name]['ci95'][1]:.4f}), n={metrics['n']}" for name in ("consensus", "implied_comment"))


def evaluate_drinq(model: str | os.PathLike, root=None, path=None, limit: int | None = None,
                   device: str | None = None, batch_size: int = 64, seed: int = 0,
                   progress: bool = False) -> tuple[dict, list[dict]]:
    from pragmeter.datasets.drinq import load_drinq

    items = load_drinq(root, path=path)[:limit] if limit else load_drinq(root, path=path)  # a bad file fails fast
    interpreter = Interpreter.load(model, device=device)
    drinq = evaluator(items, seed, batch_size, progress)
    evaluation = drinq.evaluate(interpreter)
    return score(drinq, evaluation), answer(items, evaluation)


def write_drinq_outputs(metrics: dict, rows: list[dict], model: str | os.PathLike, path: str | os.PathLike | None,
                        limit: int | None, output: str | os.PathLike | None = None,
                        predictions: str | os.PathLike | None = None, overwrite: bool = False) -> None:
    """The results JSON (``output``: metrics, model, the data's checksums, the run record) and the per-item table
    (``predictions``) of :func:`evaluate_drinq`; ``path`` is the user's file, None for the release."""
    import sys
    from pathlib import Path

    import pandas as pd

    from pragmeter.data.root import dataset_checksums, sha256_of
    from pragmeter.datasets.drinq import FILES
    from pragmeter.io import write_table
    from pragmeter.provenance import write_results_json

    if output:
        checksums = {str(path): sha256_of(Path(path))} if path else dataset_checksums(list(FILES))
        write_results_json(output, {"task": "drinq-nli", "model": str(model), "limit": limit, "command": list(sys.argv),
                                    "dataset_checksums": checksums, **metrics})
    if predictions:
        write_table(pd.DataFrame(rows), predictions, overwrite=overwrite)


def drinq_nli(model: str | os.PathLike, root=None, path: str | os.PathLike | None = None, limit: int | None = None,
              device: str | None = None, batch_size: int = 64, seed: int = 0, output: str | os.PathLike | None = None,
              predictions: str | os.PathLike | None = None, overwrite: bool = False,
              progress: bool = False) -> Iterator[str]:
    """``pragmeter classifier drinq-nli``: ``output`` and ``predictions`` refused unless ``overwrite`` (before any
    work), then :func:`evaluate_drinq`; yields its accuracies (:func:`accuracy_text`), then writes the files
    (:func:`write_drinq_outputs`)."""
    from pragmeter.io import check_outputs

    check_outputs(filter(None, (output, predictions)), overwrite)
    metrics, rows = evaluate_drinq(model, root, path, limit, device, batch_size, seed, progress=progress)
    yield accuracy_text(metrics)
    write_drinq_outputs(metrics, rows, model, path, limit, output, predictions, overwrite)
