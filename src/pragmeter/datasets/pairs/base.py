"""What a corpus source reader returns, and the checked file readers the pair sources share.

A reader turns one upstream dataset into (implicit, explicit) positive pairs. The newer readers also give, per pair,
its provenance (``origin``: data-root file and 0-based record index, ``file#index``), an optional ``group`` (pairs
that rewrite the same implicit sentence, or share an item upstream: one split, never each other's negative) and an
optional ``hard_negative`` (an upstream text that shares words with the anchor but means something else).
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from dataclasses import dataclass, field

from pragmeter.data.root import data_file, manifest
from pragmeter.errors import DataError
from pragmeter.io.tables import jsonl_records


@dataclass
class SourcePairs:
    name: str
    method: str  # how the explicit side was obtained (Table 6's "Generation")
    description: str
    pairs: list[tuple[str, str]] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    # One label per pair (e.g. the targeted group) where the source has one: a negative is then drawn from a pair
    # with a different label, so it is pragmatically distant and not just another pair about the same group.
    topics: list[str] | None = None
    # False when the explicit side is not a paraphrase of the implicit one: such pairs train and test only the
    # implicitness ordering, never pragmatic closeness.
    paraphrase: bool = True
    licence: str | None = None  # None: the licence the manifest records for the source's data folder
    # Per-pair lists, filled by ``add`` (None for readers that only append to ``pairs``).
    origins: list[str] | None = None
    groups: list[str | None] | None = None
    hard_negatives: list[str | None] | None = None
    tiers: list[int] | None = None  # 0 = hand-written upstream, 1 = automatic (silver): a cap keeps tier 0 first
    # False: the pair's explicit side is never another pair's negative (graded groups: only the direct level-1
    # sentence may be, so that "implicit > negative" never asks a hedged sentence to outscore a hint).
    donors: list[bool] | None = None
    cap: int | None = None  # most pairs kept after cleaning (whole groups, tier 0 first, then seeded order)

    def add(self, implicit: str, explicit: str, origin: str, group: str | None = None,
            hard_negative: str | None = None, tier: int = 0, donor: bool = True) -> None:
        if self.origins is None:
            if self.pairs:
                raise ValueError(f"{self.name}: add() after pairs were appended without provenance")
            self.origins, self.groups, self.hard_negatives, self.tiers, self.donors = [], [], [], [], []
        self.pairs.append((implicit, explicit))
        self.donors.append(donor)
        self.origins.append(origin)
        self.groups.append(group)
        self.hard_negatives.append(hard_negative)
        self.tiers.append(tier)


def folder_licence(folder: str) -> str:
    """The licence SOURCES.md gives for a data folder (recorded in the manifest)."""
    licences = {entry.get("licence") for rel, entry in manifest().items() if rel.startswith(f"{folder}/")}
    licences.discard(None)
    return licences.pop() if len(licences) == 1 else "not stated in SOURCES.md"


def origin(relative: str, index: int | str) -> str:
    return f"{relative}#{index}"


def read_delimited(relative: str, root: str | os.PathLike | None, required: tuple[str, ...] = (),
                   delimiter: str = ",", header: bool = True, fields: int | None = None,
                   encoding: str = "utf-8-sig") -> list[dict | list]:
    """Records of a verified CSV/TSV file: dicts (``header``) with the ``required`` columns, or lists with at least
    ``fields`` cells. A malformed file is a DataError naming the file, record and field."""
    path = data_file(relative, root)
    try:
        with open(path, encoding=encoding, newline="") as handle:
            if header:
                reader = csv.DictReader(handle, delimiter=delimiter)
                missing = [c for c in required if c not in (reader.fieldnames or [])]
                if missing:
                    raise DataError(f"{path}: missing column(s) {', '.join(missing)}; "
                                    f"found {', '.join(reader.fieldnames or [])}")
                return list(reader)
            quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
            rows = list(csv.reader(handle, delimiter=delimiter, quoting=quoting))
    except (UnicodeDecodeError, csv.Error) as error:
        raise DataError(f"{path}: unreadable as {'TSV' if delimiter == chr(9) else 'CSV'}: {error}") from None
    if fields is not None:
        for index, row in enumerate(rows):
            if len(row) < fields:
                raise DataError(f"{path}: record {index}: {len(row)} field(s), expected at least {fields}")
    return rows


def read_jsonl(relative: str, root: str | os.PathLike | None, required: tuple[str, ...] = ()) -> list[dict]:
    """Records of a verified JSON-lines file, each with the ``required`` fields."""
    path = data_file(relative, root)
    rows = jsonl_records(path)
    for index, row in enumerate(rows):
        missing = [f for f in required if f not in row]
        if missing:
            raise DataError(f"{path}: record {index}: missing field(s) {', '.join(missing)}")
    return rows


def text(value) -> str:
    """A cell as one line of text ('' for a missing value)."""
    return " ".join(str(value).split()) if isinstance(value, str) else ""


def match_case(reference: str, value: str) -> str:
    """``value`` with a capital first letter when ``reference`` has one: automatic substitutions leave a lower-case
    start that would otherwise tell the explicit side apart by form alone."""
    if reference[:1].isupper() and value[:1].islower():
        return value[:1].upper() + value[1:]
    return value


# Default cap per new source: about the size of the largest paper source after cleaning (implicit_hate, about 6k),
# so no single new source outweighs the rest; every reader takes ``cap=None`` for all of its pairs.
DEFAULT_CAP = 6000


URL = re.compile(r"https?:\s*/\s*/\s*\S+")  # "http:/ /t.co/..." occurs too


def without_urls(value: str) -> str:
    """Tweet text without its links: a link (mostly on the implicit side) would teach "has a URL = implicit"."""
    return " ".join(URL.sub(" ", value).split())
