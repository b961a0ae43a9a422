"""Stand-ins for a reduced precision that flips close calls, wrapped around a real fp32 classifier: what bf16's
rounding can do to a nearly tied pair or choice, made certain, so that a path which skips the fp32 recheck
(:mod:`pragmeter.interpreter.recheck`) fails its test on every CPU. ``precision`` is an attribute, as the torch
classifier's is: a copy set to ``fp32`` (the recheck's fp32 twin) answers as the wrapped classifier does."""

from __future__ import annotations

import numpy as np


class FlippingBf16:
    """In ``bf16``, swaps the two likeliest labels of every pair on which they lie within ``flip`` of each other, and
    moves every probability of the other pairs by ``nudge``; ``calls`` records (precision, rows) of each call."""

    def __init__(self, classifier, flip: float, nudge: float = 0.004) -> None:
        self.inner, self.flip, self.nudge, self.precision = classifier, flip, nudge, "bf16"
        self.calls: list[tuple[str, int]] = []

    def __getattr__(self, name: str):
        if name == "inner":  # not yet set (a copy being built)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def probabilities(self, texts, pairs=None, batch_size: int = 64, progress: bool = False) -> np.ndarray:
        rows = self.inner.probabilities(texts, pairs, batch_size, progress)
        self.calls.append((self.precision, len(rows)))
        return rows if self.precision == "fp32" else self.perturb(np.array(rows, copy=True))

    def perturb(self, rows: np.ndarray) -> np.ndarray:
        order = np.argsort(rows, axis=1)
        for row, (second, first) in zip(rows, order[:, -2:]):
            if row[first] - row[second] < self.flip:
                row[first], row[second] = row[second], row[first]
            else:
                row += self.nudge * np.sign(np.arange(len(row)) - 0.5)
        return rows


class SwappingBf16(FlippingBf16):
    """In ``bf16``, the rows ``swap`` of a call of more rows than that trade places: one item's two best readings
    flipped."""

    def __init__(self, classifier, swap: tuple[int, int]) -> None:
        super().__init__(classifier, flip=0.0)
        self.swap = tuple(int(i) for i in swap)

    def perturb(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) > max(self.swap):
            rows[list(self.swap)] = rows[list(self.swap[::-1])]
        return rows
