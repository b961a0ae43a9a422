"""Source ablation and training variants of ImpScore, scored on our OOD development sets (issue 11).

    python experiments/impscore_ablation.py CORPUS[,CORPUS…] '[{"name": "all"}, {"name": "fig", "keep": "fig", "seeds": [0, 1, 2]}]'

Each variant is a JSON object: ``keep`` (source list, or "fig" for every non-paper source), ``drop`` (sources),
``seeds``, ``enc`` (the variant's encoder; "A+B" = heads on the concatenated embeddings of A and B, an ablation
only, not a shipped model type), ``drop_origin`` (regex: corpus rows whose origin matches are left out), ``by_category`` (also print
dev_ranking τ per category), and TrainConfig fields by short name (alpha, epochs, gamma1, gamma2, dim, hn = hard_negatives,
ha = hard_alpha, sw = source_weights, bs = batch_size, lr, ibh = in_batch_negatives). The corpus is embedded once (cached); every variant prints one JSON line per seed with the test
accuracies and the OOD figures: Kendall τ on check/dev ranking, accuracy on check/dev choice, and the battery's
two checks. Selection uses these development sets only, never a test split.
"""
from __future__ import annotations

import argparse
import json
import logging
import time

import numpy as np
import pandas as pd
import torch

from pragmeter.encoders import embeddings_dir
from pragmeter.encoders.embedding_cache import EmbeddingCache
from pragmeter.impscore import ood
from pragmeter.impscore.model import ImpScore
from pragmeter.impscore.training import TrainConfig, train_heads
from pragmeter.impscore.triplets import TripletEmbeddings, embed_corpus

ENC = "all-MiniLM-L6-v2"  # a variant's encoder unless it names one (--encoder)
CACHE = embeddings_dir()


class Concatenated(ImpScore):
    """Heads on the concatenation of several frozen encoders' embeddings (``enc`` "A+B")."""

    def __init__(self, heads, encoder: str):
        super().__init__(heads, encoder)
        self.members = [ImpScore(heads, e, embedding_cache=EmbeddingCache(CACHE, e)) for e in encoder.split("+")]

    def encode(self, texts):
        return np.concatenate([member.encode(texts) for member in self.members], axis=1)


def model_for(heads, encoder: str) -> ImpScore:
    if "+" in encoder:
        return Concatenated(heads, encoder)
    return ImpScore(heads, encoder, embedding_cache=EmbeddingCache(CACHE, encoder))


def embed(corpus, encoder: str) -> dict:
    """Split embeddings of the corpus; for "A+B" each member's (cached per member) side by side."""
    members = [embed_corpus(corpus, e, CACHE, show_progress=False) for e in encoder.split("+")]
    if len(members) == 1:
        return members[0]
    joined = {}
    for name, first in members[0].items():
        parts = [m[name] for m in members]
        cat = (lambda field: None if getattr(first, field) is None else torch.cat([getattr(p, field) for p in parts], 1))
        joined[name] = TripletEmbeddings(cat("e1"), cat("e2"), cat("e3"), first.sources, first.pragmatic, cat("e4"), first.hard)
    return joined


def ood_eval(heads, encoder: str = ENC):
    return ood.evaluate_development_sets(model_for(heads, encoder))


def dev_rank_by_category(heads, encoder: str = ENC):
    result = ood.evaluate_ranking(model_for(heads, encoder), ood.load_ranking(ood.DATA_DIR / "dev_ranking.json"))
    return {c: round(m["kendall_tau"], 3) for c, m in result["per_category"].items()}


def subset(splits, keep):
    res = {}
    for name, s in splits.items():
        idx = torch.tensor([i for i, src in enumerate(s.sources) if keep(src)], dtype=torch.long)
        res[name] = TripletEmbeddings(s.e1[idx], s.e2[idx], s.e3[idx], [s.sources[i] for i in idx.tolist()],
                                      None if s.pragmatic is None else s.pragmatic[idx],
                                      None if s.e4 is None else s.e4[idx], None if s.hard is None else s.hard[idx])
    return res


def train_config(v: dict, enc: str, seed: int) -> TrainConfig:
    """The TrainConfig of a variant (its short field names; α = 8 unless given) for one seed."""
    return TrainConfig(encoder=enc, alpha=v.get("alpha", 8.0), epochs=v.get("epochs", 30), seed=seed,
                       gamma1=v.get("gamma1", 0.5), gamma2=v.get("gamma2", 0.7), dim=v.get("dim", 64),
                       hard_negatives=v.get("hn", "none"), hard_alpha=v.get("ha", 0.0),
                       source_weights=v.get("sw", {}), batch_size=v.get("bs", 8192), lr=v.get("lr", 0.01),
                       in_batch_negatives=v.get("ibh", 0.0))


def train_and_report(splits, v: dict, enc: str, seed: int):
    """Train one variant and seed; print its JSON line (validation, test and development-set figures); return the
    trained heads."""
    t = time.time(); r = train_heads(splits, train_config(v, enc, seed), show_progress=False)
    print(json.dumps({"v": v.get("name"), "seed": seed, "val_imp": round(r.val["implicitness_accuracy"], 4),
                      "val_prag": round(r.val["pragmatics_accuracy"], 4), "imp": round(r.test["implicitness_accuracy"], 4),
                      "prag": round(r.test["pragmatics_accuracy"], 4), **ood_eval(r.heads, enc),
                      **({"dev_rank_by_category": dev_rank_by_category(r.heads, enc)} if v.get("by_category") else {}),
                      "sec": round(time.time() - t)}), flush=True)
    return r.heads


PAPER = {"implicit_hate", "sbic", "imppres", "circa", "ludwig", "r3_sarcasm", "bbh_snarks", "inli_train", "ishate_train"}

def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", help="corpus parquet file(s), comma-separated")
    parser.add_argument("variants", help="JSON list of variants (see above)")
    parser.add_argument("--encoder", default=ENC, help=f"encoder of the variants that name none (default {ENC})")
    parser.add_argument("--limit", type=int, default=None, help="first N pairs of each split only (smoke runs)")
    args = parser.parse_args(argv)
    corpus = pd.concat([pd.read_parquet(p) for p in args.corpus.split(",")], ignore_index=True)
    if args.limit:
        corpus = corpus.groupby("split", sort=False).head(args.limit).reset_index(drop=True)
    corpus["pragmatic"] = corpus["pragmatic"].fillna(True).astype(bool)
    t = time.time()
    embedded = {args.encoder: embed(corpus, args.encoder)}
    print("embedded", round(time.time() - t), flush=True)
    for v in json.loads(args.variants):
        enc = v.get("enc", args.encoder)
        if enc not in embedded:
            embedded[enc] = embed(corpus, enc)
        keep = v.get("keep"); drop = set(v.get("drop", []))
        sel = (lambda s: (keep is None or s in keep or (keep == "fig" and s not in PAPER)) and s not in drop)
        sp = subset(embedded[enc], sel)
        if v.get("drop_origin"):  # e.g. written groups of some categories: filter rows, re-read the (cached) embeddings
            rows = corpus[~corpus["origin"].fillna("").str.contains(v["drop_origin"], regex=True)]
            sp = subset(embed(rows, enc), sel)
        for seed in v.get("seeds", [0]):
            train_and_report(sp, v, enc, seed)


if __name__ == "__main__":
    logging.basicConfig(format="%(message)s")  # the library's messages (the pragmeter logger), as a command shows them
    logging.getLogger("pragmeter").setLevel(logging.INFO)
    main()
