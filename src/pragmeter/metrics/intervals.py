"""Confidence intervals: a proportion's standard error, Wilson (binomial proportion), percentile bootstrap of a mean over items, Welch and
paired-t intervals of mean differences, and mean ± SD over runs."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

Z95 = 1.959963984540054
BOOTSTRAP_SIGNATURE = "bootstrap|resample=items|percentile|95%|n={n}|seed={seed}"


def proportion_standard_error(p: float, n: int) -> float:
    """The standard error of a proportion (an accuracy) ``p`` over ``n`` items, sqrt(p (1 - p) / n); NaN for n = 0."""
    return math.sqrt(p * (1 - p) / n) if n else float("nan")


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


def bootstrap_ci(values: Sequence[float], n_resamples: int = 2000, seed: int = 0,
                 confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean, resampling items (seeded, so the interval is reproducible)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(n_resamples, data.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def mean_sd(values: Sequence[float]) -> dict[str, float]:
    """Mean and sample SD (ddof=1; 0 for a single value) over runs."""
    data = [float(v) for v in values]
    if not data:
        return {"mean": float("nan"), "sd": float("nan")}
    sd = float(np.std(data, ddof=1)) if len(data) > 1 else 0.0
    return {"mean": float(np.mean(data)), "sd": sd if not math.isnan(sd) else 0.0}


def format_estimate(value: float | dict, digits: int = 4) -> str:
    """A metric as text for a console line or a report cell: a number; a mean ± SD over runs followed by its
    95% interval when it has one (``ci95``); or a difference with its interval and the sample sizes behind it,
    so a wide interval on two items reads as such (``+0.0369 [-4.0297, +4.1035] (n=2 vs 63)``)."""
    if isinstance(value, dict) and "difference" in value:
        sizes = (f"n={value['n_pairs']} pairs" if "n_pairs" in value else f"n={value.get('n_a')} vs {value.get('n_b')}")
        if value["difference"] is None:
            return f"n/a ({sizes})"
        return (f"{value['difference']:+.{digits}f} [{value['ci_low']:+.{digits}f}, {value['ci_high']:+.{digits}f}] "
                f"({sizes})")
    if isinstance(value, dict) and "mean" in value:
        text = f"{value['mean']:.{digits}f} ± {value['sd']:.{digits}f}"
        low, high = (value.get("ci95") or (None, None))[:2]
        if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
            text += f" [{low:.{digits}f}, {high:.{digits}f}]"
        return text
    return f"{value:.{digits}f}"
