"""EDA (Wei & Zou 2019; Ocampo et al. 2023, §4.4), the operations that need no WordNet: random swap of two
words, or random deletion of each word with probability ``p`` (one operation per sentence, as in the paper)."""

from __future__ import annotations

import random

from pragmeter.classify.augment.base import Augmenter


class EasyDataAugmentation(Augmenter):
    name = "local-eda"
    paper_method = "EDA (swap, delete)"
    alpha = 0.1  # share of words changed, as in EDA's default

    def augment(self, text: str, rng: random.Random) -> str | None:
        words = text.split()
        if len(words) < 2:
            return None
        if rng.random() < 0.5:
            for _ in range(max(1, int(self.alpha * len(words)))):
                i, j = rng.sample(range(len(words)), 2)
                words[i], words[j] = words[j], words[i]
        else:
            kept = [w for w in words if rng.random() > self.alpha]
            if not kept or len(kept) == len(words):  # delete at least one word, never all of them
                kept = list(words)
                del kept[rng.randrange(len(kept))]
            words = kept
        new = " ".join(words)
        return new if new != " ".join(text.split()) else None
