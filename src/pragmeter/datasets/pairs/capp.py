"""CAPP (Som et al., ACL 2024 Findings): direct, often rude dialogue utterances with polite paraphrases.

``Dataset/{train,test}.csv``: Context, Utterance, Paraphrase. The paraphrase is the indirect side ('Move.' ->
'Could you please move?'), so the pair is Paraphrase (implicit) -> Utterance (explicit); the context is not needed
for that relation and is left out. The paraphrases read as machine-written and many merely soften words, so a pair
is kept only when the paraphrase is indirect (a hedge or indirect-request marker that the utterance lacks), the
utterance is a full statement (3+ words: 'Power.' -> 'I would appreciate it if you could grant me the authority...'
makes the paraphrase the more explicit one) and the paraphrase adds no new content (at most 3x the words + 6).
CC BY-NC-SA 4.0: a model trained on these pairs inherits the non-commercial, share-alike terms.
"""

from __future__ import annotations

import re

from pragmeter.datasets.pairs.base import DEFAULT_CAP, SourcePairs, origin, read_delimited, text

NAME = "capp"
LICENCE = "CC BY-NC-SA 4.0"
FILES = (f"{NAME}/Dataset/train.csv", f"{NAME}/Dataset/test.csv")
INDIRECT = re.compile(r"\b(could|would|may|might|perhaps|possibly|maybe|wonder|wondering|(would|do) you mind|"
                      r"kindly|appreciate|curious|seems?|rather|if you|is it possible|i think|i believe|i feel|"
                      r"i'm afraid|it appears)\b", re.IGNORECASE)


def _unquote(value: str) -> str:
    return text(value).strip('"').strip()


def capp(root=None, cap: int | None = DEFAULT_CAP) -> SourcePairs:
    out = SourcePairs(NAME, "original", "CAPP: polite indirect paraphrase -> direct utterance (indirect "
                      "paraphrases of full utterances only)", licence=LICENCE, cap=cap)
    for relative in FILES:
        for index, row in enumerate(read_delimited(relative, root, ("Utterance", "Paraphrase"))):
            utterance, paraphrase = _unquote(row["Utterance"]), _unquote(row["Paraphrase"])
            words, paraphrase_words = len(utterance.split()), len(paraphrase.split())
            if not utterance or not paraphrase:
                out.skipped["empty field"] += 1
            elif words < 3:
                out.skipped["utterance under 3 words (elliptical)"] += 1
            elif not INDIRECT.search(paraphrase):
                out.skipped["paraphrase not indirect (no hedge marker)"] += 1
            elif INDIRECT.search(utterance):
                out.skipped["utterance already indirect"] += 1
            elif paraphrase_words > 3 * words + 6:
                out.skipped["paraphrase adds content (over 3x the words + 6)"] += 1
            else:
                out.add(paraphrase, utterance, origin(relative, index))
    return out
