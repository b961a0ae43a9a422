"""Close calls of a reduced precision answered again in fp32.

bf16 (OpenVINO on a CPU with bf16 instructions) is faster than fp32 but moves probabilities by a few hundredths,
enough to flip a pair whose two likeliest labels are nearly tied. :class:`Fp32Recheck` runs a classifier in its
reduced precision (bf16, or fp16 on a GPU) and answers again in fp32 every pair whose two likeliest labels (after the
folder's decision bias) lie closer than its gap; :class:`pragmeter.interpreter.model.Interpreter` does the same for an
item whose two best readings' scores lie closer than it (:meth:`Fp32Recheck.answer_again`). The gap is
:data:`RECHECK_GAP` or twice the largest change the folder's recorded bf16 check measured, whichever is larger
(:func:`recheck_gap`): a probability moved by at most that change on the pairs it was measured on, so a gap by at
most twice it, and a label or a choice differs from fp32's only where bf16 moved a probability further than it was
ever measured to. The other pairs keep the reduced precision's probabilities.

Every command that opens an interpreter (``interpret``, ``classifier predict``, the ``local:`` backend, the service)
gets it through :meth:`Interpreter.load`, so one folder answers the same labels under each.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# The least gap: interpreter-minilm-inli's bf16 check through OpenVINO moved a probability by at most 0.036 on 4,000
# INLI validation pairs, so a gap by at most 0.073.
RECHECK_GAP = 0.1


def recheck_gap(folder: Path | None) -> float:
    """How close a reduced-precision answer of the folder's classifier must be to be answered again in fp32:
    RECHECK_GAP, or twice the largest change its recorded bf16 check measured where that is larger (a check that is
    not a measurement's claim, :func:`pragmeter.interpreter.runtime.bf16_claim_problem`, does not count)."""
    from pragmeter.interpreter.runtime import bf16_claim_problem, read_bf16_check

    gap = RECHECK_GAP
    try:
        check = read_bf16_check(folder)
    except (OSError, ValueError, TypeError):
        return gap
    if isinstance(check, dict) and bf16_claim_problem(check) is None:
        changes = [check.get(name) for name in ("max_abs_probability_diff", "max_abs_score_diff")]
        gap = max([gap] + [2 * value for value in changes
                           if isinstance(value, (int, float)) and not isinstance(value, bool)])
    return gap


def close_calls(values, gap: float, decision_bias: dict | None = None, labels=None) -> np.ndarray:
    """Which rows of ``values`` (label probabilities, or one item's reading scores as a single row) have their two
    largest entries closer than ``gap``; with a ``decision_bias`` (label -> number added to the log-probabilities, as
    :func:`pragmeter.classify.model.decide` decides), measured on the biased probabilities."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] < 2:
        return np.zeros(len(values), dtype=bool)
    if decision_bias and any(decision_bias.values()):
        from pragmeter.classify.model import biased_log_probabilities

        values = biased_log_probabilities(values, labels, decision_bias)
        values = np.exp(values - values.max(axis=1, keepdims=True))
        values /= values.sum(axis=1, keepdims=True)
    top = np.sort(values, axis=1)[:, -2:]
    return top[:, 1] - top[:, 0] < gap


class Fp32Recheck:
    """A classifier run in a reduced precision whose close calls are answered again in fp32 (module notes). Answers
    what the classifier answers (``probabilities``, ``predict``, ``decide``, ``labels``, ``settings``, ``runtime``…);
    ``gap``: how close a call must be; ``rechecked``: the pairs answered again so far. The fp32 classifier (another
    compiled graph of the same OpenVINO export, or the same torch model without autocast) is made at the first
    close call."""

    def __init__(self, classifier, gap: float, folder: Path | None = None) -> None:
        self.classifier, self.gap, self.folder = classifier, gap, folder
        self.rechecked = 0
        self._fp32 = None

    @property
    def description(self) -> str:
        """What it does, as the runtime's signature and the local backend's answer key say it."""
        return f"close calls (gap < {self.gap:g}) in fp32"

    def __getattr__(self, name: str):
        if name == "classifier":  # not yet set (a copy being built)
            raise AttributeError(name)
        return getattr(self.classifier, name)

    def probabilities(self, texts, pairs=None, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        return self.probabilities_rechecked(texts, pairs, batch_size, progress)[0]

    def probabilities_rechecked(self, texts, pairs=None, batch_size: int = 64,
                                progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The probabilities with the close calls answered again in fp32, and which rows were."""
        rows = self.classifier.probabilities(texts, pairs, batch_size, progress)
        close = close_calls(rows, self.gap, self.settings.decision_bias, self.labels)
        return self.answer_again(texts, pairs, rows, close, batch_size), close

    def predict(self, texts, pairs=None, batch_size: int = 64, progress: bool = False) -> list[str]:
        return self.decide(self.probabilities(texts, pairs, batch_size, progress))

    def answer_again(self, texts, pairs, rows: np.ndarray, which: np.ndarray, batch_size: int = 64) -> np.ndarray:
        """``rows`` with the rows ``which`` (a boolean mask) replaced by the fp32 classifier's answers."""
        picked = np.flatnonzero(which)
        if not len(picked):
            return rows
        if self._fp32 is None:
            self._fp32 = fp32_twin(self.classifier, self.folder)
        rows = rows.copy()
        rows[picked] = self._fp32.probabilities([texts[i] for i in picked],
                                                None if pairs is None else [pairs[i] for i in picked], batch_size)
        self.rechecked += len(picked)
        return rows


def fp32_twin(classifier, folder: Path | None):
    """The same classifier answering in fp32: another compiled graph of the same OpenVINO export, or the same torch
    model without autocast (its weights shared)."""
    import copy
    from dataclasses import replace

    if getattr(classifier, "backend", "torch") == "openvino":
        from pragmeter.classify.openvino import OpenVinoClassifier

        runtime = replace(classifier.runtime, precision="fp32", reason="fp32 for the close calls of bf16")
        return OpenVinoClassifier(folder or classifier.folder, runtime, progress=False,
                                  tokens_per_batch=classifier.tokens_per_batch, max_batch=classifier.max_batch)
    twin = copy.copy(classifier)
    twin.precision = "fp32"
    return twin
