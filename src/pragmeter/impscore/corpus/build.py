"""Assemble the ImpScore training corpus: positive pairs from every source, cleaned, deduplicated, split and
given negatives the paper's way (the explicit side of another pair from the same source, seeded).

Corpus file (parquet) columns: ``pair_id, source, implicit, explicit, negative, negative_pair_id, split, pragmatic``
(``pragmatic`` is False for pairs whose explicit side is not a paraphrase; files without it are all paraphrases).
The official ``all_data.csv`` schema (pos_implicit, pos_explicit, neg_implicit, neg_explicit) is read too.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from pragmeter.errors import DataError
from pragmeter.impscore.corpus.sources import SOURCES, SourcePairs

COLUMNS = ["pair_id", "source", "implicit", "explicit", "negative", "negative_pair_id", "split", "pragmatic"]
OFFICIAL_COLUMNS = ["pos_implicit", "pos_explicit", "neg_implicit", "neg_explicit"]
SPLITS = (("train", 0.8), ("val", 0.1), ("test", 0.1))
MAX_CHARS = 2000


def normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def garbage_reason(implicit: str, explicit: str) -> str | None:
    for text in (implicit, explicit):
        if len(re.findall(r"[^\W\d_]", text)) < 2:
            return "too few letters"
        if len(text) > MAX_CHARS:
            return f"longer than {MAX_CHARS} characters"
    if normalise(implicit) == normalise(explicit):
        return "implicit equals explicit"
    return None


def held_out_texts(root=None) -> set[str]:
    """Normalised texts of the benchmarks that must stay out of training: INLI val/test, DRInQ, Emphasized-Talk,
    ISHate dev/test."""
    import csv
    import json

    from pragmeter.data.root import data_file

    texts: set[str] = set()
    for split in ("val", "test"):
        with open(data_file(f"inli/INLI_Data/{split}.csv", root), encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                for column in ("premise", "implied_entailment", "explicit_entailment", "neutral", "contradiction"):
                    texts.add(normalise(row.get(column) or ""))
    with open(data_file("drinq/drinq_validated.csv", root), encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            texts.update(normalise(row.get(c) or "") for c in ("question", "context", "implied_comment"))
    dialogues = json.loads(data_file("emphasized_talk/data.json", root).read_text(encoding="utf-8"))
    for previous, value in dialogues.items():
        texts.update({normalise(previous), normalise(value["current"])})
        for implications in value["emphasis"].values():
            texts.update(normalise(i) for i in implications)
    for split in ("dev", "test"):  # ISHate dev/test: the held-out side of ImpScore's ISHate validity check
        frame = pd.read_parquet(data_file(f"ishate/data/ishate_{split}.parquet.gzip", root), columns=["text", "cleaned_text"])
        for column in ("text", "cleaned_text"):
            texts.update(normalise(t) for t in frame[column] if isinstance(t, str))
    texts.discard("")
    return texts


def clean_pairs(collected: list[SourcePairs], held_out: set[str] = frozenset()) -> tuple[pd.DataFrame, Counter]:
    """One row per distinct (implicit, explicit) pair, in source order; counts of what was dropped and why."""
    dropped: Counter = Counter()
    seen: set[tuple[str, str]] = set()
    rows = []
    for source in collected:
        for reason, count in source.skipped.items():
            dropped[(source.name, reason)] += count
        topics = source.topics if source.topics is not None else [None] * len(source.pairs)
        for (implicit, explicit), topic in zip(source.pairs, topics, strict=True):
            implicit, explicit = " ".join(implicit.split()), " ".join(explicit.split())
            reason = garbage_reason(implicit, explicit)
            if reason:
                dropped[(source.name, reason)] += 1
                continue
            key = (normalise(implicit), normalise(explicit))
            if key[0] in held_out or key[1] in held_out:
                dropped[(source.name, "text of a held-out benchmark")] += 1
                continue
            if key in seen:
                dropped[(source.name, "duplicate pair")] += 1
                continue
            seen.add(key)
            rows.append((source.name, implicit, explicit, topic, source.paraphrase))
    return pd.DataFrame(rows, columns=["source", "implicit", "explicit", "topic", "pragmatic"]), dropped


def source_rng(seed: int, source: str, purpose: int = 0) -> np.random.Generator:
    """One generator per source, so adding or removing a source leaves the other sources' splits and negatives as
    they were."""
    return np.random.default_rng([seed, purpose, *source.encode("utf-8")])


def assign_splits(frame: pd.DataFrame, seed: int) -> pd.Series:
    """8:1:1 per source, grouped by implicit sentence so one anchor never lands in two splits; an anchor that an
    earlier source (in name order) already placed keeps that split (ISHate and Latent Hatred share posts)."""
    split = pd.Series("train", index=frame.index, dtype=object)
    assignment: dict[str, str] = {}
    for source, group in frame.groupby("source", sort=True):
        rng = source_rng(seed, str(source))
        keys = group["implicit"].map(normalise)
        anchors = np.array([a for a in keys.unique() if a not in assignment], dtype=object)
        anchors = anchors[rng.permutation(len(anchors))]
        n_val = int(round(len(anchors) * SPLITS[1][1]))
        n_test = int(round(len(anchors) * SPLITS[2][1]))
        assignment.update({a: "val" for a in anchors[:n_val]})
        assignment.update({a: "test" for a in anchors[n_val : n_val + n_test]})
        assignment.update({a: "train" for a in anchors[n_val + n_test :]})
        split.loc[group.index] = keys.map(assignment)
    return split


def sample_negatives(frame: pd.DataFrame, seed: int, max_tries: int = 50) -> np.ndarray:
    """For each pair, the index of another pair of the same source and split with a different anchor and explicit
    (and a different ``topic``, where the source gives one)."""
    chosen = np.full(len(frame), -1, dtype=np.int64)
    implicit_keys = frame["implicit"].map(normalise).to_numpy()
    explicit_keys = frame["explicit"].map(normalise).to_numpy()
    topics = frame["topic"].to_numpy() if "topic" in frame.columns else np.full(len(frame), None)
    for (source, split), group in frame.groupby(["source", "split"], sort=True):
        rng = source_rng(seed, f"{source}/{split}", purpose=1)
        positions = frame.index.get_indexer(group.index)
        if len(positions) < 2:
            continue
        for position in positions:
            for _ in range(max_tries):
                other = positions[rng.integers(len(positions))]
                if (implicit_keys[other] != implicit_keys[position] and explicit_keys[other] != explicit_keys[position]
                        and (pd.isna(topics[position]) or topics[other] != topics[position])):
                    chosen[position] = other
                    break
    return chosen


def build_corpus(sources: list[str] | None = None, seed: int = 0, root=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(corpus, report): the corpus rows and a per-source table of pairs and drops."""
    names = sources or list(SOURCES)
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise DataError(f"unknown corpus source(s) {', '.join(unknown)}; known: {', '.join(SOURCES)}")
    collected = [SOURCES[name](root) for name in names]
    frame, dropped = clean_pairs(collected, held_out_texts(root))
    frame["split"] = assign_splits(frame, seed)
    negatives = sample_negatives(frame, seed)
    no_negative = negatives < 0
    for source in frame.loc[no_negative, "source"]:
        dropped[(source, "no negative available")] += 1
    frame["negative_pair_id"] = negatives
    frame["pair_id"] = np.arange(len(frame))
    frame["negative"] = [frame["explicit"].iat[j] if j >= 0 else None for j in negatives]
    frame = frame.loc[~no_negative, COLUMNS].reset_index(drop=True)
    report = source_report(collected, frame, dropped)
    return frame, report


def source_report(collected: list[SourcePairs], frame: pd.DataFrame, dropped: Counter) -> pd.DataFrame:
    rows = []
    for source in collected:
        part = frame[frame["source"] == source.name]
        drops = {reason: n for (name, reason), n in dropped.items() if name == source.name}
        rows.append({
            "source": source.name,
            "pos_pairs": len(part),
            "train": int((part["split"] == "train").sum()),
            "val": int((part["split"] == "val").sum()),
            "test": int((part["split"] == "test").sum()),
            "generation": source.method,
            "dropped": ", ".join(f"{reason} {n}" for reason, n in sorted(drops.items())) or "-",
            "description": source.description,
        })
    total = {"source": "total", "pos_pairs": len(frame), **{s: int((frame["split"] == s).sum()) for s, _ in SPLITS},
             "generation": "", "dropped": str(sum(dropped.values())), "description": ""}
    return pd.DataFrame(rows + [total])


def format_report(report: pd.DataFrame) -> str:
    """A markdown table like the paper's Table 6."""
    columns = ["source", "pos_pairs", "train", "val", "test", "generation", "dropped"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, row in report.iterrows():
        lines.append("| " + " | ".join(f"{row[c]:,}" if isinstance(row[c], (int, np.integer)) else str(row[c])
                                       for c in columns) + " |")
    return "\n".join(lines)


def from_official(frame: pd.DataFrame, path: str | os.PathLike, seed: int = 0) -> pd.DataFrame:
    """Convert the official all_data.csv schema to ours (its pairs already carry their negatives)."""
    missing = [c for c in OFFICIAL_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}; available: {', '.join(map(str, frame.columns))}")
    for column in OFFICIAL_COLUMNS:
        empty = frame[column].isna() | (frame[column].astype(str).str.strip() == "")
        if empty.any():
            row = int(np.flatnonzero(empty.to_numpy())[0])
            raise DataError(f"{path}: data row {row + 1}, field {column!r}: empty value")
    out = pd.DataFrame({
        "pair_id": np.arange(len(frame)),
        "source": frame["source"].astype(str) if "source" in frame.columns else "all_data",
        "implicit": frame["pos_implicit"].astype(str),
        "explicit": frame["pos_explicit"].astype(str),
        "negative": frame["neg_explicit"].astype(str),
        "negative_pair_id": -1,
        "pragmatic": True,
    })
    out["split"] = assign_splits(out, seed)
    return out[COLUMNS]


def load_corpus(path: str | os.PathLike, seed: int = 0) -> pd.DataFrame:
    """Read a corpus in our parquet/csv format or the official all_data.csv schema."""
    from pragmeter.io import read_table

    frame = read_table(path)
    if set(OFFICIAL_COLUMNS) <= set(frame.columns):
        return from_official(frame, path, seed)
    needed = ["source", "implicit", "explicit", "negative"]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: not a corpus file: missing column(s) {', '.join(missing)} "
                        f"(expected {', '.join(COLUMNS)} or the official {', '.join(OFFICIAL_COLUMNS)})")
    for column in ("implicit", "explicit", "negative"):
        empty = frame[column].isna() | (frame[column].astype(str).str.strip() == "")
        if empty.any():
            row = int(np.flatnonzero(empty.to_numpy())[0])
            raise DataError(f"{path}: data row {row + 1}, field {column!r}: empty value")
    if "split" not in frame.columns:
        frame["split"] = assign_splits(frame, seed)
    if "pair_id" not in frame.columns:
        frame["pair_id"] = np.arange(len(frame))
    if "pragmatic" not in frame.columns:
        frame["pragmatic"] = True
    return frame.reset_index(drop=True)


def write_corpus(frame: pd.DataFrame, path: str | os.PathLike, overwrite: bool = False) -> Path:
    from pragmeter.io import write_table

    write_table(frame, path, overwrite=overwrite)
    return Path(path)
