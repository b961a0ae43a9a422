"""PETs (Gavidia et al., LREC 2022): potentially euphemistic terms in context, with each term's real meaning.

``Euphemism_Corpus.csv``: keyword, edited_text (the term marked ``<...>`` in a passage of a few sentences),
is_euph (1 = euphemistic use), category. ``PETS-284-variations.csv``: euphemism (each inflected variation),
real_meaning, category. A pair is the sentence holding the marked euphemism -> the same sentence with the term
replaced by its real meaning ('at <a certain age>' -> 'at old'; the grammar is not always mended). Literal uses
(is_euph 0) pair with nothing. A term with several meanings takes the one of the corpus row's category.
"""

from __future__ import annotations

import re
from collections import defaultdict

from pragmeter.datasets.pairs.base import (DEFAULT_CAP, SourcePairs, match_case, origin, read_delimited, text)

NAME = "pets_euphemisms"
LICENCE = "none stated"
CORPUS = f"{NAME}/Euphemism_Corpus.csv"
MEANINGS = f"{NAME}/PETS-284-variations.csv"
MARK = re.compile(r"<([^<>]+)>")
# The splitter misses sentence ends in forum text ("@@71921041 Public Transport ..."): such a run-on stays out.
MAX_WORDS = 60
# A sentence ends at . ! ? before a capital (or the mark); not before a digit: "on Nov. 13" goes on
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“‘(\[]?[A-Z<])")


def _term(value: str) -> str:
    return " ".join(value.replace('"', " ").lower().split())


def _sentence(passage: str) -> str | None:
    """The sentence of ``passage`` holding the (single) mark."""
    for sentence in SENTENCE_END.split(passage):
        if MARK.search(sentence):
            return sentence.strip()
    return None


def pets_euphemisms(root=None, cap: int | None = DEFAULT_CAP) -> SourcePairs:
    out = SourcePairs(NAME, "substitution", "PETs: sentence with a euphemism -> the sentence with the term's real "
                      "meaning substituted", licence=LICENCE, cap=cap)
    meanings: dict[str, dict[str, str]] = defaultdict(dict)  # term -> category -> real meaning
    for row in read_delimited(MEANINGS, root, ("euphemism", "real_meaning", "category")):
        term, meaning = _term(row["euphemism"]), text(row["real_meaning"])
        if term and meaning:
            meanings[term].setdefault(text(row["category"]), meaning)
    for index, row in enumerate(read_delimited(CORPUS, root, ("keyword", "edited_text", "is_euph", "category"))):
        if (row["is_euph"] or "").strip() != "1":
            out.skipped["literal use of the term (is_euph 0)"] += 1
            continue
        sentence = _sentence(text(row["edited_text"]))
        if sentence is None or len(MARK.findall(sentence)) != 1:
            out.skipped["no single marked term"] += 1
            continue
        if len(sentence.split()) > MAX_WORDS:
            out.skipped[f"sentence over {MAX_WORDS} words"] += 1
            continue
        marked = MARK.search(sentence).group(1)
        options = meanings.get(_term(marked)) or meanings.get(_term(row["keyword"]))
        if not options:
            out.skipped["term not in PETS-284-variations"] += 1
            continue
        meaning = options.get(text(row["category"])) if len(set(options.values())) > 1 else next(iter(options.values()))
        if meaning is None:
            out.skipped["several real meanings, none of the row's category"] += 1
            continue
        implicit = text(MARK.sub(lambda m: m.group(1), sentence))
        explicit = text(MARK.sub(lambda m: meaning, sentence))
        out.add(implicit, match_case(implicit, explicit), origin(CORPUS, index))
    return out
