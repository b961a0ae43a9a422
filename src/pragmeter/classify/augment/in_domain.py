"""RI (Ocampo et al. 2023, §4.4): replace an in-domain expression (released special_tokens list, e.g.
migrants -> foreigners) with one of its listed alternatives."""

from __future__ import annotations

import random
from functools import cached_property

from pragmeter.classify.augment.base import Augmenter, phrase_pattern
from pragmeter.datasets.ishate import word_list


class InDomainReplacement(Augmenter):
    name = "local-ri"
    paper_method = "RI"

    @cached_property
    def table(self) -> dict[str, list[str]]:
        return {key.lower(): values for key, values in word_list("special_tokens", self.root).items()}

    @cached_property
    def pattern(self):
        return phrase_pattern(self.table)

    def augment(self, text: str, rng: random.Random) -> str | None:
        return self.replace_one(text, self.pattern, lambda found: self.table[found.lower()], rng)
