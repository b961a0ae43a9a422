"""Word overlap: the one implementation behind the copy checks of generated rewrites and LLM-written pairs."""
from pragmeter.metrics.overlap import FUNCTION_WORDS, word_jaccard, words


def test_words_are_lower_cased_and_keep_digits_and_apostrophes():
    assert words("Don't pay £50 NOW, don't!") == {"don't", "pay", "50", "now"}


def test_jaccard_of_identical_disjoint_and_overlapping_texts():
    assert word_jaccard("Close the window.", "close THE window") == 1.0
    assert word_jaccard("Close the window.", "Open a door") == 0.0
    assert word_jaccard("close the window", "open the window") == 2 / 4
    assert word_jaccard("", "...") == 0.0  # no words: no overlap, no division by zero


def test_function_words_are_not_content():
    assert words("Could you open the window, please?") - FUNCTION_WORDS == {"open", "window"}
    assert "window" not in FUNCTION_WORDS and "please" in FUNCTION_WORDS


def test_max_word_jaccard_is_the_best_pairwise_jaccard():
    import random

    import numpy as np

    from pragmeter.metrics.overlap import max_word_jaccard

    rng = random.Random(0)
    vocabulary = "close open the a window door please now later it".split()
    texts = [" ".join(rng.sample(vocabulary, rng.randint(0, 5))) for _ in range(40)]
    references = [" ".join(rng.sample(vocabulary, rng.randint(1, 5))) for _ in range(25)]
    best, where = max_word_jaccard(texts, references, chunk=7)  # several chunks
    expected = [max(word_jaccard(t, r) for r in references) for t in texts]
    assert np.allclose(best, expected)
    assert all(abs(word_jaccard(t, references[i]) - b) < 1e-6 for t, i, b in zip(texts, where, best))
    assert list(max_word_jaccard(texts[:2], [])[1]) == [-1, -1]
    bounded, _ = max_word_jaccard(texts, references, cells=3 * len(references))  # blocks of 3 texts by the budget
    assert list(bounded) == list(best) and max(bounded) <= 1.0
    assert list(best == [word_jaccard(t, references[i]) for t, i in zip(texts, where)]).count(False) == 0  # exact
