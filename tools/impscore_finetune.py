"""Issue 11 experiment: fine-tune the top layers of the sentence encoder together with ImpScore's heads, and score
the result on our OOD development sets (never a test split for choices).

    python tools/impscore_finetune.py CORPUS.parquet OUT.jsonl [--top 2] [--epochs 3] [--seed 0]

The encoder (all-MiniLM-L6-v2, a BERT) is split: embeddings and the lower layers stay frozen and are run once
per distinct text (their token states kept in memory, fp16); the top ``--top`` layers, mean pooling,
normalisation (as sentence-transformers does) and the paper's heads are trained with the paper's margin losses on
mini-batches of triplets. The heads start from the frozen-encoder solution (train_heads on cached embeddings, the
shipped recipe), so epoch 0 is the frozen baseline and later epochs show what fine-tuning adds. After each epoch:
val implicitness/pragmatics accuracy and the OOD figures (dev/check ranking τ, dev/check choice, battery), one
JSON line each to OUT.jsonl; test accuracies for the epoch chosen on val at the end.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import time

import numpy as np
import pandas as pd
import torch
from torch.nn.functional import normalize

from pragmeter.encoders import embeddings_dir, load_encoder
from pragmeter.impscore import ood
from pragmeter.impscore.losses import ImpScoreLoss, triplet_outputs
from pragmeter.impscore.training import TrainConfig, embed_corpus, train_heads
from pragmeter.impscore.accuracy import triplet_metrics

ENCODER = "all-MiniLM-L6-v2"


class SplitEncoder(torch.nn.Module):
    """Frozen lower part run once per text; trainable top layers + mean pooling + L2 normalisation."""

    def __init__(self, top: int, max_length: int = 128):
        super().__init__()
        st = load_encoder(ENCODER, "cpu")
        self.tokenizer = st.tokenizer
        self.bert = st[0].auto_model
        self.max_length = max_length
        layers = self.bert.encoder.layer
        self.lower, self.top = layers[:len(layers) - top], layers[len(layers) - top:]
        for p in self.bert.parameters():
            p.requires_grad_(False)
        for p in self.top.parameters():
            p.requires_grad_(True)
        self.states: dict[str, torch.Tensor] = {}
        self.reference = st

    @torch.no_grad()
    def precompute(self, texts, batch_size: int = 128) -> None:
        texts = [t for t in dict.fromkeys(texts) if t not in self.states]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        self.bert.eval()
        started = time.time()
        for n, start in enumerate(range(0, len(order), batch_size)):
            batch = [texts[i] for i in order[start:start + batch_size]]
            enc = self.tokenizer(batch, truncation=True, max_length=self.max_length, padding=True, return_tensors="pt")
            h = self.bert.embeddings(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))
            mask = self._additive(enc["attention_mask"])
            for layer in self.lower:
                h = self._layer(layer, h, mask)
            for text, states, m in zip(batch, h, enc["attention_mask"]):
                self.states[text] = states[: int(m.sum())].to(torch.float16).clone()
            if n % 20 == 0:
                print(f"  precomputed {start + len(batch)}/{len(texts)} ({time.time() - started:.0f} s)", file=sys.stderr)

    @staticmethod
    def _additive(mask: torch.Tensor) -> torch.Tensor:
        return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min

    @staticmethod
    def _layer(layer, h, mask):
        out = layer(h, attention_mask=mask)
        return out[0] if isinstance(out, tuple) else out

    def forward(self, texts) -> torch.Tensor:
        states = [self.states[t] for t in texts]
        length = max(s.shape[0] for s in states)
        h = torch.zeros(len(states), length, states[0].shape[1])
        mask = torch.zeros(len(states), length)
        for i, s in enumerate(states):
            h[i, : s.shape[0]] = s.float()
            mask[i, : s.shape[0]] = 1
        additive = self._additive(mask)
        for layer in self.top:
            h = self._layer(layer, h, additive)
        pooled = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdim=True)
        return normalize(pooled, dim=1)

    @torch.no_grad()
    def embed(self, texts, batch_size: int = 256) -> torch.Tensor:
        self.eval()
        self.precompute(texts)
        order = sorted(range(len(texts)), key=lambda i: self.states[texts[i]].shape[0])
        out = torch.zeros(len(texts), self.bert.config.hidden_size)
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            out[rows] = self([texts[i] for i in rows])
        return out


class Scorer:
    """What ood.evaluate_* need: score(texts) and pragmatic_distance(a, b)."""

    def __init__(self, encoder: SplitEncoder, heads):
        self.encoder, self.heads = encoder, heads

    @torch.no_grad()
    def score(self, texts):
        self.heads.eval()
        return self.heads(self.encoder.embed(list(texts)))[0].numpy()

    @torch.no_grad()
    def pragmatic_distance(self, a, b):
        self.heads.eval()
        _, pa, _ = self.heads(self.encoder.embed(list(a)))
        _, pb, _ = self.heads(self.encoder.embed(list(b)))
        return self.heads.pragmatic_distance_from_features(pa, pb).numpy()


def split_metrics(encoder: SplitEncoder, heads, part: pd.DataFrame) -> dict:
    with torch.no_grad():
        heads.eval()
        e = [encoder.embed(part[c].tolist()) for c in ("implicit", "explicit", "negative")]
        out = triplet_outputs(heads, *e)
    metrics = triplet_metrics(out, torch.tensor(part["pragmatic"].to_numpy(dtype=bool)))
    return {"imp": round(metrics["implicitness_accuracy"], 4), "prag": round(metrics["pragmatics_accuracy"], 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus")
    parser.add_argument("output")
    parser.add_argument("--top", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--encoder-lr", type=float, default=2e-5)
    parser.add_argument("--heads-lr", type=float, default=1e-3)
    parser.add_argument("--alpha", type=float, default=8.0)
    parser.add_argument("--hard-alpha", type=float, default=0.0,
                        help="weight of the pragmatic margin against the corpus's hard_negative column (0 = paper)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None, help="first N training triplets (smoke runs)")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    corpus = pd.read_parquet(args.corpus)
    corpus["pragmatic"] = corpus["pragmatic"].fillna(True).astype(bool)
    # Start from the frozen-encoder solution (the shipped recipe on cached embeddings).
    config = TrainConfig(encoder=ENCODER, alpha=args.alpha, seed=args.seed,
                         hard_negatives="source" if args.hard_alpha > 0 else "none", hard_alpha=args.hard_alpha)
    frozen = train_heads(embed_corpus(corpus, ENCODER, embeddings_dir(), show_progress=False), config, show_progress=False)
    heads = frozen.heads
    encoder = SplitEncoder(args.top)
    corpus["hard_negative"] = corpus.get("hard_negative", pd.Series("", index=corpus.index)).fillna("")
    parts = {s: p.reset_index(drop=True) for s, p in corpus.groupby("split")}
    if args.limit:
        parts["train"] = parts["train"].head(args.limit)
    hard_texts = corpus.loc[corpus["hard_negative"] != "", "hard_negative"]
    texts = pd.unique(pd.concat([corpus[c] for c in ("implicit", "explicit", "negative")] + [hard_texts])).tolist()
    encoder.precompute(texts)
    # The split path must reproduce the encoder it came from before anything is trained.
    probe = texts[:64]
    gap = (encoder.embed(probe) - torch.from_numpy(encoder.reference.encode(probe, convert_to_numpy=True))).abs().max()
    assert gap < 1e-3, f"split encoder differs from sentence-transformers by {gap}"
    loss_fn = ImpScoreLoss(heads, config.gamma1, config.gamma2, config.alpha)
    optimizer = torch.optim.AdamW([{"params": list(encoder.top.parameters()), "lr": args.encoder_lr, "weight_decay": 0.01},
                                   {"params": list(heads.parameters()), "lr": args.heads_lr, "weight_decay": 0.001}])
    train = parts["train"]
    log = open(args.output, "a", encoding="utf-8")

    def record(epoch: int, extra: dict) -> dict:
        row = {"epoch": epoch, "top": args.top, "hard_alpha": args.hard_alpha, "seed": args.seed, "encoder_lr": args.encoder_lr,
               "heads_lr": args.heads_lr, "val": split_metrics(encoder, heads, parts["val"]),
               **ood.evaluate_development_sets(Scorer(encoder, heads)), **extra}
        print(json.dumps(row), flush=True)
        log.write(json.dumps(row) + "\n")
        log.flush()
        return row

    best = (record(0, {"frozen": True})["val"]["imp"], 0, copy.deepcopy((encoder.top.state_dict(), heads.state_dict())))
    generator = torch.Generator().manual_seed(args.seed)
    for epoch in range(1, args.epochs + 1):
        encoder.train()
        heads.train()
        order = torch.randperm(len(train), generator=generator).tolist()
        started, losses = time.time(), []
        for step, start in enumerate(range(0, len(order), args.batch_size)):
            rows = train.iloc[order[start:start + args.batch_size]]
            hard = torch.tensor((rows["hard_negative"] != "").to_numpy())
            fourth = [h or n for h, n in zip(rows["hard_negative"], rows["negative"])]
            batch_texts = list(dict.fromkeys(rows["implicit"].tolist() + rows["explicit"].tolist() +
                                             rows["negative"].tolist() + fourth))
            index = {t: i for i, t in enumerate(batch_texts)}
            embedded = encoder(batch_texts)
            e1, e2, e3 = (embedded[[index[t] for t in rows[c]]] for c in ("implicit", "explicit", "negative"))
            e4 = embedded[[index[t] for t in fourth]]
            loss = loss_fn(e1, e2, e3, torch.tensor(rows["pragmatic"].to_numpy(dtype=bool)), e4=e4, hard=hard,
                           hard_alpha=args.hard_alpha)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if step % 25 == 0:
                print(f"  epoch {epoch} step {step}/{len(order) // args.batch_size} loss {np.mean(losses[-25:]):.4f} "
                      f"({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
        row = record(epoch, {"train_loss": round(float(np.mean(losses)), 4), "seconds": round(time.time() - started)})
        if row["val"]["imp"] > best[0]:
            best = (row["val"]["imp"], epoch, copy.deepcopy((encoder.top.state_dict(), heads.state_dict())))
    encoder.top.load_state_dict(best[2][0])
    heads.load_state_dict(best[2][1])
    final = {"selected_epoch": best[1], "test": split_metrics(encoder, heads, parts["test"]), "top": args.top,
             "seed": args.seed}
    print(json.dumps(final), flush=True)
    log.write(json.dumps(final) + "\n")


if __name__ == "__main__":
    main()
