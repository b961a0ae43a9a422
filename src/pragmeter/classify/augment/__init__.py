"""Offline implementations of ISHate's augmentation methods (Ocampo et al., EACL 2023, §4.4), one module each,
and how they grow a training split (minority class only, never dev or test)."""

from __future__ import annotations

import math
import os
import random
from collections import Counter

from pragmeter.classify.augment.base import Augmenter
from pragmeter.classify.augment.eda import EasyDataAugmentation
from pragmeter.classify.augment.entities import EntityReplacement
from pragmeter.classify.augment.in_domain import InDomainReplacement
from pragmeter.classify.augment.scalar_adverbs import ScalarAdverbReplacement
from pragmeter.classify.augment.speculative_adverbs import SpeculativeAdverbInsertion
from pragmeter.classify.examples import Examples

AUGMENTERS: dict[str, type[Augmenter]] = {cls.name: cls for cls in (
    ScalarAdverbReplacement, SpeculativeAdverbInsertion, InDomainReplacement, EntityReplacement,
    EasyDataAugmentation)}


def augment_minority(train: Examples, augmenter: Augmenter, label: str, balance_with: str, seed: int = 0,
                     max_tries: int = 4) -> Examples:
    """New examples made from the ``label`` examples of ``train`` (labels kept), as many as balance ``label``
    with ``balance_with`` (the paper balances implicit with explicit HS, subtle with non-subtle HS). Variants
    equal to an existing text are dropped; texts the method does not apply to give nothing."""
    rng = random.Random(f"{augmenter.name}-{seed}")
    counts = Counter(train.labels)
    target = max(0, counts[balance_with] - counts[label])
    sources = [i for i, gold in enumerate(train.labels) if gold == label]
    if not sources or not target:
        return train.subset([])
    rounds = max(1, math.ceil(target / len(sources)))
    seen = set(train.texts)
    made: list[int] = []
    texts: list[str] = []
    for _ in range(rounds * max_tries):
        inapplicable = set()
        for i in sources:
            new = augmenter.augment(train.texts[i], rng)
            if new is None:
                inapplicable.add(i)  # the method found nothing to change: later rounds would not either
            elif new not in seen:
                seen.add(new)
                made.append(i)
                texts.append(new)
                if len(texts) >= target:
                    break
        sources = [i for i in sources if i not in inapplicable]
        if len(texts) >= target or not sources:
            break
    extra = train.subset(made)
    extra.texts = texts
    return extra


def make_augmenter(name: str, root: str | os.PathLike | None = None) -> Augmenter:
    return AUGMENTERS[name](root)


__all__ = ["AUGMENTERS", "Augmenter", "augment_minority", "make_augmenter"]
