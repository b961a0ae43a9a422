"""DRInQ without an API: the interpreter (an INLI classifier) used zero-shot as a multiple-choice answerer.

Premise = the item's context followed by the question in quotes (the interpreter's premise of an utterance in
context), hypothesis = each option; the chosen option is the interpreter's most likely meant reading, P(implied) +
P(explicit) (P(entailed) for a 3-way model). Accuracy against the human consensus and against ``implied_comment``,
each with the harness's item-level 95% percentile bootstrap CI.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from pragmeter.classify.interpreter import PREMISE_TEMPLATE, Interpreter
from pragmeter.classify.interpreter import premise as interpreter_premise
from pragmeter.datasets.drinq import DrinqItem
from pragmeter.metrics.classification import correct
from pragmeter.metrics.intervals import BOOTSTRAP_SIGNATURE, bootstrap_ci

BOOTSTRAP_RESAMPLES = 2000


def premise(item: DrinqItem) -> str:
    return interpreter_premise(item.context, item.question)


def answer(interpreter: Interpreter, items: list[DrinqItem], batch_size: int = 64,
           progress: bool = False) -> list[dict]:
    """Per item: the chosen letter and each option's score as the meant reading (:meth:`Interpreter.scores_many`)."""
    ranked = interpreter.scores_many([premise(item) for item in items],
                                   [[text for _, text in item.options] for item in items], batch_size, progress)
    rows = []
    for item, scores in zip(items, ranked):
        letters = [letter for letter, _ in item.options]
        rows.append({"item_id": item.id, "prediction": letters[int(np.argmax(scores))], "consensus": item.consensus,
                     "implied_letter": item.implied_letter,
                     **{f"p_entailed_{letter}": float(s) for letter, s in zip(letters, scores)}})
    return rows


def score(rows: list[dict], seed: int = 0) -> dict:
    consensus = [correct(r["consensus"], r["prediction"]) for r in rows]
    implied = [correct(r["implied_letter"], r["prediction"]) for r in rows]
    metric = lambda values: {"accuracy": float(np.mean(values)) if values else float("nan"),  # noqa: E731
                             "ci95": list(bootstrap_ci(values, BOOTSTRAP_RESAMPLES, seed))}
    return {"consensus": metric(consensus), "implied_comment": metric(implied), "n": len(rows),
            "method": "argmax over options of P(implied)+P(explicit) (P(entailed) for 3-way), premise = "
                      + PREMISE_TEMPLATE,
            "ci_signature": BOOTSTRAP_SIGNATURE.format(n=BOOTSTRAP_RESAMPLES, seed=seed)}


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
    rows = answer(interpreter, items, batch_size, progress)
    return score(rows, seed), rows


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
