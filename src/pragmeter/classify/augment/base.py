"""The augmenter interface and the phrase matching the word-list methods share."""

from __future__ import annotations

import os
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import ClassVar


def phrase_pattern(phrases: Iterable[str]) -> re.Pattern:
    """Whole-phrase, case-insensitive alternatives, longest first (so "white supremacy" beats "supremacy")."""
    ordered = sorted({p for p in phrases if p.strip()}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(p) for p in ordered) + r")(?![\w-])", re.IGNORECASE)


def match_case(replacement: str, original: str) -> str:
    """Keep the original's casing style (the task texts are mostly lower-cased)."""
    if original.islower():
        return replacement.lower()
    if original.isupper():
        return replacement.upper()
    return replacement


class Augmenter(ABC):
    """Makes a variant of a text that keeps its label; None when the method does not apply to it."""

    name: ClassVar[str]  # the --augment name (local-<paper abbreviation>)
    paper_method: ClassVar[str]  # the abbreviation in the paper (Table 3)

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = None if root is None else str(root)

    @abstractmethod
    def augment(self, text: str, rng: random.Random) -> str | None:
        ...

    def replace_one(self, text: str, pattern: re.Pattern, choices, rng: random.Random) -> str | None:
        """Replace one randomly chosen match of ``pattern`` with a different choice from ``choices(match)``."""
        return replace_span(text, [(m.start(), m.end()) for m in pattern.finditer(text)], choices, rng)


def replace_span(text: str, spans: list[tuple[int, int]], choices, rng: random.Random) -> str | None:
    """Replace one randomly chosen span of ``text`` with a different choice from ``choices(span text)``."""
    spans = list(spans)
    rng.shuffle(spans)
    for start, end in spans:
        found = text[start:end]
        options = [c for c in choices(found) if c.lower() != found.lower()]
        if options:
            return text[:start] + match_case(rng.choice(options), found) + text[end:]
    return None
