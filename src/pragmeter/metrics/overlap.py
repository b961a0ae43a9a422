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


def max_word_jaccard(texts: list[str], references: list[str], chunk: int | None = None,
                     cells: int = 20_000_000):
    """For each text, its highest :func:`word_jaccard` with any reference and that reference's index (two numpy
    arrays; 0 and -1 without references). Sparse word-set products, so tens of thousands of texts against
    thousands of references take seconds. Texts are compared ``chunk`` at a time (default: as many as keep each dense
    block within ``cells`` entries, so memory stays flat however many references there are)."""
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
    chunk = chunk or max(1, cells // len(references))
    y_t = y.T  # a CSC view of the references, transposed once
    nx, ny = np.asarray(x.sum(1), dtype=np.float64).ravel(), np.asarray(y.sum(1), dtype=np.float64).ravel()
    for start in range(0, len(texts), chunk):
        shared = (x[start:start + chunk] @ y_t).toarray().astype(np.float64)  # exact ratios at a threshold
        union = nx[start:start + chunk, None] + ny[None, :]
        union -= shared
        np.maximum(union, 1.0, out=union)
        shared /= union
        best[start:start + chunk], where[start:start + chunk] = shared.max(axis=1), shared.argmax(axis=1)
    return best, where
