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


def max_word_jaccard(texts: list[str], references: list[str], chunk: int = 2000):
    """For each text, its highest :func:`word_jaccard` with any reference and that reference's index (two numpy
    arrays; 0 and -1 without references). Sparse word-set products, so tens of thousands of texts against
    thousands of references take seconds."""
    import numpy as np
    from scipy.sparse import csr_matrix

    vocabulary: dict[str, int] = {}
    rows = [[[vocabulary.setdefault(w, len(vocabulary)) for w in words(t)] for t in part] for part in (texts, references)]

    def matrix(columns: list[list[int]]) -> csr_matrix:
        indptr = np.cumsum([0] + [len(c) for c in columns])
        flat = np.fromiter((i for c in columns for i in c), dtype=np.int64, count=int(indptr[-1]))
        return csr_matrix((np.ones(len(flat), np.float32), flat, indptr), shape=(len(columns), len(vocabulary)))

    x, y = matrix(rows[0]), matrix(rows[1])
    best, where = np.zeros(len(texts)), np.full(len(texts), -1, dtype=np.int64)
    if not references:
        return best, where
    nx, ny = np.asarray(x.sum(1)).ravel(), np.asarray(y.sum(1)).ravel()
    for start in range(0, len(texts), chunk):
        shared = (x[start:start + chunk] @ y.T).toarray()
        jaccard = shared / np.maximum(nx[start:start + chunk, None] + ny[None, :] - shared, 1.0)
        best[start:start + chunk], where[start:start + chunk] = jaccard.max(axis=1), jaccard.argmax(axis=1)
    return best, where
