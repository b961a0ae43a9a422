"""GRICE (Zheng et al., Findings of ACL 2021): grammar-generated dialogues in which each answer carries a
conversational implicature; five files of 1,000 dialogues (about 3,500 question turns each), each turn with four
readings of the answer and the meant one (``answer_index``). A turn is a choice item: the dialogue so far is its
context, the question and the answer its exchange."""

from __future__ import annotations

import os
from dataclasses import dataclass

from pragmeter.data.root import data_file
from pragmeter.errors import DataError
from pragmeter.io import read_json

KINDS = ("cb", "ig", "li", "re", "st")
FILES = {kind: f"grice/data/impl_dial/world_large_nex_4000/impl_dial_v0.1_{kind}.json" for kind in KINDS}


@dataclass(frozen=True)
class GriceTurn:
    id: str  # "grice-<kind>-<dialogue>-<turn>"
    history: tuple[tuple[str, str], ...]  # earlier (question, answer) turns of the dialogue
    question: str
    answer: str
    options: tuple[str, ...]  # four readings of the answer
    meant: int  # index of the meant reading
    kind: str


def load_grice(root: str | os.PathLike | None = None, kinds: tuple[str, ...] = KINDS) -> list[GriceTurn]:
    turns = []
    for kind in kinds:
        if kind not in FILES:
            raise DataError(f"GRICE has no file {kind!r}; choose among {', '.join(KINDS)}")
        relative = FILES[kind]
        document = read_json(data_file(relative, root), dict, '{"data": {"dialogs": [...]}}')
        dialogues = (document.get("data") or {}).get("dialogs") if isinstance(document.get("data"), dict) else None
        if not isinstance(dialogues, list):
            raise DataError(f"{relative}: expected data.dialogs to be a list")
        for number, dialogue in enumerate(dialogues, 1):
            history = []
            for index, turn in enumerate((dialogue or {}).get("dialog") or [], 1):
                where = f"{relative}: dialogue {number}, turn {index}"
                for field in ("question", "answer"):
                    if not isinstance(turn.get(field), str) or not turn[field].strip():
                        raise DataError(f"{where}: field {field!r} is empty or not text")
                options = turn.get("option")
                if not (isinstance(options, list) and len(options) >= 2
                        and all(isinstance(o, str) and o.strip() for o in options)):
                    raise DataError(f"{where}: field 'option' is not a list of texts")
                meant = turn.get("answer_index")
                if not isinstance(meant, int) or not 0 <= meant < len(options):
                    raise DataError(f"{where}: field 'answer_index' is {meant!r}, not an index of its options")
                turns.append(GriceTurn(f"grice-{kind}-{number}-{index}", tuple(history), turn["question"].strip(),
                                       turn["answer"].strip(), tuple(o.strip() for o in options), meant, kind))
                history.append((turn["question"].strip(), turn["answer"].strip()))
    return turns
