"""Ranking and choice evaluators: file validation and the metrics on a model with known behaviour."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pragmeter.errors import DataError
from pragmeter.impscore.ood import evaluate_choice, evaluate_ranking, load_choice, load_ranking


class LengthModel:
    """Scores by length and measures distance by length difference: a transparent stand-in for the heads."""

    def score(self, texts):
        return np.array([len(t) for t in texts], dtype=float)

    def pragmatic_distance(self, a, b):
        return np.array([abs(len(x) - len(y)) for x, y in zip(a, b)], dtype=float)


def write(tmp_path, payload, name="f.json"):
    path = tmp_path / name
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_ranking_tau_and_rho(tmp_path):
    path = write(tmp_path, {"groups": [
        {"id": "perfect", "sentences": ["a", "bb", "ccc", "dddd"]},
        {"id": "reversed", "sentences": ["dddd", "ccc", "bb", "a"]},
        {"id": "one swap", "sentences": ["a", "ccc", "bb", "dddd"]},
    ]})
    result = evaluate_ranking(LengthModel(), load_ranking(path))
    taus = [g["kendall_tau"] for g in result["per_group"]]
    assert taus == pytest.approx([1.0, -1.0, 4 / 6])  # one discordant pair of six
    assert result["kendall_tau"] == pytest.approx((1 - 1 + 4 / 6) / 3)
    assert result["per_group"][2]["spearman_rho"] == pytest.approx(0.8)


def test_choice_accuracy(tmp_path):
    path = write(tmp_path, {"items": [
        {"id": 1, "reference": "abc", "options": ["x", "xyz", "xyzxyz"], "answer": 1},
        {"id": 2, "reference": "abc", "options": ["x", "xyz"], "answer": 0},
    ]})
    result = evaluate_choice(LengthModel(), load_choice(path))
    assert result["accuracy"] == 0.5
    assert [i["chosen"] for i in result["per_item"]] == [1, 1]


@pytest.mark.parametrize("payload, message", [
    ({"groups": []}, 'non-empty "groups"'),
    ({"groups": [{"sentences": ["only one"]}]}, "item 0, field 'sentences'"),
    ({"groups": [{"sentences": ["ok", ""]}]}, r"item 0, field 'sentences\[1\]'"),
])
def test_bad_ranking_files(tmp_path, payload, message):
    with pytest.raises(DataError, match=message):
        load_ranking(write(tmp_path, payload))


def test_bad_choice_answer_and_json(tmp_path):
    with pytest.raises(DataError, match="item 0, field 'answer'"):
        load_choice(write(tmp_path, {"items": [{"reference": "r", "options": ["a", "b"], "answer": 2}]}))
    broken = tmp_path / "broken.json"
    broken.write_text('{"items": [', encoding="utf-8")
    with pytest.raises(DataError, match="line 1, column 12: invalid JSON"):
        load_choice(broken)
