"""DNC (Poliak et al., 2018): NLI recast from semantic annotations, labelled entailed or not-entailed. ``train`` reads
the three recasts released with a training file (megaveridicality, sentiment, VerbNet); ``test`` every entailed / not-entailed test file (the KG-relations recast is graded 1–5 and is not read)."""

from __future__ import annotations

import os

from pragmeter.datasets.nli.base import NliPair, check_split, checked_pairs, json_list

TRAIN = ("megaveridicality", "sentiment", "verbnet")
TEST = ("factuality", "megaveridicality", "puns", "sentiment", "verbnet", "winogender")  # kg_relations is graded
FILES = {"train": tuple(f"dnc/train/recast_{n}_data.json" for n in TRAIN),
         "test": tuple(f"dnc/test/recast_{n}_data.json" for n in TEST)}
LABELS = {"entailed": "entailment", "not-entailed": "not_entailment"}


def load(split: str = "train", root: str | os.PathLike | None = None) -> list[NliPair]:
    pairs = []
    for relative in FILES[check_split("DNC", split, FILES)]:
        recast = relative.split("recast_")[1].removesuffix("_data.json")
        rows = [{**row, "recast": recast} for row in json_list(relative, root)]
        pairs += checked_pairs(relative, rows, "dnc", "context", "hypothesis", "label", LABELS, group="recast")
    return pairs
