"""RSA (Ocampo et al. 2023, §4.4): replace a scalar adverb with another from the released scalarity list
(an adverb before its head is replaced from the BEFORE list, one after it from the AFTER list when possible)."""

from __future__ import annotations

import random
from functools import cached_property

from pragmeter.classify.augment.base import Augmenter, phrase_pattern
from pragmeter.datasets.ishate import word_list


class ScalarAdverbReplacement(Augmenter):
    name = "local-rsa"
    paper_method = "RSA"

    @cached_property
    def lists(self) -> dict[str, list[str]]:
        return word_list("scalarity", self.root)

    @cached_property
    def pattern(self):
        return phrase_pattern(set(self.lists["BEFORE"]) | set(self.lists["AFTER"]))

    def augment(self, text: str, rng: random.Random) -> str | None:
        before, after = self.lists["BEFORE"], self.lists["AFTER"]
        # An adverb in BEFORE is swapped for another BEFORE adverb (they modify what follows); else AFTER.
        return self.replace_one(text, self.pattern, lambda found: before if found.lower() in before else after, rng)
