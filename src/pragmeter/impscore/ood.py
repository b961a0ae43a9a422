"""Out-of-distribution checks of ImpScore on user files (paper §6).

Ranking file — groups of sentences listed from most explicit to most implicit::

    {"groups": [{"id": "g1", "sentences": ["explicit ...", "...", "implicit ..."]}, ...]}

Score: Kendall τ and Spearman ρ between the listed order and the ImpScore order, per group, then the mean.

Choice file — a reference sentence, options, and the index of the pragmatically closest option::

    {"items": [{"id": "c1", "reference": "...", "options": ["...", "..."], "answer": 0}, ...]}

Score: accuracy of picking the option with the smallest pragmatic distance to the reference.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from scipy import stats

from pragmeter.errors import DataError


def _load_json(path: str | os.PathLike, key: str) -> list:
    from pragmeter.io import read_json

    payload = read_json(path, dict, f'{{"{key}": [...]}}')
    items = payload.get(key)
    if not isinstance(items, list) or not items:
        raise DataError(f'{path}: expected an object with a non-empty "{key}" list')
    return items


def _text(path, index: int, field: str, value) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"{path}: item {index}, field {field!r}: expected a non-empty string")
    return value


@dataclass
class RankingGroup:
    id: str
    sentences: list[str]


@dataclass
class ChoiceItem:
    id: str
    reference: str
    options: list[str]
    answer: int


def load_ranking(path: str | os.PathLike) -> list[RankingGroup]:
    groups = []
    for index, item in enumerate(_load_json(path, "groups")):
        sentences = item.get("sentences") if isinstance(item, dict) else None
        if not isinstance(sentences, list) or len(sentences) < 2:
            raise DataError(f"{path}: item {index}, field 'sentences': expected a list of at least 2 sentences")
        groups.append(RankingGroup(str(item.get("id", index)),
                                   [_text(path, index, f"sentences[{i}]", s) for i, s in enumerate(sentences)]))
    return groups


def load_choice(path: str | os.PathLike) -> list[ChoiceItem]:
    items = []
    for index, item in enumerate(_load_json(path, "items")):
        if not isinstance(item, dict):
            raise DataError(f"{path}: item {index}: expected an object")
        options = item.get("options")
        if not isinstance(options, list) or len(options) < 2:
            raise DataError(f"{path}: item {index}, field 'options': expected a list of at least 2 sentences")
        answer = item.get("answer")
        if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(options):
            raise DataError(f"{path}: item {index}, field 'answer': expected an index from 0 to {len(options) - 1}")
        items.append(ChoiceItem(str(item.get("id", index)), _text(path, index, "reference", item.get("reference")),
                                [_text(path, index, f"options[{i}]", o) for i, o in enumerate(options)], answer))
    return items


def evaluate_ranking(model, groups: list[RankingGroup]) -> dict:
    """Mean Kendall τ and Spearman ρ between the listed order (explicit → implicit) and ImpScore's scores."""
    taus, rhos, per_group = [], [], []
    for group in groups:
        scores = model.score(group.sentences)
        order = np.arange(len(scores))
        tau = stats.kendalltau(order, scores).statistic
        rho = stats.spearmanr(order, scores).statistic
        taus.append(tau)
        rhos.append(rho)
        per_group.append({"id": group.id, "kendall_tau": float(tau), "spearman_rho": float(rho),
                          "scores": [float(s) for s in scores]})
    return {"groups": len(groups), "kendall_tau": float(np.nanmean(taus)), "spearman_rho": float(np.nanmean(rhos)),
            "per_group": per_group}


def evaluate_choice(model, items: list[ChoiceItem]) -> dict:
    """Accuracy of choosing the option with the smallest pragmatic distance to the reference."""
    correct, per_item = 0, []
    for item in items:
        distances = model.pragmatic_distance([item.reference] * len(item.options), item.options)
        chosen = int(np.argmin(distances))
        correct += chosen == item.answer
        per_item.append({"id": item.id, "chosen": chosen, "answer": item.answer,
                         "distances": [float(d) for d in distances]})
    return {"items": len(items), "accuracy": correct / len(items), "per_item": per_item}
