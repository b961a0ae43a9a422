"""Rule-based negation of Circa's declarative questions ("I like Korean food ." -> "I do not like Korean food.").

Used to write the explicit side of Circa's indirect "No" answers. It covers the common shapes (auxiliary + not,
do-support for I/we/you/they, does-support for a third-person present verb); anything else returns None and the
row is dropped and counted rather than written wrong.
"""

from __future__ import annotations

import re

AUXILIARIES = {"am", "is", "are", "was", "were", "will", "would", "can", "could", "should", "shall", "must",
               "might", "may", "do", "does", "did", "'m", "'re", "'s"}
CONTRACTED = re.compile(r"^(i'm|you're|we're|they're|it's|that's|there's|he's|she's|i'll|we'll|you'll|they'll)$", re.I)
PLURAL_SUBJECTS = {"i", "we", "you", "they"}
# Words after have/has/had that mark a perfect tense ("I have heard" -> "have not"), else do-support ("do not have").
PERFECT_MARKERS = {"been", "got", "gotten", "heard", "read", "had", "made", "met", "seen", "done", "left", "kept",
                   "found", "lost", "known", "taken", "given", "written", "eaten", "driven", "flown", "gone", "come",
                   "begun", "bought", "brought", "thought", "told", "sold", "spent", "won", "ever", "never", "already",
                   "just", "always", "recently", "finally", "seen"}


def tidy(sentence: str) -> str:
    """Fix tokenised spacing (' .', ' ,') and capitalise the first letter."""
    text = re.sub(r"\s+([.,!?;:])", r"\1", " ".join(sentence.split()))
    text = re.sub(r"\s+n't\b", "n't", text)
    return text[:1].upper() + text[1:] if text else text


def third_person_base(verb: str) -> str | None:
    lowered = verb.lower()
    if lowered == "has":
        return "have"
    if not lowered.endswith("s") or lowered.endswith("ss"):
        return None
    if lowered.endswith("ies"):
        return verb[:-3] + "y"
    if re.search(r"(ches|shes|sses|xes|oes|zes)$", lowered):
        return verb[:-2]
    return verb[:-1]


def negate(sentence: str) -> str | None:
    """Negated form of a simple declarative sentence, or None when no rule applies safely."""
    tokens = tidy(sentence).rstrip(".!").split()
    if len(tokens) < 2:
        return None
    for index, token in enumerate(tokens[:5]):
        lowered = token.lower()
        if lowered in AUXILIARIES:
            return tidy(" ".join(tokens[: index + 1] + ["not"] + tokens[index + 1 :]) + ".")
        if CONTRACTED.match(lowered):
            return tidy(" ".join(tokens[: index + 1] + ["not"] + tokens[index + 1 :]) + ".")
        if lowered in {"have", "has", "had"}:
            following = tokens[index + 1] if index + 1 < len(tokens) else ""
            if following.lower() in PERFECT_MARKERS or following.lower().endswith("ed"):
                return tidy(" ".join(tokens[: index + 1] + ["not"] + tokens[index + 1 :]) + ".")
            support = {"have": "do", "has": "does", "had": "did"}[lowered]
            return tidy(" ".join(tokens[:index] + [support, "not", "have"] + tokens[index + 1 :]) + ".")
    subject, verb = tokens[0].lower(), tokens[1]
    if subject in PLURAL_SUBJECTS and not verb.lower().endswith("ed"):
        return tidy(" ".join([tokens[0], "do", "not"] + tokens[1:]) + ".")
    if subject in {"he", "she", "it"}:
        base = third_person_base(verb)
        if base:
            return tidy(" ".join([tokens[0], "does", "not", base] + tokens[2:]) + ".")
    return None
