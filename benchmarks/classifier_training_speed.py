"""Classifier fine-tuning speed on the CPU: examples/s of the training loop with plain shuffled batches (the loop
before length grouping) and with length-grouped batches, in fp32 and with bf16 autocast, on the same examples,
measured side by side in one run. Also the held-out accuracy after the short run, so a faster setting that learns
worse shows.

    python benchmarks/classifier_training_speed.py                    # ISHate Task A, 2048 train examples
    python benchmarks/classifier_training_speed.py --recipe inli      # INLI 4-way pairs

Each setting trains one epoch from the same seed and initial weights and is timed by the trainer itself
(``train_seconds``: the epoch loop without validation). Order: plain fp32, grouped fp32, grouped bf16, plain fp32
again; the plain figure is the mean of the first and last run so drift in the machine shows as their gap.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import torch
from machine import MachineWatch

from pragmeter.classify.model import ClassifierSettings, TextClassifier
from pragmeter.classify.evaluators import ClassificationEvaluator
from pragmeter.classify.training import FineTuneConfig, Trainer


def one_epoch(data, encoder: str, config: FineTuneConfig) -> dict:
    settings = ClassifierSettings(labels=data.labels, base_encoder=encoder, max_length=config.max_length,
                                  input_kind=data.input_kind)
    classifier = TextClassifier.from_encoder(encoder, settings, "cpu", seed=config.seed, precision=config.precision)
    with tempfile.TemporaryDirectory() as work:
        result = Trainer(classifier, config, Path(work), progress=False).fit(data.train, data.val)
    seconds = result.history[0]["train_seconds"]
    report = ClassificationEvaluator(data.test, "test").evaluate(classifier).details["report"]
    return {"train_seconds": seconds, "examples_per_second": len(data.train) / seconds,
            "val_macro_f1": result.history[0]["val_macro_f1"], "heldout_accuracy": report["accuracy"],
            "heldout_macro_f1": report["macro_f1"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", choices=["ishate-a", "inli"], default="ishate-a")
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    parser.add_argument("--train", type=int, default=2048, help="training examples (a seeded sample of train)")
    parser.add_argument("--heldout", type=int, default=1024, help="validation examples scored after the epoch")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()

    if args.recipe == "inli":
        from pragmeter.classify.recipes.inli import build

        data = build("4way", "standard")
    else:
        from pragmeter.classify.recipes.ishate import build

        data = build("implicit")
    pick = torch.randperm(len(data.train), generator=torch.Generator().manual_seed(args.seed))[:args.train].tolist()
    data.train = data.train.subset(pick)
    # Held-out figures come from the validation split (nothing is selected on them); the test split is untouched.
    data.test = data.val.head(args.heldout)
    data.val = data.val.head(64)

    def config(grouped: bool, precision: str) -> FineTuneConfig:
        return FineTuneConfig(epochs=1, batch_size=args.batch_size, lr=5e-5, warmup_ratio=0.06, seed=args.seed,
                              group_by_length=grouped, precision=precision)

    runs = {}
    with MachineWatch() as watch:
        runs["plain fp32 (before)"] = one_epoch(data, args.encoder, config(False, "fp32"))
        runs["grouped fp32"] = one_epoch(data, args.encoder, config(True, "fp32"))
        runs["grouped bf16"] = one_epoch(data, args.encoder, config(True, "bf16"))
        runs["plain fp32 (after)"] = one_epoch(data, args.encoder, config(False, "fp32"))
    plain = (runs["plain fp32 (before)"]["examples_per_second"] + runs["plain fp32 (after)"]["examples_per_second"]) / 2
    print(f"{args.recipe}, encoder {args.encoder}, {len(data.train)} training examples, batch {args.batch_size}, "
          f"torch threads {torch.get_num_threads()}")
    print(f"{'setting':22s} {'examples/s':>10s} {'x plain':>8s} {'held-out acc':>12s} {'macro-F1':>9s}")
    for name, run in runs.items():
        print(f"{name:22s} {run['examples_per_second']:10.1f} {run['examples_per_second'] / plain:8.2f} "
              f"{run['heldout_accuracy']:12.4f} {run['heldout_macro_f1']:9.4f}")
    print(watch.summary())
    if args.output:
        Path(args.output).write_text(json.dumps({"arguments": vars(args), "runs": runs, "plain_mean": plain,
                                                 "machine": watch.record}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
