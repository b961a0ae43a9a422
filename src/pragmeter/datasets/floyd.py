"""The Metaphor and Maxims items of Floyd, Jouravlev et al.'s pragmatics battery (as released with Hu et al., ACL 2023):
expert-written short stories ending in an utterance that means more than it says, with options of which one
(``answer``) is the meant, non-literal reading.

Evaluation only: the repository states no licence, so the items are read from the data root, never trained on and
never copied into the package (SOURCES.md). Every item is checked; a malformed one is a DataError naming the file,
item and field. The battery is prepared from the upstream files under ``floyd_dev/raw/`` (:func:`build_battery`, run by
``pragmeter data fetch``), byte for byte the file the manifest pins.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from pragmeter.data.root import data_file
from pragmeter.errors import DataError

BATTERY = "floyd_dev/floyd_dev_battery.json"
RAW = "floyd_dev/raw/"
TASKS = ("Metaphor", "Maxims")  # in the battery's order; each has {task}Scenarios, {task}Options and {task}KeySimple
SOURCE = ("jennhu/lm-pragmatics@9fd4be5c0e43162c9d6e09b6024cc000e40b3398 fj_raw_data (Floyd, Jouravlev et al. "
          "materials used by Hu et al. 2023, ACL): Metaphor and Maxims items, expert-written")
QUOTED = re.compile(r'"([^"]*)"')


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
    return f"{RAW}{task}Instructions.txt"


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


def _rows(relative: str, root, width: int) -> tuple[Path, list[tuple[int, list[str]]]]:
    """The verified path of an upstream tab-separated file and (line number, cells) of each non-empty row; a row of
    fewer than ``width`` cells is a DataError naming file and line."""
    path = data_file(relative, root)
    rows = []
    text = path.read_bytes().decode("utf-8")
    for number, cells in enumerate(csv.reader(io.StringIO(text, newline=""), delimiter="\t"), start=1):
        if cells and len(cells) < width:
            raise DataError(f"{path}: line {number}: expected {width} tab-separated fields, got {len(cells)}")
        if cells:
            rows.append((number, cells))
    return path, rows


def _number(path: Path, line: int, field: str, value: str) -> int:
    try:
        return int(value.strip())
    except ValueError:
        raise DataError(f"{path}: line {line}, field {field!r}: expected a number, got {value!r}") from None


def build_battery(root: str | os.PathLike | None = None) -> bytes:
    """``floyd_dev_battery.json`` as prepared from the upstream files under ``floyd_dev/raw/`` (each checksum
    verified): per item its task, ``{task}-{number}`` id, the story (``scenario``), its last quoted sentence
    (``utterance``), the options in upstream order and the index of the one the key marks Correct (``answer``).
    The Metaphor files lead each row with a task code, so fields are counted from the end but in the key."""
    items = []
    for task in TASKS:
        path, rows = _rows(f"{RAW}{task}Scenarios.txt", root, 2)
        scenarios = {_number(path, line, "item", cells[-2]): cells[-1].strip() for line, cells in rows}
        options: dict[int, dict[int, str]] = {}
        path, rows = _rows(f"{RAW}{task}Options.txt", root, 3)
        for line, cells in rows:
            option = _number(path, line, "option", cells[-2])
            options.setdefault(_number(path, line, "item", cells[-3]), {})[option] = cells[-1].strip()
        answers = {}
        path, rows = _rows(f"{RAW}{task}KeySimple.txt", root, 4)
        for line, cells in rows:  # code, item, option[, text], verdict
            item, option = _number(path, line, "item", cells[1]), _number(path, line, "option", cells[2])
            if cells[-1].strip() == "Correct":
                answers[item] = option
        for number in sorted(scenarios):
            story, choices = scenarios[number], options.get(number, {})
            quoted = QUOTED.findall(story)
            if not quoted or answers.get(number) not in choices:
                raise DataError(f"{data_file(RAW + task + 'Scenarios.txt', root)}: item {number}: expected a quoted "
                                "utterance, and options of which the key marks one Correct")
            items.append({"task": task, "id": f"{task}-{number}", "utterance": quoted[-1], "scenario": story,
                          "options": [choices[k] for k in sorted(choices)],
                          "answer": sorted(choices).index(answers[number])})
    return json.dumps({"source": SOURCE, "items": items}, indent=1, ensure_ascii=False).encode("utf-8")
