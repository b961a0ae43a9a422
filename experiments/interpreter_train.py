"""Which encoder, seed and training material make the best interpreter? Full fine-tuning of each encoder on INLI's
train split (with or without extra material), selected on INLI validation accuracy, the winner shipped as low-rank
factors with its card. One resumable command for a GPU, and the same on a CPU with a tiny ``--max-steps``.

    # on a GPU machine ($OUT comes back): every run, then the best one shipped and tested once
    python experiments/interpreter_train.py --out $OUT --encoders all-MiniLM-L6-v2,all-mpnet-base-v2 \
        --seeds 0,1 --extras none,flute --epochs 3 --batch-size 32 --lr 3e-5 --device cuda --evaluate-test
    # smoke run on a CPU
    python experiments/interpreter_train.py --out /tmp/it --encoders all-MiniLM-L6-v2 --seeds 0 --extras none \
        --max-steps 2 --limit-eval 16 --device cpu

Each run is ``OUT/runs/<encoder>-<extras>-s<seed>`` (a ``classifier train inli`` folder: whole weights, metrics.json
with the validation history); its checkpoints (``OUT/work/…``) let an interrupted run resume after its last finished
epoch, and finished runs are skipped when the command is started again. ``OUT/summary.json`` lists every run's best
validation accuracy; the best run is shipped to ``OUT/interpreter`` (rank ``--rank`` factors over the base encoder,
validation measured again on the shipped form, bf16 checked; ``--evaluate-test``: the INLI test split, once, on the
shipped model). Selection reads validation only (each run folder's own metrics also hold its test report, as every
``classifier train`` folder does; they are not used here). ``--encoders`` takes packaged names or encoder folders
(an EmbeddingGemma-300M folder assembled per docs/interpreter.md).
"""
from __future__ import annotations

import argparse
import json
import logging
import random
import sys
from dataclasses import replace
from pathlib import Path

from pragmeter.classify.job import run_recipe
from pragmeter.classify.recipes.inli import EXTRA_SOURCES, build
from pragmeter.classify.training import FineTuneConfig
from pragmeter.cli.interpret import parse_ranks
from pragmeter.interpreter.release import ship
from pragmeter.interpreter.shipped import DEFAULT_RANK
from pragmeter.io import write_json_atomic


def run_name(encoder: str, extras: tuple[str, ...], seed: int) -> str:
    return f"{Path(encoder).name}-{'+'.join(extras) or 'inli'}-s{seed}"


def parse_extras(value: str) -> list[tuple[str, ...]]:
    """"none,flute" -> [(), ("flute",)]; "+" joins sources into one variant."""
    variants = []
    for part in value.split(","):
        names = () if part.strip() in ("", "none") else tuple(p.strip() for p in part.split("+"))
        unknown = sorted(set(names) - set(EXTRA_SOURCES))
        if unknown:
            raise SystemExit(f"--extras: unknown source {unknown[0]!r}; choose none or {', '.join(EXTRA_SOURCES)}")
        variants.append(names)
    return variants


def data_for(extras: tuple[str, ...], args) -> object:
    data = build("4way", "standard", args.data_root, extra=extras)
    if args.max_steps:  # a seeded sample of the training split: max_steps optimizer steps in one epoch
        wanted = args.max_steps * args.batch_size * args.grad_accumulation
        rows = sorted(random.Random(f"max-steps-{args.seed_sample}").sample(range(len(data.train)),
                                                                            min(wanted, len(data.train))))
        data.train = data.train.subset(rows)
    if args.limit_eval:
        data.val, data.test = data.val.head(args.limit_eval), data.test.head(args.limit_eval)
    return data


def add_ship_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of shipping a trained run: this script's winner, or interpreter_ship.py's ``--run``."""
    parser.add_argument("--limit-eval", type=int, default=None, help="first N validation and test pairs")
    parser.add_argument("--rank", type=parse_ranks, default=[DEFAULT_RANK],
                        help=f"rank of the shipped factors, or comma-separated ranks: the best on validation ships "
                             f"(default {DEFAULT_RANK})")
    parser.add_argument("--evaluate-test", action="store_true", help="test the shipped interpreter once on INLI test")
    parser.add_argument("--bf16-pairs", type=int, default=4096,
                        help="validation pairs of the bf16 check of the shipped form (0: not checked, so `auto` "
                             "runs it in fp32)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder (runs, checkpoints, summary, the interpreter)")
    parser.add_argument("--encoders", default="all-MiniLM-L6-v2", help="comma-separated packaged names or folders")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds (default 0)")
    parser.add_argument("--extras", default="none", help="comma-separated training variants: none, flute, … "
                                                         "(default none: INLI train only)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--grad-accumulation", type=int, default=1)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"])
    parser.add_argument("--max-steps", type=int, default=None,
                        help="one epoch of this many optimizer steps on a seeded sample of the training split (smoke "
                             "and CPU runs)")
    parser.add_argument("--seed-sample", type=int, default=0, help="seed of the --max-steps sample")
    parser.add_argument("--checkpoint-every", type=int, default=0,
                        help="also checkpoint every N optimizer steps within an epoch (long epochs on the CPU)")
    add_ship_arguments(parser)
    parser.add_argument("--device", default=None)
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--data-root", default=None)
    args = parser.parse_args(argv)

    out = Path(args.out)
    config = FineTuneConfig(epochs=1 if args.max_steps else args.epochs, batch_size=args.batch_size,
                            grad_accumulation=args.grad_accumulation, lr=args.lr, max_length=args.max_length,
                            precision=args.precision, select_on="accuracy", checkpoint_every=args.checkpoint_every)
    runs = []
    for extras in parse_extras(args.extras):
        data = data_for(extras, args)
        for encoder in [e.strip() for e in args.encoders.split(",") if e.strip()]:
            for seed in [int(s) for s in args.seeds.split(",")]:
                name = run_name(encoder, extras, seed)
                folder = out / "runs" / name
                if not (folder / "metrics.json").is_file():
                    print(f"training {name} ({len(data.train)} training pairs)", file=sys.stderr)
                    run_recipe(data, encoder, replace(config, seed=seed), folder, out / "work" / name, args.device,
                               " ".join(["python", "experiments/interpreter_train.py", *sys.argv[1:]]),
                               not args.no_progress)
                metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
                best = metrics["history"][metrics["best_epoch"] - 1]
                runs.append({"run": name, "encoder": encoder, "extras": list(extras), "seed": seed,
                             "val_accuracy": best["val_accuracy"], "val_macro_f1": best["val_macro_f1"],
                             "best_epoch": metrics["best_epoch"], "train_pairs": len(data.train)})
                print(f"{name}: val accuracy {best['val_accuracy']:.4f}", file=sys.stderr)
    chosen = max(runs, key=lambda r: r["val_accuracy"])
    summary = {"runs": runs, "chosen": chosen["run"], "selected_on": "INLI validation accuracy", "rank": args.rank}
    write_json_atomic(out / "summary.json", summary)
    data = data_for(tuple(chosen["extras"]), args)
    shipped = ship(out / "runs" / chosen["run"], out / "interpreter", args.rank, data.val,
                   data.test if args.evaluate_test else None, bf16_pairs=args.bf16_pairs,
                   progress=not args.no_progress)
    summary["shipped"] = {k: shipped[k] for k in ("val_whole", "val_compressed", "bf16_check")}
    if "test_compressed" in shipped:
        summary["shipped"]["test"] = shipped["test_compressed"]
    write_json_atomic(out / "summary.json", summary)
    print(json.dumps({"chosen": chosen["run"], "val_whole": shipped["val_whole"]["accuracy"],
                      "val_shipped": shipped["val_compressed"]["accuracy"]}))


if __name__ == "__main__":
    logging.basicConfig(format="%(message)s")  # the library's messages (the pragmeter logger), as a command shows them
    logging.getLogger("pragmeter").setLevel(logging.INFO)
    main()
