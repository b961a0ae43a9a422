"""Training speed: pragmeter (embeddings computed once, cached) vs the official-style loop (the frozen encoder
re-run on every batch of every epoch), same encoder, same pairs, same epochs, measured side by side in one run.

    python benchmarks/impscore_training_speed.py            # 500 pairs, 30 epochs, all-MiniLM-L6-v2

Prints the wall time of each and the ratio official / ours, and the machine state (``machine.py``: CPU, threads,
load before and after, CPU used by other processes), with a loud warning when the machine was not quiet.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from machine import MachineWatch

from pragmeter.encoders import load_encoder
from pragmeter.impscore.corpus import build_corpus
from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
from pragmeter.impscore.losses import ImpScoreLoss
from pragmeter.impscore.training import TrainConfig, train


def official_style(pairs, val_pairs, encoder_name: str, epochs: int, batch_size: int, seed: int) -> float:
    """The official loop's shape: every batch of every epoch, and the validation after each epoch, encodes again."""
    torch.manual_seed(seed)
    encoder = load_encoder(encoder_name)
    heads = ImpScoreHeads(HeadsConfig(encoder.get_embedding_dimension()))
    loss_fn = ImpScoreLoss(heads)
    optimizer = torch.optim.Adam(heads.parameters(), lr=0.01, weight_decay=0.001)
    started = time.perf_counter()
    for _ in range(epochs):
        order = torch.randperm(len(pairs)).tolist()
        for start in range(0, len(pairs), batch_size):
            batch = [pairs[i] for i in order[start : start + batch_size]]
            with torch.no_grad():
                e1, e2, e3 = (torch.as_tensor(encoder.encode([row[k] for row in batch], convert_to_numpy=True))
                              for k in range(3))
            loss = loss_fn(e1, e2, e3)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            v1, v2, v3 = (torch.as_tensor(encoder.encode([row[k] for row in val_pairs], convert_to_numpy=True))
                          for k in range(3))
            heads(v1), heads(v2), heads(v3)
    return time.perf_counter() - started


def ours(corpus, encoder_name: str, epochs: int, batch_size: int, seed: int) -> float:
    """pragmeter's path from an empty cache (``impscore.training.train``, no model folder written): encode each
    distinct text once, then train on the cache."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        train(TrainConfig(encoder=encoder_name, epochs=epochs, batch_size=batch_size, seed=seed), None, corpus,
              cache_root=cache, show_progress=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=8192, help="training batch size (official default 8192)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    corpus, _ = build_corpus(seed=args.seed)
    sample = corpus[corpus["split"] == "train"].sample(n=args.pairs, random_state=args.seed).copy()
    # Validation needs rows too: hold out a tenth of the sample for both methods' model selection.
    sample["split"] = ["val" if i % 10 == 0 else "train" for i in range(len(sample))]
    train_rows, val_rows = sample[sample["split"] == "train"], sample[sample["split"] == "val"]
    pairs = list(zip(train_rows["implicit"], train_rows["explicit"], train_rows["negative"]))
    val_pairs = list(zip(val_rows["implicit"], val_rows["explicit"], val_rows["negative"]))
    load_encoder(args.encoder)  # load once outside both timings

    # ours before and after the official loop, so slow drift in machine load affects both sides alike
    with MachineWatch() as watch:
        ours_before = ours(sample, args.encoder, args.epochs, args.batch_size, args.seed)
        official_seconds = official_style(pairs, val_pairs, args.encoder, args.epochs, args.batch_size, args.seed)
        ours_after = ours(sample, args.encoder, args.epochs, args.batch_size, args.seed)
    ours_seconds = (ours_before + ours_after) / 2
    print(f"encoder {args.encoder}, {args.pairs} pairs, {args.epochs} epochs, batch {args.batch_size}")
    print(f"official-style loop (encoder every batch): {official_seconds:8.1f} s")
    print(f"pragmeter (cached embeddings):            {ours_seconds:8.1f} s (mean of {ours_before:.1f} s before "
          f"and {ours_after:.1f} s after, each from an empty cache)")
    print(f"speed-up: {official_seconds / ours_seconds:.1f}x")
    print(watch.summary())


if __name__ == "__main__":
    main()
