"""Circa (Louis, Roth & Radlinski, EMNLP 2020): yes/no questions with indirect answers in ten social situations.

The data root holds the corpus split by situation (``circa/data/CIRCA/unmatched/scenario{0..9}``; their union is the
34,268 question-answer pairs of ``circa-data.tsv``). Each pair has five interpretations; ``goldstandard2`` is the
paper's *relaxed* majority: "Probably yes / sometimes yes" counted as Yes, "Probably no" as No and "I am not sure how X
will interpret Y's answer" as In the middle before at least 3 of 5 must agree. The relaxed labels of the paper's
experiments are the four below; a pair without a relaxed majority (771, empty upstream) or labelled "Other" (504:
answers that are no answer) has no such label and is left out, as in the paper, so 32,993 pairs remain.

All pairs are kept as released: 5 dialogues occur twice in one situation with different relaxed labels (ids 64 and
2549, 5780 and 15288, 8670 and 33830, 13951 and 17049, 19682 and 22586), so the best possible accuracy is
32,988/32,993.

``in_inli`` marks a pair whose dialogue is one of INLI's premises (:class:`pragmeter.datasets.inli.InliDialogues`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pragmeter.datasets.common import read_columns
from pragmeter.errors import DataError

SCENARIOS = tuple(range(10))
FILES = tuple(f"circa/data/CIRCA/unmatched/scenario{s}/circa-data-test.tsv" for s in SCENARIOS)
# goldstandard2 value -> relaxed label, in the order of the paper's relaxed classes
RELAXED = {"Yes": "yes", "No": "no", "Yes, subject to some conditions": "conditional",
           "In the middle, neither yes nor no": "neither"}
LEFT_OUT = ("", "Other")  # no relaxed majority; not an answer to the question
_COLUMNS = ("id", "context", "question-X", "canquestion-X", "answer-Y", "judgements", "goldstandard1", "goldstandard2")


@dataclass(frozen=True)
class CircaItem:
    id: str  # "circa-<upstream id>"
    situation: str  # the social situation ("X wants to know about Y's food preferences.")
    question: str  # asked by X
    statement: str  # the question rewritten as a declarative (canquestion-X)
    answer: str  # Y's indirect answer
    label: str  # relaxed label: one of RELAXED's values
    strict: str  # goldstandard1 as released ("" when there is no strict majority)
    scenario: int
    in_inli: bool


def load_circa(root: str | os.PathLike | None = None, scenarios: tuple[int, ...] = SCENARIOS) -> list[CircaItem]:
    """The pairs with a relaxed label in the given situations (checksums verified), in upstream id order."""
    from pragmeter.datasets.inli import InliDialogues

    inli = InliDialogues(root)
    items = []
    for scenario in scenarios:
        if scenario not in SCENARIOS:
            raise DataError(f"Circa has no scenario {scenario!r}; choose from 0 to 9")
        relative = FILES[scenario]
        frame = read_columns(relative, root, _COLUMNS, sep="\t")
        for row, record in enumerate(frame.to_dict("records")):
            relaxed = record["goldstandard2"].strip()
            if relaxed in LEFT_OUT:
                continue
            if relaxed not in RELAXED:
                raise DataError(f"{relative}: data row {row + 1}: field 'goldstandard2' is {relaxed!r}, not a Circa "
                                "relaxed label")
            for field in ("id", "context", "question-X", "answer-Y"):
                if not record[field].strip():
                    raise DataError(f"{relative}: data row {row + 1}: field {field!r} is empty")
            if not record["id"].strip().isdigit():
                raise DataError(f"{relative}: data row {row + 1}: field 'id' is {record['id']!r}, not a whole number")
            question, answer = record["question-X"].strip(), record["answer-Y"].strip()
            items.append(CircaItem(f"circa-{record['id'].strip()}", record["context"].strip(), question,
                                   record["canquestion-X"].strip(), answer, RELAXED[relaxed],
                                   record["goldstandard1"].strip(), scenario, (question, answer) in inli))
    return sorted(items, key=lambda item: int(item.id.removeprefix("circa-")))
