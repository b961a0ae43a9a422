"""Sarcasm SIGN (Peled & Reichart, ACL 2017): sarcastic tweets, each with about five non-sarcastic interpretations
by workers (lower-cased, tokenised on both sides).

``corpus/full.csv`` has no header: tweet, interpretation (``train``/``dev``/``test`` are its subsets, not read).
The instructions told workers to leave a tweet unchanged when they did not find it sarcastic, so an interpretation
equal to the tweet is dropped, and so is every interpretation of a tweet that most of its workers left unchanged.
A tweet's interpretations form one group.
"""

from __future__ import annotations

from collections import defaultdict

from pragmeter.datasets.pairs.base import DEFAULT_CAP, SourcePairs, origin, read_delimited, text
from pragmeter.text import normalise

NAME = "sarcasm_sign"
LICENCE = "none stated"
FILE = f"{NAME}/corpus/full.csv"


def sarcasm_sign(root=None, cap: int | None = DEFAULT_CAP) -> SourcePairs:
    out = SourcePairs(NAME, "original", "Sarcasm SIGN: sarcastic tweet -> each worker's honest interpretation "
                      "(unchanged interpretations and mostly-unchanged tweets dropped)", licence=LICENCE, cap=cap)
    tweets: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for index, row in enumerate(read_delimited(FILE, root, header=False, fields=2)):
        tweet, interpretation = text(row[0]), text(",".join(row[1:]))
        if not tweet or not interpretation:
            out.skipped["empty field"] += 1
        else:
            tweets[normalise(tweet)].append((index, tweet, interpretation))
    for number, rows in enumerate(tweets.values()):
        unchanged = sum(normalise(i) == normalise(t) for _, t, i in rows)
        if unchanged * 2 > len(rows):
            out.skipped["tweet left unchanged by most workers (not sarcastic)"] += len(rows)
            continue
        for index, tweet, interpretation in rows:
            if normalise(interpretation) == normalise(tweet):
                out.skipped["interpretation equals the tweet (worker found it not sarcastic)"] += 1
            else:
                out.add(tweet, interpretation, origin(FILE, index), group=f"{NAME}:{number}")
    return out
