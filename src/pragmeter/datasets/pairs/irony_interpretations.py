"""Interpreting verbal irony (Ghosh et al., SCiL 2020): crowd-written literal interpretations of sarcastic tweets.

Each record is one interpretation: ``snum`` = tweet id + "-i", ``sarcasm_message``, ``literal_message_i``. A tweet's
interpretations form one group. Links are removed from both sides.
"""

from __future__ import annotations

from pragmeter.datasets.pairs.base import DEFAULT_CAP, SourcePairs, origin, read_jsonl, text, without_urls

NAME = "irony_interpretations"
LICENCE = "none stated"
FILE = f"{NAME}/sarcasm_twitter_rte_separate.jsonlines"


def irony_interpretations(root=None, cap: int | None = DEFAULT_CAP) -> SourcePairs:
    out = SourcePairs(NAME, "original", "Ghosh et al. 2020: sarcastic tweet -> each crowd-written literal "
                      "interpretation", licence=LICENCE, cap=cap)
    for index, row in enumerate(read_jsonl(FILE, root, ("snum", "sarcasm_message"))):
        tweet, number = str(row["snum"]).rsplit("-", 1) if "-" in str(row["snum"]) else (str(row["snum"]), "")
        literal = text(row.get(f"literal_message_{number}"))
        sarcastic = without_urls(text(row["sarcasm_message"]))
        if not literal:
            out.skipped["no literal_message_N matching the snum"] += 1
        elif not sarcastic:
            out.skipped["empty field"] += 1
        else:
            out.add(sarcastic, without_urls(literal), origin(FILE, index), group=f"{NAME}:{tweet}")
    return out
