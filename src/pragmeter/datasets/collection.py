"""A text collection to profile: texts, their label groupings, optional paired texts, and where they came from."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pragmeter.errors import InvalidParameter, PragmeterError
from pragmeter.text import is_blank

log = logging.getLogger("pragmeter")


@dataclass
class TextCollection:
    """``groupings`` maps a grouping name (e.g. "implicit_layer") to one label per text (None = unlabelled);
    ``comparisons`` lists (grouping, value a, value b) whose mean scores are compared (a − b, Welch CI);
    ``pairs`` holds paired texts (e.g. post, implied statement) compared pair by pair, by name."""

    name: str
    texts: list[str]
    groupings: dict[str, list[str | None]] = field(default_factory=dict)
    comparisons: list[tuple[str, str, str]] = field(default_factory=list)
    pairs: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # file -> sha256
    sampling: dict = field(default_factory=dict)  # how texts were sampled, with sizes before and after
    description: str = ""

    def __post_init__(self) -> None:
        for grouping, labels in self.groupings.items():
            if len(labels) != len(self.texts):
                raise ValueError(f"grouping {grouping!r} has {len(labels)} labels for {len(self.texts)} texts")

    def subset(self, rows: np.ndarray) -> "TextCollection":
        """The same collection restricted to ``rows`` (in the order given)."""
        rows = [int(r) for r in rows]
        return TextCollection(
            name=self.name, texts=[self.texts[r] for r in rows],
            groupings={g: [labels[r] for r in rows] for g, labels in self.groupings.items()},
            comparisons=list(self.comparisons), pairs=dict(self.pairs), sources=dict(self.sources),
            sampling=dict(self.sampling), description=self.description)


def sample_per_label(collection: TextCollection, grouping: str | None, cap: int | None, seed: int) -> TextCollection:
    """At most ``cap`` texts per value of ``grouping`` (or overall when None), drawn without replacement with a
    seeded generator, kept in their original order. Records the sizes before and after in ``sampling``."""
    labels = collection.groupings[grouping] if grouping else ["all"] * len(collection.texts)
    rng = np.random.default_rng(seed)
    chosen: list[np.ndarray] = []
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    for value in sorted({str(v) for v in labels}):
        rows = np.array([i for i, v in enumerate(labels) if str(v) == value])
        before[value] = int(rows.size)
        if cap is not None and rows.size > cap:
            rows = np.sort(rng.choice(rows, size=cap, replace=False))
        after[value] = int(rows.size)
        chosen.append(rows)
    rows = np.sort(np.concatenate(chosen)) if chosen else np.array([], dtype=int)
    sampled = collection.subset(rows)
    sampled.sampling = {**collection.sampling, "by": grouping or "all", "cap_per_value": cap, "seed": seed,
                        "sizes_before": before, "sizes_after": after}
    return sampled


def _label(value) -> str | None:
    """A label cell as text; an empty cell (NaN, blank) is no label, None (shown as "None"), not the group "nan"."""
    return None if is_blank(value) else str(value)


def collection_from_file(dataset: str | Path, column: str = "text", label_columns: list[str] | tuple[str, ...] = (),
                         pair_column: str | None = None, compare: list[str] | tuple[str, ...] = (),
                         max_per_label: int | None = None, seed: int = 0) -> TextCollection:
    """A user table as a collection: texts of ``column``, groupings by the ``label_columns``, paired texts of
    ``pair_column``, comparisons ``A:B`` of the first label column. Rows without a text are skipped and counted."""
    from pragmeter.data.root import sha256_of
    from pragmeter.text import invalid_text_reason
    from pragmeter.io import read_table, require_column

    path = Path(dataset)
    frame = read_table(path)
    texts = require_column(frame, column, path).tolist()
    labels = {c: require_column(frame, c, path).tolist() for c in label_columns}
    paired = require_column(frame, pair_column, path).tolist() if pair_column else None
    keep = []
    for row, text in enumerate(texts):
        reason = invalid_text_reason(text) or (invalid_text_reason(paired[row]) if paired else None)
        if reason is None:
            keep.append(row)
    if len(keep) < len(texts):
        first = next(r for r in range(len(texts)) if r not in set(keep))
        reason = invalid_text_reason(texts[first]) or "paired text: " + str(invalid_text_reason(paired[first]))
        log.warning(f"warning: {len(texts) - len(keep)} row(s) skipped (first: {path} data row {first + 1}: {reason})")
    if not keep:
        raise PragmeterError(f"{path}: no row with a text to score in column {column!r}")
    first_label = label_columns[0] if label_columns else None
    comparisons = []
    for spec in compare:
        a, sep, b = spec.partition(":")
        if not sep or first_label is None:
            raise InvalidParameter("compare", spec, "give A:B, and a label column")
        comparisons.append((first_label, a, b))
    collection = TextCollection(
        name=path.name.split(".")[0], texts=[str(texts[r]) for r in keep],
        groupings={c: [_label(values[r]) for r in keep] for c, values in labels.items()},
        comparisons=comparisons,
        pairs={f"{column}_vs_{pair_column}": ([texts[r] for r in keep], [paired[r] for r in keep])}
        if paired else {},
        sources={str(path.resolve()): sha256_of(path)}, description=f"{path.name}, column {column!r}")
    if max_per_label is not None:
        collection = sample_per_label(collection, first_label, max_per_label, seed)
    return collection
