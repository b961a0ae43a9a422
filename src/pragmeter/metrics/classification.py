"""Metric functions. Per-item (sentence-level) values and corpus values come from the same code: corpus
accuracy is the mean of the per-item correctness stored with each sample, and precision/recall/F1 come from
the confusion matrix of the same (gold, prediction) pairs. Invalid answers (None) are wrong for accuracy and
are a separate "invalid" column of the confusion matrix: they lower the recall of their gold class and the
precision of no class.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

INVALID = "invalid"
CLASSIFICATION_SIGNATURE = "classification|invalid=wrong|confusion=rows-gold,cols-pred+invalid|f1=per-class,macro"


def correct(gold: Hashable, prediction: Hashable | None) -> float:
    """Sentence-level accuracy: 1.0 when the (valid) prediction equals gold."""
    return float(prediction is not None and prediction == gold)


def accuracy(golds: Sequence, predictions: Sequence) -> float:
    values = [correct(g, p) for g, p in zip(golds, predictions, strict=True)]
    return float(np.mean(values)) if values else float("nan")


def confusion_matrix(golds: Sequence, predictions: Sequence, labels: Sequence) -> np.ndarray:
    """Counts[gold label, predicted label], with a last column for invalid predictions."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels) + 1), dtype=np.int64)
    for gold, prediction in zip(golds, predictions, strict=True):
        matrix[index[gold], index[prediction] if prediction is not None else len(labels)] += 1
    return matrix


def _ratio(numerator: float, denominator: float) -> float:
    return float(numerator / denominator) if denominator else 0.0


def precision_recall_f1(matrix: np.ndarray, labels: Sequence) -> dict[str, dict[str, float]]:
    """Per class: precision = TP / predicted as the class, recall = TP / gold in the class (rows are gold)."""
    report = {}
    for i, label in enumerate(labels):
        tp = matrix[i, i]
        precision = _ratio(tp, matrix[:, i].sum())
        recall = _ratio(tp, matrix[i, :].sum())
        f1 = _ratio(2 * precision * recall, precision + recall)
        report[str(label)] = {"precision": precision, "recall": recall, "f1": f1, "support": int(matrix[i, :].sum())}
    return report


def macro_f1(matrix: np.ndarray, labels: Sequence, per_class: dict[str, dict[str, float]]) -> float:
    """Mean F1 over the classes that occur as gold or prediction (a class absent from both, e.g. under
    --limit, has no defined F1 and is left out, as scikit-learn does when labels are not forced)."""
    present = [str(label) for i, label in enumerate(labels) if matrix[i, :].sum() or matrix[:, i].sum()]
    return float(np.mean([per_class[label]["f1"] for label in present])) if present else float("nan")


def classification_report(golds: Sequence, predictions: Sequence, labels: Sequence) -> dict:
    """Accuracy, per-label accuracy (= recall), confusion matrix, per-class P/R/F1, macro-F1, invalid count."""
    matrix = confusion_matrix(golds, predictions, labels)
    per_class = precision_recall_f1(matrix, labels)
    return {
        "accuracy": accuracy(golds, predictions),
        "accuracy_per_label": {label: values["recall"] for label, values in per_class.items()},
        "precision_recall_f1": per_class,
        "macro_f1": macro_f1(matrix, labels, per_class),
        "confusion": {"labels": [str(x) for x in labels], "columns": [*map(str, labels), INVALID],
                      "counts": matrix.tolist()},
        "n": len(golds),
        "invalid": sum(p is None for p in predictions),
    }


def accuracy_by_group(golds: Sequence, predictions: Sequence, groups: Sequence) -> dict[str, dict]:
    by_group: dict[str, list[float]] = {}
    for gold, prediction, group in zip(golds, predictions, groups, strict=True):
        by_group.setdefault(str(group), []).append(correct(gold, prediction))
    return {g: {"accuracy": float(np.mean(v)), "n": len(v)} for g, v in sorted(by_group.items())}
