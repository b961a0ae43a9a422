"""Multiple choice by log-probabilities over a chat API (lm-evaluation-harness's ``multiple_choice``, first-token
form): the model is asked for one token with its ``top_logprobs``; each answer option is scored by the total
probability of the alternatives that begin it, and the best-scored option is the answer.

A chat API returns no log-probability for a given continuation, only the likeliest next tokens, so an option
is recognised by its first token: an alternative counts for an option when, trimmed of spaces, quotes and
punctuation and lower-cased, it is a non-empty prefix of that option's answer text and of no other (``"Imp"``
and ``" implic"`` count for ``Implicature``; ``"The"`` counts for nothing). Options must therefore differ in
their first character; tasks whose label words do not (``non-hateful`` / ``non-subtle``) answer with letters.
An answer is invalid only when none of the K alternatives begins any option.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

TOP_LOGPROBS = 20  # alternatives asked for (the OpenAI API's maximum)
SIGNATURE = f"first-token|top_logprobs={TOP_LOGPROBS}|option=logsumexp(prefix matches)|argmax"
_TRIM = " \t\r\n\"'`“”‘’*_.,:;!?()[]{}<>"


def normalize(text: str) -> str:
    return text.strip(_TRIM).lower()


def check_options(options: dict[str, str]) -> None:
    """Options (label -> answer text) must be told apart by their first character; ValueError otherwise."""
    firsts: dict[str, str] = {}
    for label, answer in options.items():
        key = normalize(answer)[:1]
        if not key:
            raise ValueError(f"option {label!r} has an empty answer text")
        if key in firsts:
            raise ValueError(f"options {firsts[key]!r} and {label!r} start alike ({key!r}): use letters")
        firsts[key] = label


def option_logprobs(alternatives: Iterable[tuple[str, float]], options: dict[str, str]) -> dict[str, float]:
    """log P(the answer begins option) for every option found among ``alternatives`` (-inf where none is)."""
    answers = {label: normalize(answer) for label, answer in options.items()}
    found: dict[str, list[float]] = {label: [] for label in options}
    for token, logprob in alternatives:
        piece = normalize(token)
        if not piece:
            continue
        matches = [label for label, answer in answers.items() if answer.startswith(piece)]
        if len(matches) == 1:
            found[matches[0]].append(logprob)
    return {label: _logsumexp(values) for label, values in found.items()}


def best_option(scores: dict[str, float]) -> str | None:
    """The best-scored option (the first in option order on a tie), or None when no option was found."""
    label = max(scores, key=scores.__getitem__, default=None)
    return None if label is None or scores[label] == -math.inf else label


def _logsumexp(values: list[float]) -> float:
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))
