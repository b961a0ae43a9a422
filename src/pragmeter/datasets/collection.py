"""A text collection to profile: texts, their label groupings, optional paired texts, and where they came from."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


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
