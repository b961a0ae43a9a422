"""The Metaphor and Maxims items of Floyd, Jouravlev et al.'s pragmatics battery (as released with Hu et al., ACL 2023):
expert-written short stories ending in an utterance that means more than it says, with options of which one
(``answer``) is the meant, non-literal reading.

Evaluation only: the repository states no licence, so the items are read from the data root, never trained on and
never copied into the package (SOURCES.md). Every item is checked; a malformed one is a DataError naming the file,
item and field.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from pragmeter.data.root import data_file
from pragmeter.errors import DataError

BATTERY = "floyd_dev/floyd_dev_battery.json"


@dataclass(frozen=True)
class FloydItem:
    task: str  # "Metaphor" or "Maxims"
    id: str
    utterance: str
    scenario: str
    options: tuple[str, ...]
    answer: int  # index of the meant reading

    @property
    def meaning(self) -> str:
        return self.options[self.answer]


def load_floyd_battery(root: str | os.PathLike | None = None) -> list[FloydItem]:
    """The 40 items of ``floyd_dev/floyd_dev_battery.json`` (checksum verified)."""
    from pragmeter.datasets.common import read_items
    from pragmeter.io.tables import choice_fields, item_text

    path, raw = read_items(BATTERY, root, "items")
    items = []
    for index, item in enumerate(raw):
        options, answer = choice_fields(path, index, item)
        items.append(FloydItem(item_text(path, index, "task", item.get("task")), str(item.get("id", index)),
                               item_text(path, index, "utterance", item.get("utterance")),
                               item_text(path, index, "scenario", item.get("scenario")), tuple(options), answer))
    return items


def instructions_file(task: str) -> str:
    return f"floyd_dev/raw/{task}Instructions.txt"


def load_floyd_instructions(tasks: tuple[str, ...] = ("Metaphor", "Maxims"),
                            root: str | os.PathLike | None = None) -> dict[str, str]:
    """Each phenomenon's task instruction as the battery's participants read it (checksums verified); Hu et al. 2023
    begin every prompt with it."""
    instructions = {}
    for task in tasks:
        path = data_file(instructions_file(task), root)
        text = path.read_text(encoding="utf-8").strip()
        if not text:
            raise DataError(f"{path}: empty instruction")
        instructions[task] = text
    return instructions
