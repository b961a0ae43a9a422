"""Correlation and trend statistics: Pearson, Kendall τ-b and Spearman ρ (with p-values), and the slope of a
logistic regression of a binary outcome on a score (with a Wald interval)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from pragmeter.metrics.intervals import Z95
from pragmeter.metrics.summary import finite


def correlations(x: Sequence[float], y: Sequence[float]) -> dict:
    """Pearson r, Kendall τ-b and Spearman ρ with their two-sided p-values (e.g. judge scores vs human ratings)."""
    result = {"n": int(len(x))}
    for name, function in (("pearson", stats.pearsonr), ("kendall", stats.kendalltau), ("spearman", stats.spearmanr)):
        statistic = function(x, y)
        result[name] = {"r": float(statistic[0]), "p": float(statistic[1])}
    return result


def spearman(x: Sequence[float], y: Sequence[float], min_points: int = 3) -> dict:
    """Spearman ρ and its p-value; None when fewer than ``min_points`` points or a constant series."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < min_points or np.all(x == x[0]) or np.all(y == y[0]):
        return {"rho": None, "p_value": None, "n": int(x.size)}
    result = stats.spearmanr(x, y)
    return {"rho": float(result.statistic), "p_value": float(result.pvalue), "n": int(x.size)}


def kendall_tau(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall τ-b; None when undefined (a constant series)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return None
    return finite(stats.kendalltau(x, y).statistic)


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


def spearman_with_ci(x: Sequence[float], y: Sequence[float], n_resamples: int = 1000, seed: int = 0,
                     confidence: float = 0.95) -> dict[str, float]:
    """Spearman ρ of paired values with a percentile bootstrap CI (pairs resampled, seeded)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rho = float(stats.spearmanr(a, b).statistic)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, a.size, size=(n_resamples, a.size))
    # Spearman = Pearson on ranks; rank each resample once, correlate row-wise (vectorised over resamples).
    ra, rb = stats.rankdata(a[draws], axis=1), stats.rankdata(b[draws], axis=1)
    ra -= ra.mean(axis=1, keepdims=True)
    rb -= rb.mean(axis=1, keepdims=True)
    rhos = (ra * rb).sum(axis=1) / np.sqrt((ra ** 2).sum(axis=1) * (rb ** 2).sum(axis=1))
    tail = (1 - confidence) / 2
    return {"spearman_rho": rho, "ci95": [float(np.nanquantile(rhos, tail)), float(np.nanquantile(rhos, 1 - tail))],
            "n": int(a.size)}


def rank_agreement(order: Sequence[float], values: Sequence[float]) -> tuple[float, float]:
    """Kendall τ and Spearman ρ between a reference order and values; NaN when the values are all equal."""
    if np.ptp(np.asarray(values, dtype=float)) == 0:
        return float("nan"), float("nan")
    return float(stats.kendalltau(order, values).statistic), float(stats.spearmanr(order, values).statistic)
