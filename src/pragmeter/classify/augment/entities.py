"""RNE (Ocampo et al. 2023, §4.4): replace a named entity found in the released entity list with another of
the same type. The paper picks the most similar one with FastText embeddings; offline we pick at random among
the entities of the same type with the same number of words and the same ending (so "jordanians" becomes
another plural demonym such as "zaireans"), else of the same type and length in words. Only MISC entities
(where the group names the paper mentions, muslims, jews, blacks, sit) and LOC entities are replaced: the
texts are lower-cased, and PER/ORG names from the automatic NER list match too many ordinary words."""

from __future__ import annotations

import random
from functools import cached_property

from pragmeter.classify.augment.base import Augmenter, phrase_pattern, word_list

TYPES = ("MISC", "LOC")


class EntityReplacement(Augmenter):
    name = "local-rne"
    paper_method = "RNE"

    @cached_property
    def by_type(self) -> dict[str, list[str]]:
        lists = word_list("entities_list", self.root)
        return {kind: sorted(set(lists[kind])) for kind in TYPES}

    @cached_property
    def type_of(self) -> dict[str, str]:
        # The list comes from automatic NER and holds noise ("The", "Let", "CAN"); entities that are also
        # ordinary words, and short ones ("BC", "US"), would match those words in lower-cased text.
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        ordinary = ENGLISH_STOP_WORDS | {"let"}
        return {name.lower(): kind for kind, names in self.by_type.items() for name in names
                if len(name) >= 4 and name.lower() not in ordinary}

    @cached_property
    def pattern(self):
        return phrase_pattern(self.type_of)

    def similar(self, found: str) -> list[str]:
        same_type = self.by_type[self.type_of[found.lower()]]
        words = len(found.split())
        shaped = [c for c in same_type if len(c.split()) == words]
        ending = [c for c in shaped if c.lower()[-3:] == found.lower()[-3:]]
        return [c for c in ending if c.lower() != found.lower()] and ending or shaped

    def augment(self, text: str, rng: random.Random) -> str | None:
        return self.replace_one(text, self.pattern, self.similar, rng)
