"""Small statistics used by the analyses: summaries, Wilson intervals, mean differences with confidence
intervals, and trend statistics (Spearman ρ, logistic-regression slope)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

Z95 = 1.959963984540054
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def summary(values: Sequence[float]) -> dict:
    """n, mean, SD (ddof=1), min, quantiles and max of ``values``; None for what is undefined."""
    array = np.asarray(values, dtype=np.float64)
    n = int(array.size)
    if n == 0:
        return {"n": 0, "mean": None, "sd": None, "min": None, **{f"q{int(q * 100):02d}": None for q in QUANTILES},
                "max": None}
    quantiles = np.quantile(array, QUANTILES)
    return {"n": n, "mean": float(array.mean()), "sd": _finite(array.std(ddof=1)) if n > 1 else None,
            "min": float(array.min()), **{f"q{int(q * 100):02d}": float(v) for q, v in zip(QUANTILES, quantiles)},
            "max": float(array.max())}


def histogram(values: Sequence[float], edges: np.ndarray) -> list[int]:
    """Counts per bin; the last bin is closed on the right (so a score of exactly 2 is counted)."""
    counts, _ = np.histogram(np.clip(np.asarray(values, dtype=np.float64), edges[0], edges[-1]), bins=edges)
    return [int(c) for c in counts]


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float | None, float | None]:
    """Wilson score interval of a binomial proportion (95% by default); (None, None) when n = 0."""
    if n == 0:
        return None, None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # At k = 0 and k = n the bound is exactly 0 or 1; rounding would leave it a hair inside.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def mean_difference(a: Sequence[float], b: Sequence[float]) -> dict:
    """mean(a) − mean(b) with a Welch 95% confidence interval and two-sided p-value (independent samples)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size < 2 or b.size < 2:
        return {"difference": None, "ci_low": None, "ci_high": None, "p_value": None, "n_a": int(a.size),
                "n_b": int(b.size), "method": "welch"}
    var_a, var_b = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(var_a + var_b)
    df = (var_a + var_b) ** 2 / (var_a ** 2 / (a.size - 1) + var_b ** 2 / (b.size - 1))
    diff = float(a.mean() - b.mean())
    half = float(stats.t.ppf(0.975, df)) * se
    p = float(2 * stats.t.sf(abs(diff / se), df)) if se > 0 else 0.0
    return {"difference": diff, "ci_low": diff - half, "ci_high": diff + half, "p_value": p,
            "n_a": int(a.size), "n_b": int(b.size), "mean_a": float(a.mean()), "mean_b": float(b.mean()),
            "method": "welch"}


def paired_difference(a: Sequence[float], b: Sequence[float]) -> dict:
    """Mean of a − b over pairs with a t 95% confidence interval, p-value and the share of pairs with a > b."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in size ({a.size} vs {b.size})")
    diffs = a - b
    n = int(diffs.size)
    if n < 2:
        return {"difference": None, "ci_low": None, "ci_high": None, "p_value": None, "n_pairs": n,
                "method": "paired-t"}
    se = float(diffs.std(ddof=1) / math.sqrt(n))
    mean = float(diffs.mean())
    half = float(stats.t.ppf(0.975, n - 1)) * se
    p = float(2 * stats.t.sf(abs(mean / se), n - 1)) if se > 0 else 0.0
    return {"difference": mean, "ci_low": mean - half, "ci_high": mean + half, "p_value": p, "n_pairs": n,
            "mean_a": float(a.mean()), "mean_b": float(b.mean()), "share_a_greater": float(np.mean(diffs > 0)),
            "method": "paired-t"}


def spearman(x: Sequence[float], y: Sequence[float]) -> dict:
    """Spearman ρ and its p-value; None when fewer than 3 points or a constant series."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return {"rho": None, "p_value": None, "n": int(x.size)}
    result = stats.spearmanr(x, y)
    return {"rho": float(result.statistic), "p_value": float(result.pvalue), "n": int(x.size)}


def logistic_slope(x: Sequence[float], y: Sequence[float], iterations: int = 50) -> dict:
    """Slope of logit P(y=1) = a + b·x by maximum likelihood (Newton–Raphson), with a Wald 95% CI.

    None when the fit is undefined (fewer than 3 points, one outcome only, constant x, or separation)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    empty = {"slope": None, "se": None, "ci_low": None, "ci_high": None, "p_value": None, "n": int(x.size)}
    if x.size < 3 or y.min() == y.max() or np.all(x == x[0]):
        return empty
    design = np.column_stack([np.ones_like(x), x])
    beta = np.zeros(2)
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-design @ beta))
        weights = p * (1 - p)
        hessian = design.T @ (design * weights[:, None])
        try:
            step = np.linalg.solve(hessian, design.T @ (y - p))
        except np.linalg.LinAlgError:
            return empty
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    p = 1 / (1 + np.exp(-design @ beta))
    covariance = np.linalg.pinv(design.T @ (design * (p * (1 - p))[:, None]))
    se = math.sqrt(covariance[1, 1]) if covariance[1, 1] > 0 else float("nan")
    if not math.isfinite(se) or abs(beta[1]) > 50:  # separation: the slope runs off to infinity
        return empty
    slope = float(beta[1])
    return {"slope": slope, "se": se, "ci_low": slope - Z95 * se, "ci_high": slope + Z95 * se,
            "p_value": float(2 * stats.norm.sf(abs(slope / se))), "n": int(x.size), "intercept": float(beta[0])}


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall τ-b; None when undefined (a constant series)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return None
    return _finite(stats.kendalltau(x, y).statistic)
