"""IMPLI (Stowe et al., ACL 2022): idiomatic and metaphoric sentences with literal paraphrases.

Files have no header: context, hypothesis[, score]. ``*_e.tsv`` rows entail: figurative context -> literal
hypothesis, our pairs. Hand-written files (``manual_e``, ``replacement_*``) come first under a cap; the
``fig_context_*`` files are automatic dictionary-definition substitutions (silver). Non-entailing rows whose
context is a figurative anchor (``adversarial_definition_*``, ``manual_ne``, ``manual_antonyms_ne``) become that
anchor's hard negatives; ``lit_context_*`` rows have a literal context, so they pair with nothing.
"""

from __future__ import annotations

import re

from pragmeter.datasets.pairs.base import (DEFAULT_CAP, SourcePairs, match_case, origin, read_delimited,
                                           text)
from pragmeter.text import normalise

NAME = "impli"
LICENCE = "Apache-2.0"
GOLD = ("idioms/manual_e.tsv", "metaphors/manual_e.tsv", "metaphors/replacement_cc_e.tsv",
        "metaphors/replacement_tsvetkov_e.tsv")
SILVER = ("idioms/fig_context_magpie_e.tsv", "idioms/fig_context_pie_e.tsv", "idioms/fig_context_semeval_e.tsv")
HARD_NEGATIVES = ("idioms/adversarial_definition_ne_magpie.tsv", "idioms/adversarial_definition_ne_pie.tsv",
                  "idioms/adversarial_definition_ne_semeval.tsv", "idioms/manual_ne.tsv",
                  "idioms/manual_antonyms_ne.tsv", "metaphors/manual_ne.tsv")
LITERAL_CONTEXT = ("idioms/lit_context_magpie_ne.tsv", "idioms/lit_context_pie_ne.tsv",
                   "idioms/lit_context_semeval_ne.tsv")
ENCODINGS = {"metaphors/replacement_tsvetkov_e.tsv": "cp1252"}  # the one file not in UTF-8 upstream
# UTF-8 read as Latin-1/MacRoman upstream ("í‰äóñ" for a dash): such rows teach nothing but the damage
MOJIBAKE = re.compile("í‰|â€|Ã[\u0080-\u00bf]")


def _rows(relative: str, root) -> list[list[str]]:
    return read_delimited(f"{NAME}/{relative}", root, delimiter="\t", header=False, fields=2,
                          encoding=ENCODINGS.get(relative, "utf-8-sig"))


def impli(root=None, cap: int | None = DEFAULT_CAP) -> SourcePairs:
    out = SourcePairs(NAME, "original", "IMPLI: idiom/metaphor sentence -> literal paraphrase (entailing rows); "
                      "non-entailing rows on the same sentence are hard negatives", licence=LICENCE, cap=cap)
    entailing: list[tuple[str, str, str, int]] = []  # (context, hypothesis, origin, tier)
    for tier, files in ((0, GOLD), (1, SILVER)):
        for relative in files:
            for index, row in enumerate(_rows(relative, root)):
                context, hypothesis = text(row[0]), text(row[1])
                if not context or not hypothesis:
                    out.skipped["empty field"] += 1
                elif MOJIBAKE.search(context + hypothesis):
                    out.skipped["mojibake (mis-decoded UTF-8)"] += 1
                else:
                    entailing.append((context, match_case(context, hypothesis),
                                      origin(f"{NAME}/{relative}", index), tier))
    anchors = {normalise(context) for context, *_ in entailing}
    negatives: dict[str, list[str]] = {}
    for relative in HARD_NEGATIVES:
        for row in _rows(relative, root):
            context, hypothesis = text(row[0]), text(row[1])
            if normalise(context) not in anchors:
                out.skipped["non-entailing row whose sentence has no entailing row"] += 1
            elif hypothesis and not MOJIBAKE.search(hypothesis):
                negatives.setdefault(normalise(context), []).append(match_case(context, hypothesis))
    for relative in LITERAL_CONTEXT:
        out.skipped["non-entailing row with a literal context (no figurative anchor)"] += len(_rows(relative, root))
    groups: dict[str, str] = {}
    used: dict[str, int] = {}
    for context, hypothesis, where, tier in entailing:
        key = normalise(context)
        group = groups.setdefault(key, f"{NAME}:{len(groups)}")
        options = negatives.get(key, [])
        hard = options[used.get(key, 0) % len(options)] if options else None  # spread a sentence's negatives
        used[key] = used.get(key, 0) + 1
        out.add(context, hypothesis, where, group=group, hard_negative=hard, tier=tier)
    return out
