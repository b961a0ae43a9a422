"""Fig-QA (Liu et al., NAACL 2022): creative metaphors, each with the correct and the opposite literal reading.

``data/filtered/{train_xl,dev}.csv``: startphrase, ending1, ending2, labels (0 or 1: the correct ending), valid,
qid (two metaphors with opposite meanings share a qid and its endings). A pair is metaphor -> correct ending; the
other ending is its hard negative; a qid is a group. ``train.csv`` is a subset of ``train_xl.csv`` and the test
labels are hidden upstream, so neither is read.
"""

from __future__ import annotations

from pragmeter.datasets.pairs.base import DEFAULT_CAP, SourcePairs, origin, read_delimited, text

NAME = "figqa"
LICENCE = "MIT"
FILES = (f"{NAME}/data/filtered/train_xl.csv", f"{NAME}/data/filtered/dev.csv")


def figqa(root=None, cap: int | None = DEFAULT_CAP) -> SourcePairs:
    out = SourcePairs(NAME, "original", "Fig-QA: metaphor -> correct literal ending (the other ending is a hard "
                      "negative)", licence=LICENCE, cap=cap)
    for relative in FILES:
        split = relative.rsplit("/", 1)[1].removesuffix(".csv")
        for index, row in enumerate(read_delimited(relative, root, ("startphrase", "ending1", "ending2", "labels",
                                                                    "qid"))):
            label = (row["labels"] or "").strip()
            if label not in ("0", "1"):
                out.skipped[f"label {label!r}"] += 1
                continue
            if (row.get("valid") or "1").strip() != "1":
                out.skipped["marked invalid upstream"] += 1
                continue
            metaphor, right, wrong = (text(row[c]) for c in ("startphrase", f"ending{int(label) + 1}",
                                                             f"ending{2 - int(label)}"))
            if not metaphor or not right:
                out.skipped["empty field"] += 1
                continue
            out.add(metaphor, right, origin(relative, index), group=f"{NAME}:{split}:{row['qid']}",
                    hard_negative=wrong or None)
    return out
