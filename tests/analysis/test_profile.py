"""`pragmeter analyze profile` on real texts: counts, histograms, pairs, comparisons, plots and the embedding cache;
the built-in loaders against the counts documented in SOURCES.md."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from pragmeter.datasets.labelled_sets import load_builtin
from pragmeter.analysis.profile import random_distinct_pairs
from pragmeter.cli import main
from pragmeter.data.root import data_file


@pytest.fixture(scope="module")
def posts_file(tmp_path_factory) -> str:
    stage3 = pd.read_csv(data_file("implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg3_posts.tsv"), sep="\t")
    frame = stage3.head(240).copy()
    frame.loc[5, "post"] = "   "  # one unscorable row is skipped with a warning
    path = tmp_path_factory.mktemp("data") / "posts.csv"
    frame.to_csv(path, index=False)
    return str(path)


def test_random_distinct_pairs_are_distinct_and_seeded():
    pairs = random_distinct_pairs(100, 2000, seed=1)
    assert len({tuple(p) for p in pairs}) == 2000 and np.all(pairs[:, 0] < pairs[:, 1])
    assert np.array_equal(pairs, random_distinct_pairs(100, 2000, seed=1))
    assert len(random_distinct_pairs(10, 2000, seed=1)) == 45  # fewer pairs exist: all of them


def test_profile_of_a_file(tmp_path, posts_file, throwaway_model, capsys):
    out = tmp_path / "out"
    argv = ["analyze", "profile", "--input", posts_file, "--column", "post", "--label-column", "target", "--pair-column",
            "implied_statement", "--pairs", "500", "--impscore", throwaway_model, "--output", str(out)]
    assert main(argv) == 0
    assert "1 row(s) skipped (first: " in capsys.readouterr().err
    payload = json.loads((out / "profile_posts.json").read_text())
    assert payload["n_texts"] == 239
    assert sum(payload["overall"]["histogram"]) == 239
    targets = Counter(pd.read_csv(posts_file).drop(index=5)["target"].astype(str))
    assert {v: b["scores"]["n"] for v, b in payload["groupings"]["target"].items()} == dict(targets)
    assert payload["overall"]["diversity"]["n_pairs"] == 500
    paired = payload["pairs"]["post_vs_implied_statement"]
    scores = pd.read_parquet(out / payload["scores_file"])
    assert paired["n_pairs"] == 239 and paired["mean_a"] == pytest.approx(scores["impscore"].mean(), abs=1e-6)
    assert scores["impscore"].between(0, 2).all()
    assert payload["overall"]["scores"]["mean"] == pytest.approx(scores["impscore"].mean(), abs=1e-6)
    assert (out / "profile_posts_target.png").stat().st_size > 20_000
    # A second run reads every embedding from the cache: identical numbers.
    assert main([*argv, "--overwrite"]) == 0
    again = json.loads((out / "profile_posts.json").read_text())
    assert again["overall"] == payload["overall"] and again["pairs"] == payload["pairs"]


def test_builtin_loaders_match_documented_counts(data_root):
    latent = load_builtin("latent_hatred", cap=None)
    assert latent.sampling["sizes_before"] == {"explicit_hate": 1089, "implicit_hate": 7100, "not_hate": 13291}
    assert latent.sampling["pairs"]["size_before"] == 6358
    davidson = load_builtin("davidson", cap=2000)
    assert davidson.sampling["sizes_before"] == {"hate": 1430, "offensive": 19190, "neither": 4163}
    assert davidson.sampling["sizes_after"] == {"hate": 1430, "offensive": 2000, "neither": 2000}
    absa = load_builtin("absa", cap=None)
    assert Counter(absa.groupings["sentiment"])["implicit"] == 2188
    assert absa.sampling["aspect_terms_without_label_skipped"] == 166
    ishate = load_builtin("ishate", cap=None)
    assert ishate.sampling["sizes_before"]["Implicit HS"] == 186 + 186  # dev + test (ImpScore trains on train)
    toxigen = load_builtin("toxigen")
    assert len(toxigen.texts) == len(set(zip(toxigen.groupings["label"], toxigen.texts)))
    sampled = load_builtin("ishate", cap=300, seed=4)
    assert sampled.texts == load_builtin("ishate", cap=300, seed=4).texts  # seeded
    assert set(Counter(sampled.groupings["implicit_layer"]).values()) == {300}
