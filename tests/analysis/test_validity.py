"""Validity checks of ImpScore on real data with the shipped model (issue 5, item 5), on seeded samples small
enough for CI; the full-data figures are in docs/results.md ("Where models break")."""

from __future__ import annotations

import pytest

from pragmeter.datasets.labelled_sets import load_builtin
from pragmeter.analysis.profile import compute_profile

CAP = 100  # texts per label value (and post/implied-statement pairs) drawn with seed 0


@pytest.fixture(scope="module")
def shipped_model():
    from pragmeter.impscore.model import DEFAULT_MODEL, ImpScore

    return ImpScore.load(DEFAULT_MODEL)  # fails (does not skip) when the default model is not shipped


def _comparison(payload: dict, grouping: str, a: str, b: str) -> dict:
    return next(c for c in payload["comparisons"] if (c["grouping"], c["a"], c["b"]) == (grouping, a, b))


def test_ishate_implicit_hate_scores_higher_than_explicit(shipped_model, data_root):
    # ISHate dev + test only: the shipped model's corpus pairs ISHate train messages, so this stays held out
    collection = load_builtin("ishate", cap=CAP, seed=0)
    layer = collection.groupings["implicit_layer"]
    collection = collection.subset([i for i, value in enumerate(layer) if value in ("Implicit HS", "Explicit HS")])
    collection.groupings = {"implicit_layer": collection.groupings["implicit_layer"]}  # the compared texts only
    collection.comparisons = [("implicit_layer", "Implicit HS", "Explicit HS")]
    payload = compute_profile(collection, shipped_model, n_pairs=10).to_json()
    difference = _comparison(payload, "implicit_layer", "Implicit HS", "Explicit HS")
    assert difference["n_a"] == CAP and difference["n_b"] == CAP
    assert difference["ci_low"] > 0, difference


def test_latent_hatred_posts_score_higher_than_their_implied_statements(shipped_model, data_root):
    collection = load_builtin("latent_hatred", cap=CAP, seed=0)
    collection.groupings = {}  # only the pairs are checked here
    collection.comparisons = []
    payload = compute_profile(collection.subset(range(0)), shipped_model, n_pairs=10).to_json()
    paired = payload["pairs"]["post_vs_implied_statement"]
    assert paired["n_pairs"] == CAP
    assert paired["ci_low"] > 0 and paired["share_a_greater"] > 0.5, paired
