"""ISHate (Ocampo et al., EACL 2023): Task A (implicit) and Task B (subtle) with the implicit-property labels.

The task files (``data/{implicit,subtle}_task/<split>.parquet.gzip``: text, label) are row-aligned with
``data/ishate_<split>.parquet.gzip`` (their text is its ``cleaned_text``); the loader checks the alignment and
that the labels agree with the annotation layers, then attaches ``implicit_props_layer``, source and target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported when a file is read: building the CLI parser stays fast
    import pandas as pd

import json
import os
from functools import cache
from dataclasses import dataclass


from pragmeter.data.root import data_file
from pragmeter.datasets.common import read_frame
from pragmeter.errors import DataError
from pragmeter.text import is_missing

TASKS = ("implicit", "subtle")
SPLITS = ("train", "dev", "test")
LABEL_NAMES = {
    "implicit": ("non-hateful", "explicit", "implicit"),  # 0 = Non-HS, 1 = Explicit HS, 2 = Implicit HS
    "subtle": ("non-hateful", "non-subtle", "subtle"),  # 0 = Non-HS, 1 = Non-Subtle HS, 2 = Subtle HS
}
# Annotation-layer value expected for each label id (to check the alignment of the two files).
_LAYER = {"implicit": ("implicit_layer", (None, "Explicit HS", "Implicit HS")),
          "subtle": ("subtlety_layer", (None, "Non-Subtle", "Subtle"))}


def messages_file(split: str) -> str:
    """The split's full message table (text, cleaned_text, the annotation layers, source, target, aug_method)."""
    if split not in SPLITS:
        raise DataError(f"ISHate has no split {split!r}; choose one of {', '.join(SPLITS)}")
    return f"ishate/data/ishate_{split}.parquet.gzip"


def files(task: str, split: str = "test") -> tuple[str, str]:
    if task not in TASKS:
        raise DataError(f"ISHate has no task {task!r}; choose one of {', '.join(TASKS)}")
    return f"ishate/data/{task}_task/{split}.parquet.gzip", messages_file(split)


def released_file(task: str, method: str) -> str:
    """A released augmentation set of a task's training split (ISHate's ``aug_data``)."""
    return f"ishate/data/{task}_task/aug_data/{method}.parquet.gzip"


WORD_LISTS = "ishate/ISHate/augmentation/words_lists"


@cache
def word_list(name: str, root: str | os.PathLike | None = None):
    """A released ISHate word list (``scalarity``, ``speculative``, ``special_tokens``, ``entities_list``)."""
    return json.loads(data_file(f"{WORD_LISTS}/{name}.json", root).read_text(encoding="utf-8"))


def read_messages(split: str, root: str | os.PathLike | None = None, columns: list[str] | None = None) -> pd.DataFrame:
    return read_frame(messages_file(split), root, columns=columns)


def read_released(task: str, method: str, root: str | os.PathLike | None = None) -> pd.DataFrame:
    return read_frame(released_file(task, method), root)


@dataclass(frozen=True)
class IshateItem:
    id: str  # "<task>-<split>-<row>"
    text: str  # the task file's (cleaned) text, as in the paper's experiments
    label: int  # 0, 1, 2 (see LABEL_NAMES)
    label_name: str
    implicit_properties: tuple[str, ...]  # e.g. ("Irony", "Inference"); empty for non-implicit messages
    original_text: str
    source: str
    target: str | None
    message_id: str


def _none_if_missing(value):
    return None if is_missing(value) else value


def load_ishate(task: str = "implicit", split: str = "test",
                root: str | os.PathLike | None = None) -> list[IshateItem]:
    task_rel, full_rel = files(task, split)
    task_path, full_path = data_file(task_rel, root), data_file(full_rel, root)
    labelled, full = read_frame(task_rel, root), read_frame(full_rel, root)
    # ishate_train also holds the released augmented messages (source "augmented") after the originals,
    # which the task files do not: align with the originals only.
    full = full[full["source"] != "augmented"].reset_index(drop=True)
    if len(labelled) != len(full):
        raise DataError(f"{task_path} has {len(labelled)} rows but {full_path} has {len(full)}; they must align")
    layer, expected = _LAYER[task]
    names = LABEL_NAMES[task]
    items = []
    for row, (text, label, record) in enumerate(zip(labelled["text"], labelled["label"], full.to_dict("records"))):
        where = f"{task_path}: row {row}"
        if text != record["cleaned_text"]:
            raise DataError(f"{where}: field 'text' differs from {full_path} row {row} 'cleaned_text'; files misaligned")
        label = int(label)
        if label not in (0, 1, 2) or _none_if_missing(record[layer]) != expected[label]:
            raise DataError(f"{where}: field 'label' {label} disagrees with {layer}={record[layer]!r} in {full_path}")
        props = _none_if_missing(record.get("implicit_props_layer"))
        items.append(IshateItem(
            id=f"{task}-{split}-{row}", text=text, label=label, label_name=names[label],
            implicit_properties=tuple(str(p) for p in props) if props is not None else (),
            original_text=record["text"], source=str(record["source"]),
            target=_none_if_missing(record.get("target")), message_id=str(record["message_id"]),
        ))
    return items
