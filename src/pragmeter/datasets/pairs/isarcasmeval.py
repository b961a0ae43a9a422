"""iSarcasmEval (SemEval-2022 Task 6, English): tweets labelled sarcastic by their authors, with the author's own
non-sarcastic rephrase.

``train/train.En.csv``: rows with ``sarcastic`` = 1 pair ``tweet`` -> ``rephrase``. ``test/task_C_En_test.csv``:
``text_0``/``text_1`` are a sarcastic text and its rephrase, ``sarcastic_id`` says which is sarcastic. Task A/B test
files have labels only and are not read. Links are removed from both sides.
"""

from __future__ import annotations

from pragmeter.datasets.pairs.base import DEFAULT_CAP, SourcePairs, origin, read_delimited, text, without_urls

NAME = "isarcasmeval"
LICENCE = "MIT"
TRAIN = f"{NAME}/train/train.En.csv"
TASK_C = f"{NAME}/test/task_C_En_test.csv"


def isarcasmeval(root=None, cap: int | None = DEFAULT_CAP) -> SourcePairs:
    out = SourcePairs(NAME, "original", "iSarcasmEval: sarcastic tweet -> its author's non-sarcastic rephrase "
                      "(train + task C test)", licence=LICENCE, cap=cap)
    for index, row in enumerate(read_delimited(TRAIN, root, ("tweet", "sarcastic", "rephrase"))):
        if (row["sarcastic"] or "").strip() != "1":
            out.skipped["not sarcastic (no rephrase)"] += 1
            continue
        tweet, rephrase = without_urls(text(row["tweet"])), without_urls(text(row["rephrase"]))
        if tweet and rephrase:
            out.add(tweet, rephrase, origin(TRAIN, index))
        else:
            out.skipped["empty field"] += 1
    for index, row in enumerate(read_delimited(TASK_C, root, ("text_0", "text_1", "sarcastic_id"))):
        which = (row["sarcastic_id"] or "").strip()
        if which not in ("0", "1"):
            out.skipped[f"sarcastic_id {which!r}"] += 1
            continue
        sarcastic, rephrase = (without_urls(text(row[f"text_{n}"])) for n in (which, "01"[which == "0"]))
        if sarcastic and rephrase:
            out.add(sarcastic, rephrase, origin(TASK_C, index))
        else:
            out.skipped["empty field"] += 1
    return out
