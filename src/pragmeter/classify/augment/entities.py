"""RNE (Ocampo et al. 2023, §4.4): replace a named entity found in the released entity list with another of
the same type. The paper picks the most similar one with FastText embeddings; offline we pick at random among
the entities of the same type with the same number of words and the same ending (so "jordanians" becomes
another plural demonym such as "zaireans"), else of the same type and length in words. Only MISC entities
(where the group names the paper mentions, muslims, jews, blacks, sit) and LOC entities are replaced: the
texts are lower-cased, and PER/ORG names from the automatic NER list match too many ordinary words."""

from __future__ import annotations

import random
import re
from functools import cached_property

from pragmeter.classify.augment.base import Augmenter, replace_span
from pragmeter.datasets.ishate import word_list

TYPES = ("MISC", "LOC")
_TOKEN = re.compile(r"[\w'&.-]+")


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
    def longest(self) -> int:
        return max(len(name.split()) for name in self.type_of)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of listed entities, longest match first (word n-grams looked up in a dict: a regex
        alternation of thousands of names is far slower). Cached: augmentation revisits each text per round."""
        if text not in self._spans:
            tokens = list(_TOKEN.finditer(text))
            lowered = [t.group(0).lower() for t in tokens]
            spans, i = [], 0
            while i < len(tokens):
                for n in range(min(self.longest, len(tokens) - i), 0, -1):
                    if " ".join(lowered[i:i + n]) in self.type_of:
                        spans.append((tokens[i].start(), tokens[i + n - 1].end()))
                        i += n - 1
                        break
                i += 1
            self._spans[text] = spans
        return self._spans[text]

    @cached_property
    def _spans(self) -> dict[str, list[tuple[int, int]]]:
        return {}

    def similar(self, found: str) -> list[str]:
        key = " ".join(found.split()).lower()
        if key not in self._similar:
            same_type = self.by_type[self.type_of[key]]
            words = len(key.split())
            shaped = [c for c in same_type if len(c.split()) == words]
            ending = [c for c in shaped if c.lower()[-3:] == key[-3:] and c.lower() != key]
            self._similar[key] = ending or shaped
        return self._similar[key]

    @cached_property
    def _similar(self) -> dict[str, list[str]]:
        return {}

    def augment(self, text: str, rng: random.Random) -> str | None:
        return replace_span(text, self.spans(text), self.similar, rng)
