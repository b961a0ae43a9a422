"""Out-of-distribution checks of ImpScore on user files (paper §6).

Ranking file — groups of sentences listed from most explicit to most implicit::

    {"groups": [{"id": "g1", "sentences": ["explicit ...", "...", "implicit ..."]}, ...]}

Score: Kendall τ and Spearman ρ between the listed order and the ImpScore order, per group, then the mean.

Choice file — a reference sentence, options, and the index of the pragmatically closest option::

    {"items": [{"id": "c1", "reference": "...", "options": ["...", "..."], "answer": 0}, ...]}

Score: accuracy of picking the option with the smallest pragmatic distance to the reference.

Battery file — an implicit utterance, options, and the index of the option that plainly states what it means::

    {"items": [{"id": "b1", "category": "irony", "utterance": "...", "options": ["...", ...], "answer": 0}, ...]}

Scores: implicitness accuracy (the utterance scores above its plain statement) and choice accuracy (the plain
statement is the pragmatically closest option).

Any scorer with ``score(texts)`` and ``pragmatic_distance(a, b)`` can be evaluated (ImpScore or a baseline).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from pragmeter.datasets.items import ChoiceItem
from pragmeter.errors import DataError
from pragmeter.io.tables import choice_fields, item_text
from pragmeter.metrics.correlation import rank_agreement


def _load_json(path: str | os.PathLike, key: str) -> list:
    from pragmeter.io import read_json

    payload = read_json(path, dict, f'{{"{key}": [...]}}')
    items = payload.get(key)
    if not isinstance(items, list) or not items:
        raise DataError(f'{path}: expected an object with a non-empty "{key}" list')
    return items


@dataclass
class RankingGroup:
    id: str
    sentences: list[str]
    category: str = ""


@dataclass
class BatteryItem:
    id: str
    category: str
    utterance: str
    options: list[str]
    answer: int

    @property
    def meaning(self) -> str:
        return self.options[self.answer]


def load_ranking(path: str | os.PathLike) -> list[RankingGroup]:
    groups = []
    for index, item in enumerate(_load_json(path, "groups")):
        sentences = item.get("sentences") if isinstance(item, dict) else None
        if not isinstance(sentences, list) or len(sentences) < 2:
            raise DataError(f"{path}: item {index}, field 'sentences': expected a list of at least 2 sentences")
        groups.append(RankingGroup(str(item.get("id", index)),
                                   [item_text(path, index, f"sentences[{i}]", s) for i, s in enumerate(sentences)],
                                   str(item.get("category", ""))))
    return groups


def load_choice(path: str | os.PathLike) -> list[ChoiceItem]:
    return _choice_items(path, _load_json(path, "items"), "reference")


def _choice_items(path, raw: list, reference_field: str) -> list[ChoiceItem]:

    items = []
    for index, item in enumerate(raw):
        options, answer = choice_fields(path, index, item)
        items.append(ChoiceItem.lettered(str(item.get("id", index)),
                                         item_text(path, index, reference_field, item.get(reference_field)), options,
                                         answer))
    return items


def load_battery(path: str | os.PathLike) -> list[BatteryItem]:
    """Battery items: a choice item whose reference is the utterance, plus its category."""
    raw = _load_json(path, "items")
    return [BatteryItem(choice.id, item_text(path, index, "category", item.get("category")), choice.utterance,
                        list(choice.readings), choice.answer_index)
            for index, (item, choice) in enumerate(zip(raw, _choice_items(path, raw, "utterance"), strict=True))]


def _by_category(rows: list[dict], categories: list[str], keys: tuple[str, ...]) -> dict:
    """Mean of ``keys`` per category (rows and categories aligned); empty when no row has a category."""
    out = {}
    for category in sorted(set(categories) - {""}):
        chosen = [row for row, c in zip(rows, categories, strict=True) if c == category]
        out[category] = {"n": len(chosen), **{k: float(np.mean([row[k] for row in chosen])) for k in keys}}
    return out


def compare_orderings(reference: list[RankingGroup], second: list[RankingGroup]) -> dict:
    """Agreement of a second reader's orderings with the reference: Kendall τ per group and the mean.

    Both are ranking files (explicit → implicit); groups are matched by id and must hold the same sentences."""
    by_id = {group.id: group for group in second}
    per_group = []
    for group in reference:
        other = by_id.get(group.id)
        if other is None:
            raise DataError(f"second ordering has no group {group.id!r}")
        if sorted(other.sentences) != sorted(group.sentences):
            raise DataError(f"group {group.id!r}: the second ordering does not hold the same sentences")
        levels = [group.sentences.index(sentence) for sentence in other.sentences]
        tau, rho = rank_agreement(np.arange(len(levels)), levels)
        per_group.append({"id": group.id, "kendall_tau": tau, "spearman_rho": rho, "second_levels": levels})
    taus = [g["kendall_tau"] for g in per_group]
    return {"groups": len(per_group), "kendall_tau": float(np.mean(taus)),
            "spearman_rho": float(np.mean([g["spearman_rho"] for g in per_group])),
            "exact": sum(t == 1.0 for t in taus), "disagree": sum(t <= 0 for t in taus), "per_group": per_group}


def evaluate_ranking(model, groups: list[RankingGroup]) -> dict:
    """Mean Kendall τ and Spearman ρ between the listed order (explicit → implicit) and the model's scores.

    A group whose scores are all equal (possible for a word-count baseline, not for ImpScore) cannot be ordered:
    it counts as τ = ρ = 0 in the means and is counted in ``constant_groups``. With three or more groups of three or
    more sentences and a scorer that has a pragmatic distance, the paper's choice task is run on the same groups too
    (``paper_choice_accuracy``, else None)."""
    per_group, start = [], 0
    every = np.asarray(model.score([s for group in groups for s in group.sentences]), dtype=float)  # one batched call
    for group in groups:
        scores, start = every[start:start + len(group.sentences)], start + len(group.sentences)
        tau, rho = rank_agreement(np.arange(len(scores)), scores)
        per_group.append({"id": group.id, "kendall_tau": tau, "spearman_rho": rho,
                          "scores": [float(s) for s in scores]})
    taus = np.nan_to_num([g["kendall_tau"] for g in per_group])
    rhos = np.nan_to_num([g["spearman_rho"] for g in per_group])
    rows = [{"kendall_tau": t, "spearman_rho": r} for t, r in zip(taus, rhos, strict=True)]
    return {"groups": len(groups), "kendall_tau": float(np.mean(taus)), "spearman_rho": float(np.mean(rhos)),
            "constant_groups": int(sum(np.isnan(g["kendall_tau"]) for g in per_group)),
            "paper_choice_accuracy": (paper_group_choice(model, groups)
                                      if len(groups) >= 3 and min(len(g.sentences) for g in groups) >= 3
                                      and hasattr(model, "pragmatic_distance") else None),
            "per_category": _by_category(rows, [g.category for g in groups], ("kendall_tau", "spearman_rho")),
            "per_group": per_group}


def evaluate_choice(model, items: list[ChoiceItem]) -> dict:
    """Accuracy of choosing the reading with the smallest pragmatic distance to the item's utterance (the
    reference)."""
    # One call for every (reference, reading) pair: the model embeds each distinct sentence once.
    pairs = [(item.utterance, reading) for item in items for reading in item.readings]
    flat = np.asarray(model.pragmatic_distance([a for a, _ in pairs], [b for _, b in pairs]), dtype=float).reshape(-1)
    correct, per_item, start = 0, [], 0
    for item in items:
        distances = flat[start:start + len(item.options)]
        start += len(item.options)
        chosen = int(np.argmin(distances))
        correct += chosen == item.answer_index
        per_item.append({"id": item.id, "chosen": chosen, "answer": item.answer_index,
                         "distances": [float(d) for d in distances]})
    return {"items": len(items), "accuracy": correct / len(items), "per_item": per_item}


def choice_from_groups(groups: list[RankingGroup], n_options: int = 4, seed: int = 0, reference: int = -1,
                       answer: int = 0) -> list[ChoiceItem]:
    """Choice items built from ranking groups: the reference is each group's sentence at level ``reference``, the
    right option its own sentence at level ``answer``, the wrong options the sentences at that level of
    ``n_options - 1`` other groups (seeded), so wrong options share a topic with the reference only by chance.

    The defaults (most implicit reference, most explicit options, 4 options) are our harder form; the paper's user
    study (§6.2) used ``reference=1, answer=-1, n_options=3`` (the "explicit" sentence against three "most implicit"
    ones): :func:`paper_group_choice`."""
    rng = np.random.default_rng(seed)
    items = []
    for index, group in enumerate(groups):
        others = rng.choice([i for i in range(len(groups)) if i != index], size=n_options - 1, replace=False)
        options = [groups[i].sentences[answer] for i in others]
        position = int(rng.integers(n_options))
        options.insert(position, group.sentences[answer])
        items.append(ChoiceItem.lettered(group.id, group.sentences[reference], options, position))
    return items


def paper_group_choice(model, groups: list[RankingGroup], draws: int = 10) -> float:
    """Choice accuracy under the paper's user-study protocol (§6.2: reference = a group's "explicit" sentence,
    options = its "most implicit" one and two other groups' "most implicit" ones), averaged over ``draws`` seeded
    draws of the wrong options, because one draw over ~90 groups moves by ±0.05."""
    items = [item for seed in range(draws) for item in choice_from_groups(groups, 3, seed, reference=1, answer=-1)]
    return evaluate_choice(model, items)["accuracy"]  # every draw has one item per group: the mean over draws


def evaluate_battery(model, items: list[BatteryItem]) -> dict:
    """Implicitness check (utterance above its plain statement) and choice check, overall and per category."""
    choice = evaluate_choice(model, [ChoiceItem.lettered(i.id, i.utterance, i.options, i.answer) for i in items])
    scores = model.score([text for item in items for text in (item.utterance, item.meaning)]).reshape(-1, 2)
    per_item = [{**row, "category": item.category, "score_utterance": float(pair[0]), "score_meaning": float(pair[1]),
                 "implicit_above_plain": bool(pair[0] > pair[1]), "choice_correct": row["chosen"] == item.answer}
                for item, row, pair in zip(items, choice["per_item"], scores, strict=True)]
    rows = [{"implicitness_accuracy": r["implicit_above_plain"], "choice_accuracy": r["choice_correct"]} for r in per_item]
    return {"items": len(items), "implicitness_accuracy": float(np.mean([r["implicit_above_plain"] for r in per_item])),
            "choice_accuracy": choice["accuracy"],
            "per_category": _by_category(rows, [item.category for item in items],
                                         ("implicitness_accuracy", "choice_accuracy")),
            "per_item": per_item}


def evaluate_graded(model, texts: Sequence[str], ratings: Sequence[float], n_resamples: int = 1000,
                    seed: int = 0) -> dict:
    """Spearman ρ between the model's implicitness scores and external graded ratings, with a bootstrap CI."""
    from pragmeter.metrics.correlation import spearman_with_ci
    from pragmeter.metrics.intervals import BOOTSTRAP_SIGNATURE

    scores = model.score(list(texts))
    return {**spearman_with_ci(scores, ratings, n_resamples, seed),
            "bootstrap": BOOTSTRAP_SIGNATURE.format(n=n_resamples, seed=seed),
            "mean_score": float(np.mean(scores)), "scores": [float(s) for s in scores]}


DATA_DIR = Path(__file__).with_name("ood_data")  # the packaged development sets
DEVELOPMENT_SETS = {"check_rank": "check_ranking.json", "dev_rank": "dev_ranking.json",
                    "check_choice": "check_choice.json", "dev_choice": "dev_choice.json", "battery": "dev_battery.json"}


def development_sentences() -> list[str]:
    """Every sentence of the packaged development sets (ranking sentences, choice references and options, battery
    utterances and options): training data must not contain them."""
    out = []
    for name, file in DEVELOPMENT_SETS.items():
        path = DATA_DIR / file
        if name.endswith("rank"):
            out += [s for group in load_ranking(path) for s in group.sentences]
        elif name.endswith("choice"):
            out += [s for item in load_choice(path) for s in (item.utterance, *item.readings)]
        else:
            out += [s for item in load_battery(path) for s in (item.utterance, *item.options)]
    return out


_STOP = frozenset("the and for you your with that this are was were have has had not but all can our out its it's i'm "
                  "just get got him her his she they them their there what when who will would could should about "
                  "been from into more some than then very too one any did does don't that's i've i'd you're "
                  "we're".split())
_WORD = re.compile(r"[a-z']+")


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words of three letters or more, without common function words (for near-copy checks)."""
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOP)


@functools.lru_cache(maxsize=1)
def _development_words() -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((t, content_words(t)) for t in dict.fromkeys(development_sentences()))


@functools.lru_cache(maxsize=1)
def _development_word_index() -> dict[str, tuple[int, ...]]:
    """Content word -> the positions in :func:`_development_words` of the sentences that hold it."""
    index: dict[str, list[int]] = {}
    for position, (_, words) in enumerate(_development_words()):
        for word in words:
            index.setdefault(word, []).append(position)
    return {word: tuple(positions) for word, positions in index.items()}


def close_development_sentence(text: str, threshold: float = 0.5) -> str | None:
    """A development-set sentence whose content words overlap ``text``'s by Jaccard >= ``threshold`` (a near copy
    that training data written for pragmeter must not contain), else None: the first such in the sets' order."""
    mine = content_words(text)
    if not mine:
        return None
    entries = _development_words()
    # With a positive threshold only sentences sharing a word can match: look at those alone (checking every text of
    # a written group against all ~1000 development sentences took seconds).
    index = _development_word_index()
    candidates = (sorted({p for word in mine for p in index.get(word, ())}) if threshold > 0
                  else range(len(entries)))
    for position in candidates:
        sentence, words = entries[position]
        if words and len(mine & words) / len(mine | words) >= threshold:
            return sentence
    return None


def evaluate_development_sets(model, digits: int = 3) -> dict:
    """The headline figures of the packaged development sets (``ood_data/``), as model selection reads them:
    mean Kendall τ of the ranking sets, accuracy of the choice sets (and of ``choice_from_groups`` on the dev ranking
    groups: ``group_choice`` in our harder form, ``paper_choice`` in the paper's user-study form), and the battery's two
    accuracies."""
    out = {}
    for name, file in DEVELOPMENT_SETS.items():
        path = DATA_DIR / file
        if name.endswith("rank"):
            groups = load_ranking(path)
            ranking = evaluate_ranking(model, groups)
            out[name] = round(ranking["kendall_tau"], digits)
            if name == "dev_rank":
                out["group_choice"] = round(evaluate_choice(model, choice_from_groups(groups))["accuracy"], digits)
                out["paper_choice"] = round(ranking["paper_choice_accuracy"], digits)
        elif name.endswith("choice"):
            out[name] = round(evaluate_choice(model, load_choice(path))["accuracy"], digits)
        else:
            result = evaluate_battery(model, load_battery(path))
            out["bat_imp"] = round(result["implicitness_accuracy"], digits)
            out["bat_choice"] = round(result["choice_accuracy"], digits)
    return out
