"""A word-list baseline for the OOD checks: how far counting hedges gets without any model.

Implicitness score = number of hedge markers in the sentence (modal verbs, softeners, question marks, …).
Pragmatic distance = 1 − Jaccard overlap of the two sentences' lower-cased word sets, i.e. pure surface
similarity: the choice and battery sets are written so that this misleads.
It has ImpScore's ``score`` / ``pragmatic_distance`` / ``signature`` interface so the same evaluation code runs it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

# Multi-word markers are matched as whole phrases; "?" and "..." count once per occurrence.
HEDGES: tuple[str, ...] = (
    "maybe", "perhaps", "possibly", "probably", "could", "might", "would", "may", "seems", "seem",
    "i think", "i guess", "i suppose", "i'm afraid", "a bit", "a little", "sort of", "kind of", "somewhat",
    "rather", "quite", "not exactly", "not really", "just", "if you", "by any chance", "?", "...",
)
_WORD = re.compile(r"[a-z0-9']+")


def _padded_words(text: str) -> str:
    """Lower-cased words with plain apostrophes and dots, space-padded, so a hedge matches whole words only."""
    return " " + " ".join(text.lower().replace("’", "'").replace("…", "...").split()) + " "


def hedge_count(text: str) -> int:
    padded = _padded_words(text)
    count = 0
    for hedge in HEDGES:
        if hedge[0].isalpha():
            count += len(re.findall(rf"(?<![a-z']){re.escape(hedge)}(?![a-z'])", padded))
        else:
            count += padded.count(hedge)
    return count


class HedgingBaseline:
    """Hedge-word count as implicitness, word-overlap distance as pragmatic distance."""

    name = "hedging"

    def score(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([hedge_count(text) for text in texts], dtype=float)

    def pragmatic_distance(self, a: str | Sequence[str], b: str | Sequence[str]) -> float | np.ndarray:
        if isinstance(a, str) and isinstance(b, str):
            return float(self.pragmatic_distance([a], [b])[0])
        out = []
        for left, right in zip(a, b, strict=True):
            x, y = set(_WORD.findall(left.lower())), set(_WORD.findall(right.lower()))
            out.append(1.0 - len(x & y) / len(x | y) if x | y else 0.0)
        return np.array(out)

    def signature(self) -> str:
        return f"baseline:hedging|markers={len(HEDGES)}|distance=1-jaccard(words)"
