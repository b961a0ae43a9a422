"""Statistics of the analyses against values computed by hand or by their defining equations."""

from __future__ import annotations

import numpy as np
import pytest

from pragmeter.metrics import correlation, intervals, summary


def test_wilson_interval_matches_the_textbook_values():
    # 8 of 10: Wilson 95% interval (0.4902, 0.9433) (Newcombe 1998, Table I method 3 gives 0.490–0.943).
    low, high = intervals.wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert intervals.wilson_interval(0, 10)[0] == 0.0 and intervals.wilson_interval(10, 10)[1] == 1.0
    assert intervals.wilson_interval(0, 0) == (None, None)


def test_logistic_slope_solves_the_likelihood_equations():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 2, 400)
    y = (rng.uniform(size=400) < 1 / (1 + np.exp(-(2.0 - 2.5 * x)))).astype(float)
    fit = correlation.logistic_slope(x, y)
    p = 1 / (1 + np.exp(-(fit["intercept"] + fit["slope"] * x)))
    # At the maximum the score equations hold: sum(y - p) = 0 and sum((y - p) x) = 0.
    assert abs(np.sum(y - p)) < 1e-6 and abs(np.sum((y - p) * x)) < 1e-6
    assert fit["ci_low"] < -2.5 < fit["ci_high"] and fit["slope"] < 0
    assert correlation.logistic_slope(x, np.ones_like(x))["slope"] is None  # one outcome only


def test_mean_and_paired_differences():
    a, b = [1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 1.0, 2.0]
    welch = intervals.mean_difference(a, b)
    assert welch["difference"] == pytest.approx(1.5) and welch["ci_low"] < 1.5 < welch["ci_high"]
    paired = intervals.paired_difference(a, b)
    assert paired["difference"] == pytest.approx(1.5) and paired["share_a_greater"] == 1.0
    # differences 1, 1, 2, 2: sd = 0.57735, se = 0.288675, t(3, .975) = 3.182446
    assert paired["ci_low"] == pytest.approx(1.5 - 3.182446 * 0.288675, abs=1e-5)


def test_summary_and_histogram_count_the_right_edge():
    edges = np.linspace(0, 2, 9)
    assert summary.histogram([0.0, 0.25, 1.99, 2.0], edges) == [1, 1, 0, 0, 0, 0, 0, 2]
    described = summary.summary([1, 2, 3, 4])
    assert described["n"] == 4 and described["q50"] == 2.5 and described["sd"] == pytest.approx(1.2909944)


def test_estimates_print_with_their_interval_and_sample_size():
    assert intervals.format_estimate(0.5) == "0.5000"
    over_runs = {"mean": 0.326, "sd": 0.033, "ci95": [0.271, 0.385]}
    assert intervals.format_estimate(over_runs) == "0.3260 ± 0.0330 [0.2710, 0.3850]"
    assert intervals.format_estimate({"mean": 0.5, "sd": 0.0}, digits=2) == "0.50 ± 0.00"
    assert intervals.format_estimate({"mean": 0.5, "sd": 0.1, "ci95": [float("nan"), float("nan")]}) == "0.5000 ± 0.1000"
    welch = intervals.mean_difference([1.0, 1.2], [0.0, 0.5, 1.0])
    assert intervals.format_estimate(welch) == (f"{welch['difference']:+.4f} [{welch['ci_low']:+.4f}, "
                                                f"{welch['ci_high']:+.4f}] (n=2 vs 3)")
    paired = intervals.paired_difference([1.0, 2.0, 3.5], [0.5, 1.0, 3.0])
    assert intervals.format_estimate(paired).endswith("(n=3 pairs)")
    assert intervals.format_estimate(intervals.mean_difference([1.0], [0.0, 1.0])) == "n/a (n=1 vs 2)"
