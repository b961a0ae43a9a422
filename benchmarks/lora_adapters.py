"""``impscore train --encoder-adapters``'s low-rank adapters: the project's own (encoders.low_rank.LowRankAdapter)
against peft's LoRA (``LoraConfig`` injected into the same layers), side by side in one run: the same corpus
pairs, heads, rank, layers, seed and steps (``impscore.finetune.train_layers``, one epoch), on the CPU.

    pip install peft            # not a dependency of pragmeter; it pulls accelerate and psutil
    python benchmarks/lora_adapters.py            # 512 training pairs, rank 8, the top 2 layers, seeds 0, 1, 2
    python benchmarks/lora_adapters.py --pairs 1024 --rank 32 --layers 6 --seeds 0,1,2,3,4

Prints, per way: milliseconds per training step (the epoch's wall time over its steps, validation excluded), the
epoch's training loss and the validation implicitness accuracy, as mean ± standard deviation over the seeds. peft
with ``lora_alpha`` = rank scales the change by 1, as the project's adapters do, and starts from the same draws:
the same function trained from the same start, so its loss equals the project's to float rounding and only the
step time tells them apart; ``lora_alpha`` = 2 × rank (peft's common choice) is another learning rate for the
change. With the machine state (``machine.py``) and a loud warning when the machine was not quiet.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import torch
from machine import MachineWatch

from pragmeter.impscore.finetune import TrainableEncoder, train_layers, triplet_rows


class PeftEncoder(TrainableEncoder):
    """TrainableEncoder whose adapters are peft's LoRA layers (scaling ``alpha`` / rank) on the same matrices."""

    alpha_per_rank = 1.0

    def unfreeze(self, layers: int, adapter_rank: int = 0) -> list[torch.nn.Parameter]:
        from peft import LoraConfig, inject_adapter_in_model

        for p in self.bert.parameters():
            p.requires_grad_(False)
        count = len(self.bert.encoder.layer)
        top = list(range(count - layers, count))
        config = LoraConfig(r=adapter_rank, lora_alpha=self.alpha_per_rank * adapter_rank, lora_dropout=0.0,
                            target_modules=["query", "key", "value", "dense"], layers_to_transform=top,
                            layers_pattern="layer", bias="none")
        state = torch.get_rng_state()
        inject_adapter_in_model(config, self.bert)
        # the same draws as the project's adapters (down: kaiming-uniform, matrix by matrix in module order; up:
        # zero), so that with alpha = rank both ways train the same function from the same start
        torch.set_rng_state(state)
        for module in self.bert.modules():
            if hasattr(module, "lora_A") and "default" in module.lora_A:
                torch.nn.init.kaiming_uniform_(module.lora_A["default"].weight, a=5 ** 0.5)
        # as the project's adapters: the adapted matrices frozen, the factors, biases and layer norms of the top
        # layers trained
        trainable = [p for i in top for name, p in self.bert.encoder.layer[i].named_parameters()
                     if not name.endswith("base_layer.weight")]
        for p in trainable:
            p.requires_grad_(True)
        return trainable

    def adapter_factors(self) -> dict[str, torch.Tensor]:  # timing and loss only: nothing is shipped here
        return {}


def run(kind, alpha_per_rank, texts, heads, rows, config, steps) -> dict:
    """One epoch of adapter training from the base encoder: ms per step (validation excluded), loss, accuracy."""
    from pragmeter.encoders import require_encoder

    encoder = kind(require_encoder("all-MiniLM-L6-v2"), "cpu", texts)
    if alpha_per_rank is not None:
        encoder.alpha_per_rank = alpha_per_rank
    validation, spent = encoder.table, [0.0]  # validation embeds the val texts once per epoch: timed apart

    def timed_table(rows_):
        started = time.perf_counter()
        out = validation(rows_)
        spent[0] += time.perf_counter() - started
        return out

    encoder.table = timed_table
    started = time.perf_counter()
    epoch = train_layers(encoder, heads, rows, config, bf16=False).history[-1]
    return {"ms/step": (time.perf_counter() - started - spent[0]) / steps * 1000, "train loss": epoch["train_loss"],
            "val implicitness": epoch["val_implicitness"]}


def spread(values: list[float]) -> str:
    return f"{statistics.mean(values):.4g} ± {statistics.stdev(values):.2g}" if len(values) > 1 else f"{values[0]:.4g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=512, help="training pairs (the validation split: a quarter)")
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--layers", type=int, default=2, help="top encoder layers with adapters")
    parser.add_argument("--batch-size", type=int, default=16, help="triplets per step")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated training seeds (the same for each way)")
    args = parser.parse_args()

    import pandas as pd

    from pragmeter.impscore.corpus import build_corpus
    from pragmeter.impscore.model import ImpScore
    from pragmeter.impscore.training import TrainConfig

    corpus, _ = build_corpus(seed=0)
    train = corpus[corpus["split"] == "train"].sample(args.pairs, random_state=0)
    val = corpus[corpus["split"] == "val"].sample(args.pairs // 4, random_state=0)
    texts, rows = triplet_rows(pd.concat([train, val]))
    heads = ImpScore.load("impscore-minilm", backend="torch", precision="fp32").heads
    config = TrainConfig(encoder_layers=args.layers, encoder_rank=args.rank, encoder_adapters=True, encoder_epochs=1,
                         encoder_lr=1e-3, encoder_batch_size=args.batch_size, encoder_backend="torch",
                         encoder_precision="fp32", seed=0)
    steps = -(-args.pairs // args.batch_size)
    ways = {"pragmeter LowRankAdapter": (TrainableEncoder, None), "peft LoRA, alpha = r": (PeftEncoder, 1.0),
            "peft LoRA, alpha = 2r": (PeftEncoder, 2.0)}
    seeds = [int(seed) for seed in args.seeds.split(",")]
    with MachineWatch() as watch:
        for way, (kind, alpha_per_rank) in ways.items():
            runs = [run(kind, alpha_per_rank, texts, heads, rows, dataclasses.replace(config, seed=seed), steps)
                    for seed in seeds]
            print(f"{way}: " + ", ".join(f"{name} {spread([r[name] for r in runs])}" for name in runs[0])
                  + f" ({steps} steps, seeds {args.seeds})")
    print(watch.summary())


if __name__ == "__main__":
    main()
