"""AAV (Ocampo et al. 2023, §4.4): add a speculative adverb (released list: certainly, likely, clearly…) to a
verb. Without a POS tagger offline, verbs are found after an auxiliary ("are" -> "are clearly") or between a
subject pronoun and the next word ("they hate" -> "they clearly hate")."""

from __future__ import annotations

import random
import re
from functools import cached_property

from pragmeter.classify.augment.base import Augmenter
from pragmeter.datasets.ishate import word_list

_AUXILIARIES = ("is", "are", "was", "were", "will", "would", "can", "could", "should", "must", "do", "does",
                "did", "has", "have", "had", "might", "may", "shall")
_PRONOUNS = ("i", "you", "he", "she", "it", "we", "they", "who", "people")
_SLOT = re.compile(r"(?<![\w-])(" + "|".join(_AUXILIARIES + _PRONOUNS) + r")(?![\w'-])(\s+)(?=[a-z])",
                   re.IGNORECASE)


class SpeculativeAdverbInsertion(Augmenter):
    name = "local-aav"
    paper_method = "AAV"

    @cached_property
    def adverbs(self) -> list[str]:
        return list(word_list("speculative", self.root))

    def augment(self, text: str, rng: random.Random) -> str | None:
        slots = list(_SLOT.finditer(text))
        if not slots:
            return None
        slot = rng.choice(slots)
        adverb = rng.choice(self.adverbs)
        return f"{text[:slot.end()]}{adverb}{slot.group(2)}{text[slot.end():]}"
