"""First-token multiple choice: options are scored by the probability of the alternatives that begin them."""

from __future__ import annotations

import math

import pytest

from pragmeter.eval import registry
from pragmeter.llm.choice import best_option, check_options, option_logprobs

INLI = {"implied": "Implicature", "explicit": "Explicature", "neutral": "Neutral", "contradiction": "Contradiction"}


def test_alternatives_count_for_the_option_they_begin():
    scores = option_logprobs([(" Imp", math.log(0.5)), ("Neutral", math.log(0.2)), ("The", math.log(0.2)),
                              ("neutral", math.log(0.05)), ("Ex", math.log(0.01))], INLI)
    assert scores["implied"] == pytest.approx(math.log(0.5))
    assert scores["neutral"] == pytest.approx(math.log(0.25))  # case and spacing variants add up
    assert scores["explicit"] == pytest.approx(math.log(0.01))
    assert scores["contradiction"] == -math.inf
    assert best_option(scores) == "implied"


def test_summed_variants_can_beat_a_single_likelier_token():
    scores = option_logprobs([("Imp", math.log(0.4)), ("Neutral", math.log(0.3)), (" neutral", math.log(0.25))], INLI)
    assert best_option(scores) == "neutral"


def test_ambiguous_and_unrelated_tokens_count_for_nothing():
    options = {"non-hateful": "non-hateful", "explicit": "explicit", "implicit": "implicit", "x": "nonsense"}
    scores = option_logprobs([("non", -0.1), ("“", -0.2), ("Label", -0.3)], options)
    assert all(value == -math.inf for value in scores.values())
    assert best_option(scores) is None  # never guessed into an option


def test_letters_match_only_themselves():
    options = {letter: letter for letter in "ABCDE"}
    scores = option_logprobs([("An", -0.1), (" B", -1.0), ("B.", -2.0), ("**C", -3.0)], options)
    assert scores["A"] == -math.inf
    assert scores["B"] == pytest.approx(math.log(math.exp(-1.0) + math.exp(-2.0)))
    assert best_option(scores) == "B"


def test_options_that_begin_alike_are_refused():
    with pytest.raises(ValueError, match="use letters"):
        check_options({"non-hateful": "non-hateful", "non-subtle": "non-subtle", "subtle": "subtle"})


@pytest.mark.parametrize("name", [n for n, cls in sorted(registry.all_tasks().items()) if "mode" in cls.arguments])
def test_every_logprob_task_has_distinguishable_options(name):
    task = registry.all_tasks()[name]({"mode": "logprob"})
    assert task.max_tokens == 1 and task.top_logprobs == 20
    for item in task.items()[:20]:
        options = task.choices(item)
        check_options(options)
        assert task.gold(item) in options
        # the reference answer is the gold option's text, and the first token of it scores the gold option
        assert best_option(option_logprobs([(task.reference_answer(item)[:3], -0.1)], options)) == task.gold(item)
