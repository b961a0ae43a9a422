"""BIG-Bench Hard ``snarks`` (Suzgun et al., Findings of ACL 2023; from BIG-bench, Srivastava et al., TMLR 2023): 178
pairs of near-identical statements of which one is sarcastic.

Each example's ``input`` is "Which statement is sarcastic?\\nOptions:\\n(A) …\\n(B) …" and its ``target`` "(A)" or
"(B)". The file carries BIG-bench's canary string: its items must not go into training data.

One example is cut short upstream (item 88: "(A) The NB" and no option B, target "(A)"): no model can read it, so the
loader sets it aside by index in :data:`TRUNCATED` (checked: it must still be the one malformed input) and the task
reports it, leaving 177 items. Any other malformed example is a DataError naming file, item and field.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from pragmeter.datasets.common import read_items
from pragmeter.errors import DataError

FILE = "bbh_snarks/bbh/snarks.json"
QUESTION = "Which statement is sarcastic?"
TRUNCATED = (88,)  # upstream items without both options
_INPUT = re.compile(r"\A(?P<question>[^\n]+)\nOptions:\n\(A\) (?P<a>[^\n]+)\n\(B\) (?P<b>[^\n]+)\Z")


@dataclass(frozen=True)
class SnarksItem:
    id: str  # "snarks-<index>"
    question: str
    options: tuple[tuple[str, str], ...]  # (("A", statement), ("B", statement))
    answer: str  # letter of the sarcastic statement

    @property
    def sarcastic(self) -> str:
        return dict(self.options)[self.answer]


def parse_input(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(question, options) of a snarks ``input``; ValueError unless it is a question with options (A) and (B)."""
    found = _INPUT.match(text.strip())
    if not found:
        raise ValueError("expected a question line, 'Options:', and one line each for (A) and (B)")
    return found["question"].strip(), (("A", found["a"].strip()), ("B", found["b"].strip()))


def load_snarks(root: str | os.PathLike | None = None) -> list[SnarksItem]:
    """The 177 readable examples of the 178, in file order (checksum verified)."""
    path, examples = read_items(FILE, root, "examples")
    items = []
    for index, example in enumerate(examples):
        if not isinstance(example, dict):
            raise DataError(f"{path}: item {index}: expected an object")
        try:
            question, options = parse_input(str(example.get("input", "")))
        except ValueError as error:
            if index in TRUNCATED:
                continue
            raise DataError(f"{path}: item {index}, field 'input': {error}") from None
        if index in TRUNCATED:
            raise DataError(f"{path}: item {index}, field 'input': readable, but set aside as cut short upstream")
        target = str(example.get("target", "")).strip()
        if target not in ("(A)", "(B)"):
            raise DataError(f"{path}: item {index}, field 'target' is {target!r}, expected (A) or (B)")
        items.append(SnarksItem(f"snarks-{index}", question, options, target[1]))
    return items
