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
