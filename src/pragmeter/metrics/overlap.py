"""Word overlap between two texts: the copy and near-copy checks of the generation pipelines and corpus readers.

Words are lower-cased runs of letters, digits and apostrophes; the Jaccard index of two texts is the size of their
word sets' intersection over their union (0 for two texts without words).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9']+")
# Function words do not count as content when checking what a rewrite keeps of (or adds to) its input.
FUNCTION_WORDS = frozenset("""a an the i you he she it we they me him her us them my your his its our their this that
these those is am are was were be been being do does did have has had will would can could shall should may might must
to of in on at for with by from up about into over after so and or but if not no yes just very too please""".split())


def words(text: str) -> set[str]:
    """The text's distinct lower-cased words."""
    return set(_WORD.findall(text.lower()))


def word_jaccard(a: str, b: str) -> float:
    """Jaccard index of the two texts' word sets, in [0, 1]."""
    left, right = words(a), words(b)
    return len(left & right) / max(len(left | right), 1)
