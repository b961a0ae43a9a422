"""Descriptive summaries of score distributions: n, mean, SD, quantiles, histogram counts."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def finite(value: float) -> float | None:
    """The value as a float, or None when it is missing, NaN or infinite (JSON has no NaN)."""
    return float(value) if value is not None and math.isfinite(value) else None


def summary(values: Sequence[float]) -> dict:
    """n, mean, SD (ddof=1), min, quantiles and max of ``values``; None for what is undefined."""
    array = np.asarray(values, dtype=np.float64)
    n = int(array.size)
    if n == 0:
        return {"n": 0, "mean": None, "sd": None, "min": None, **{f"q{int(q * 100):02d}": None for q in QUANTILES},
                "max": None}
    quantiles = np.quantile(array, QUANTILES)
    return {"n": n, "mean": float(array.mean()), "sd": finite(array.std(ddof=1)) if n > 1 else None,
            "min": float(array.min()), **{f"q{int(q * 100):02d}": float(v) for q, v in zip(QUANTILES, quantiles)},
            "max": float(array.max())}


def histogram(values: Sequence[float], edges: np.ndarray) -> list[int]:
    """Counts per bin; the last bin is closed on the right (so a score of exactly 2 is counted)."""
    counts, _ = np.histogram(np.clip(np.asarray(values, dtype=np.float64), edges[0], edges[-1]), bins=edges)
    return [int(c) for c in counts]
