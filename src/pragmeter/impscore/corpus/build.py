"""Assemble the ImpScore training corpus: positive pairs from every source, cleaned, deduplicated, split and
given negatives the paper's way (the explicit side of another pair from the same source, seeded).

Corpus file (parquet) columns: ``pair_id, source, implicit, explicit, negative, negative_pair_id, split, pragmatic``
(``pragmatic`` is False for pairs whose explicit side is not a paraphrase; files without it are all paraphrases),
then provenance and training signal: ``origin`` (upstream file and record, ``file#index``; empty for the paper
sources, whose readers give none yet), ``licence``, ``group`` (pairs rewriting one implicit sentence or sharing an
upstream item: one split, never each other's negative) and ``hard_negative`` (an upstream near-miss, e.g. Fig-QA's
wrong ending), empty where the source gives none.
The official ``all_data.csv`` schema (pos_implicit, pos_explicit, neg_implicit, neg_explicit) is read too.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from pragmeter.datasets.pairs.base import SourcePairs, folder_licence
from pragmeter.datasets.pairs.official import OFFICIAL_COLUMNS, is_official, official_pairs, require_values
from pragmeter.text import normalise
from pragmeter.errors import DataError
from pragmeter.datasets.pairs.registry import DEFAULT_SOURCES, FOLDERS, PRESETS, SOURCES

log = logging.getLogger("pragmeter")

COLUMNS = ["pair_id", "source", "implicit", "explicit", "negative", "negative_pair_id", "split", "pragmatic"]
PROVENANCE_COLUMNS = ["origin", "licence", "group", "hard_negative"]
SPLITS = (("train", 0.8), ("val", 0.1), ("test", 0.1))
MAX_CHARS = 2000
_TWO_LETTERS = re.compile(r"[^\W\d_].*?[^\W\d_]", re.DOTALL)  # stops at the second letter (counting all was slow)


def garbage_reason(implicit: str, explicit: str) -> str | None:
    for text in (implicit, explicit):
        if not _TWO_LETTERS.search(text):
            return "too few letters"
        if len(text) > MAX_CHARS:
            return f"longer than {MAX_CHARS} characters"
    if normalise(implicit) == normalise(explicit):
        return "implicit equals explicit"
    return None


def held_out_texts(root=None) -> set[str]:
    """Normalised texts that must stay out of training: the benchmarks' INLI val/test, DRInQ, Emphasized-Talk,
    ISHate dev/test, and our own OOD development sets."""
    from pragmeter.datasets import drinq, emphasized_talk, inli, ishate
    from pragmeter.impscore.ood import development_sentences

    texts: set[str] = {normalise(t) for t in development_sentences()}
    for split in ("val", "test"):
        frame = inli.read_split(split, root)
        for column in ("premise", "implied_entailment", "explicit_entailment", "neutral", "contradiction"):
            texts.update(normalise(t) for t in frame[column])
    frame = drinq.read_validated(root)
    for column in ("question", "context", "implied_comment"):
        texts.update(normalise(t) for t in frame[column])
    for previous, value in emphasized_talk.read_dialogues(root).items():
        texts.update({normalise(previous), normalise(value["current"])})
        for implications in value["emphasis"].values():
            texts.update(normalise(i) for i in implications)
    for split in ("dev", "test"):  # ISHate dev/test: the held-out side of ImpScore's ISHate validity check
        frame = ishate.read_messages(split, root, columns=["text", "cleaned_text"])
        for column in ("text", "cleaned_text"):
            texts.update(normalise(t) for t in frame[column] if isinstance(t, str))
    texts.discard("")
    return texts


def source_licence(source: SourcePairs) -> str:
    return source.licence or folder_licence(FOLDERS.get(source.name, source.name))


def clean_pairs(collected: list[SourcePairs], held_out: set[str] = frozenset()) -> tuple[pd.DataFrame, Counter]:
    """One row per distinct (implicit, explicit) pair, in source order; counts of what was dropped and why."""
    dropped: Counter = Counter()
    seen: set[tuple[str, str]] = set()
    rows = []
    for source in collected:
        for reason, count in source.skipped.items():
            dropped[(source.name, reason)] += count
        n = len(source.pairs)
        topics = source.topics if source.topics is not None else [None] * n
        origins, groups, hard, tiers, donors = (values if values is not None else default * n for values, default in (
            (source.origins, [None]), (source.groups, [None]), (source.hard_negatives, [None]), (source.tiers, [0]),
            (source.donors, [True])))
        licence = source_licence(source)
        for (implicit, explicit), topic, origin, group, hard_negative, tier, donor in zip(
                source.pairs, topics, origins, groups, hard, tiers, donors, strict=True):
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
            if hard_negative is not None:
                hard_negative = " ".join(hard_negative.split())
                if (not hard_negative or normalise(hard_negative) in key or normalise(hard_negative) in held_out):
                    hard_negative = None
            rows.append((source.name, implicit, explicit, topic, source.paraphrase, origin, licence, group,
                         hard_negative, tier, donor))
    columns = ["source", "implicit", "explicit", "topic", "pragmatic", *PROVENANCE_COLUMNS, "tier", "donor"]
    return pd.DataFrame(rows, columns=columns), dropped


def apply_caps(frame: pd.DataFrame, collected: list[SourcePairs], seed: int, dropped: Counter) -> pd.DataFrame:
    """At most ``source.cap`` pairs of each capped source: whole groups (a pair without one is its own), tier 0
    (hand-written) before tier 1 (automatic), in a seeded order within a tier."""
    keep = pd.Series(True, index=frame.index)
    for source in collected:
        part = frame[frame["source"] == source.name]
        if source.cap is None or len(part) <= source.cap:
            continue
        units = part["group"].where(part["group"].notna(), "pair:" + part.index.astype(str))
        sizes = units.value_counts(sort=False)
        tiers = part.groupby(units)["tier"].min()
        order = source_rng(seed, source.name, purpose=2).permutation(len(sizes))
        ranked = sorted(range(len(sizes)), key=lambda i: (tiers[sizes.index[i]], order[i]))
        chosen, total = set(), 0
        for i in ranked:
            if total + sizes.iat[i] <= source.cap:
                chosen.add(sizes.index[i])
                total += sizes.iat[i]
        over = ~units.isin(chosen)
        keep.loc[part.index[over.to_numpy()]] = False
        dropped[(source.name, f"over the cap of {source.cap:,} pairs")] += int(over.sum())
    return frame[keep]


def source_rng(seed: int, source: str, purpose: int = 0) -> np.random.Generator:
    """One generator per source, so adding or removing a source leaves the other sources' splits and negatives as
    they were."""
    return np.random.default_rng([seed, purpose, *source.encode("utf-8")])


def _units(keys: pd.Series, groups: pd.Series) -> pd.Series:
    """Each pair's split unit: its anchor, joined with every anchor that shares a group with it (union-find), named
    by the unit's first anchor."""
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for key, group in zip(keys, groups):
        if isinstance(group, str):
            a, b = find("a:" + key), find("g:" + group)
            if a != b:
                parent[b] = a
    first: dict[str, str] = {}
    for key in keys:
        first.setdefault(find("a:" + key), key)
    return keys.map(lambda key: first[find("a:" + key)])


def assign_splits(frame: pd.DataFrame, seed: int) -> pd.Series:
    """8:1:1 per source, grouped by implicit sentence so one anchor never lands in two splits (and by ``group``
    where the source gives one, so a group's rewrites stay together); an anchor that an earlier source (in name
    order) already placed keeps that split (ISHate and Latent Hatred share posts)."""
    split = pd.Series("train", index=frame.index, dtype=object)
    assignment: dict[str, str] = {}
    for source, group in frame.groupby("source", sort=True):
        rng = source_rng(seed, str(source))
        keys = group["implicit"].map(normalise)
        units = _units(keys, group["group"]) if "group" in group.columns else keys
        placed = {unit: assignment[key] for key, unit in zip(keys, units) if key in assignment}
        units_left = np.array([u for u in units.unique() if u not in placed], dtype=object)
        units_left = units_left[rng.permutation(len(units_left))]
        n_val = int(round(len(units_left) * SPLITS[1][1]))
        n_test = int(round(len(units_left) * SPLITS[2][1]))
        chosen = {**{u: "val" for u in units_left[:n_val]}, **{u: "test" for u in units_left[n_val : n_val + n_test]},
                  **{u: "train" for u in units_left[n_val + n_test :]}, **placed}
        assignment.update({key: chosen[unit] for key, unit in zip(keys, units)})
        split.loc[group.index] = units.map(chosen).to_numpy()
    return split


def sample_negatives(frame: pd.DataFrame, seed: int, max_tries: int = 50) -> np.ndarray:
    """For each pair, the index of another pair of the same source and split with a different anchor and explicit
    (and a different ``topic``, where the source gives one), whose explicit side may be a negative (``donor``)."""
    chosen = np.full(len(frame), -1, dtype=np.int64)
    implicit_keys = frame["implicit"].map(normalise).to_numpy()
    explicit_keys = frame["explicit"].map(normalise).to_numpy()
    topics = frame["topic"].to_numpy() if "topic" in frame.columns else np.full(len(frame), None)
    groups = frame["group"].to_numpy() if "group" in frame.columns else np.full(len(frame), None)
    donors = frame["donor"].to_numpy(dtype=bool) if "donor" in frame.columns else np.ones(len(frame), dtype=bool)
    for (source, split), group in frame.groupby(["source", "split"], sort=True):
        rng = source_rng(seed, f"{source}/{split}", purpose=1)
        positions = frame.index.get_indexer(group.index)
        positions_donors = positions[donors[positions]]
        if len(positions_donors) == 0:
            continue
        if len(positions) < 2:
            continue
        for position in positions:
            for _ in range(max_tries):
                other = positions_donors[rng.integers(len(positions_donors))]
                if (implicit_keys[other] != implicit_keys[position] and explicit_keys[other] != explicit_keys[position]
                        and (pd.isna(topics[position]) or topics[other] != topics[position])
                        and (pd.isna(groups[position]) or groups[other] != groups[position])):
                    chosen[position] = other
                    break
    return chosen


def resolve_sources(sources: list[str] | None) -> list[str]:
    """Source names with presets (``paper``, ``figurative``, ``all``) expanded, in order, without repeats; the
    default is the ``paper`` preset."""
    names: list[str] = []
    for name in sources or DEFAULT_SOURCES:
        for member in PRESETS.get(name, [name]):
            if member not in names:
                names.append(member)
    unknown = [n for n in names if n not in SOURCES]
    if unknown:
        raise DataError(f"unknown corpus source(s) {', '.join(unknown)}; known: {', '.join(SOURCES)}; "
                        f"presets: {', '.join(PRESETS)}")
    return names


def build_corpus(sources: list[str] | None = None, seed: int = 0, root=None,
                 cap: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(corpus, report): the corpus rows and a per-source table of pairs and drops. ``cap`` bounds every source
    (a source's own lower cap wins), so that no source dominates and the corpus embeds in minutes on a CPU."""
    collected = [SOURCES[name](root) for name in resolve_sources(sources)]
    if cap is not None:
        for source in collected:
            source.cap = cap if source.cap is None else min(source.cap, cap)
    frame, dropped = clean_pairs(collected, held_out_texts(root))
    frame = apply_caps(frame, collected, seed, dropped)
    frame["split"] = assign_splits(frame, seed)
    negatives = sample_negatives(frame, seed)
    no_negative = negatives < 0
    for source in frame.loc[no_negative, "source"]:
        dropped[(source, "no negative available")] += 1
    frame["negative_pair_id"] = negatives
    frame["pair_id"] = np.arange(len(frame))
    explicit = frame["explicit"].tolist()  # one column read, not one per row (most of a corpus build's time)
    frame["negative"] = [explicit[j] if j >= 0 else None for j in negatives]
    frame = frame.loc[~no_negative, COLUMNS + PROVENANCE_COLUMNS].reset_index(drop=True)
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
            "licence": source_licence(source),
            "cap": f"{source.cap:,}" if source.cap is not None else "-",
            "dropped": ", ".join(f"{reason} {n:,}" for reason, n in sorted(drops.items())) or "-",
            "description": source.description,
        })
    total = {"source": "total", "pos_pairs": len(frame), **{s: int((frame["split"] == s).sum()) for s, _ in SPLITS},
             "generation": "", "licence": "", "cap": "", "dropped": f"{sum(dropped.values()):,}", "description": ""}
    return pd.DataFrame(rows + [total])


def format_report(report: pd.DataFrame) -> str:
    """A markdown table like the paper's Table 6 (every count with thousands separators, as in the text cells)."""
    columns = ["source", "pos_pairs", "train", "val", "test", "generation", "licence", "cap", "dropped"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for _, row in report.iterrows():
        lines.append("| " + " | ".join(f"{row[c]:,}" if isinstance(row[c], (int, np.integer)) else str(row[c])
                                       for c in columns) + " |")
    return "\n".join(lines)


def from_official(frame: pd.DataFrame, path: str | os.PathLike, seed: int = 0) -> pd.DataFrame:
    """Convert the official all_data.csv schema to ours (its pairs already carry their negatives)."""
    out = official_pairs(frame, path)
    out["split"] = assign_splits(out, seed)
    return with_provenance(out[COLUMNS + ["origin"]])


def with_provenance(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every provenance column (empty where the file has none)."""
    for column in PROVENANCE_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    return frame


def load_corpus(path: str | os.PathLike, seed: int = 0) -> pd.DataFrame:
    """Read a corpus in our parquet/csv format or the official all_data.csv schema."""
    from pragmeter.io import read_table

    frame = read_table(path)
    if is_official(frame):
        return from_official(frame, path, seed)
    needed = ["source", "implicit", "explicit", "negative"]
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: not a corpus file: missing column(s) {', '.join(missing)} "
                        f"(expected {', '.join(COLUMNS)} or the official {', '.join(OFFICIAL_COLUMNS)})")
    require_values(frame, ["implicit", "explicit", "negative"], path)
    if "split" not in frame.columns:
        frame["split"] = assign_splits(frame, seed)
    else:  # a row of another split would be left out of training and evaluation without a word
        unknown = ~frame["split"].isin([name for name, _ in SPLITS])
        if unknown.any():
            row = int(np.flatnonzero(unknown.to_numpy())[0])
            raise DataError(f"{path}: data row {row + 1}, field 'split': {frame['split'].iloc[row]!r} is not one of "
                            f"{', '.join(name for name, _ in SPLITS)} ({int(unknown.sum())} such row(s); leave the "
                            "column out to have splits assigned)")
    if "pair_id" not in frame.columns:
        frame["pair_id"] = np.arange(len(frame))
    if "pragmatic" not in frame.columns:
        frame["pragmatic"] = True
    return with_provenance(frame).reset_index(drop=True)


def write_corpus(frame: pd.DataFrame, path: str | os.PathLike, overwrite: bool = False) -> Path:
    from pragmeter.io import write_table

    write_table(frame, path, overwrite=overwrite)
    return Path(path)


def make_corpus_file(output: str | os.PathLike, sources: str | None = None, official: str | os.PathLike | None = None,
                     seed: int = 0, root=None, cap: int | None = None, overwrite: bool = False,
                     on_report: Callable[[str], None] | None = None) -> pd.DataFrame:
    """``pragmeter impscore corpus build``: the corpus of ``sources`` (comma-separated names and presets; default
    the paper's), or the official all_data.csv ``official`` converted, written to ``output`` (refused before any
    work unless ``overwrite``). The per-source table of a build goes to ``on_report`` (default: the ``pragmeter``
    logger, as the counts)."""
    from pragmeter.io import check_output

    check_output(output, overwrite)
    if official:
        frame = load_corpus(official, seed=seed)
        log.info(f"{len(frame):,} pairs from {official}")
    else:
        names = [s.strip() for s in sources.split(",")] if sources else None
        frame, report = build_corpus(names, seed=seed, root=root, cap=cap)
        (on_report or log.info)(format_report(report))
    write_corpus(frame, output, overwrite=overwrite)
    log.info(f"wrote {len(frame):,} pairs -> {output}")
    return frame


def corpus_fingerprint(corpus) -> str:
    """sha256 over the corpus rows, so a model card names exactly the data it was trained on."""
    digest = hashlib.sha256()
    for row in corpus[["source", "implicit", "explicit", "negative", "split"]].itertuples(index=False):
        digest.update("\x1f".join(map(str, row)).encode("utf-8") + b"\x1e")
    return digest.hexdigest()
