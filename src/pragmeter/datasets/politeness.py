"""Stanford Politeness Corpus (Danescu-Niculescu-Mizil et al., ACL 2013): requests with human politeness ratings.

4,353 Wikipedia and 6,603 StackExchange requests, each rated by five annotators (1–25 scale) with a normalized
score (z-scored per annotator, then averaged; higher = more polite). It is graded, not paired: we use it only as a
weak external check that ImpScore rises with politeness (polite requests are usually the indirect ones).
Every row is kept; a row with an empty request or a non-numeric rating is a DataError naming file, row and field.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass

from pragmeter.data.root import data_file
from pragmeter.errors import DataError

DOMAINS = {"wikipedia": "politeness/corpora/wikipedia.annotated.csv",
           "stack-exchange": "politeness/corpora/stack-exchange.annotated.csv"}
FILES = tuple(DOMAINS.values())


@dataclass(frozen=True)
class PolitenessRequest:
    id: str  # "<domain>:<community>:<upstream Id>" (upstream Ids repeat across StackExchange sites)
    domain: str  # "wikipedia" or "stack-exchange"
    community: str  # upstream Community column (e.g. "Wikipedia", "092011 Stack Overflow")
    text: str
    ratings: tuple[int, ...]  # the five annotators' raw ratings (1–25)
    score: float  # upstream "Normalized Score" (higher = more polite)


def load_politeness(domains: tuple[str, ...] | list[str] = tuple(DOMAINS),
                    root: str | os.PathLike | None = None) -> list[PolitenessRequest]:
    items: list[PolitenessRequest] = []
    for domain in domains:
        if domain not in DOMAINS:
            raise DataError(f"Stanford Politeness has no domain {domain!r}; choose from {', '.join(DOMAINS)}")
        path = data_file(DOMAINS[domain], root)
        with open(path, encoding="utf-8", newline="") as handle:
            for row_number, row in enumerate(csv.DictReader(handle), start=2):  # line 1 is the header
                where = f"{path}: row {row_number}"
                text = (row.get("Request") or "").strip()
                if not text:
                    raise DataError(f"{where}, field 'Request': empty")
                try:
                    ratings = tuple(int(row[f"Score{i}"]) for i in range(1, 6))
                except (KeyError, TypeError, ValueError):
                    raise DataError(f"{where}, fields 'Score1'..'Score5': expected five integer ratings") from None
                try:
                    score = float(row["Normalized Score"])
                except (KeyError, TypeError, ValueError):
                    raise DataError(f"{where}, field 'Normalized Score': expected a number") from None
                community = (row.get("Community") or "").strip()
                items.append(PolitenessRequest(f"{domain}:{community}:{row.get('Id') or row_number}", domain,
                                               community, text, ratings, score))
    return items
