"""``pragmeter impscore train``: train ImpScore heads on a corpus with cached embeddings."""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from pragmeter.cli.common import add, positive_int


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "train", help="train ImpScore heads on a corpus (paper defaults)",
        description="Train ImpScore's projection heads on (implicit, explicit, negative) triplets. Embeddings from "
                    "the frozen encoder are computed once and cached on disk; epochs then run on the cache.")
    parser.add_argument("--corpus", default=None,
                        help="corpus file from `pragmeter impscore corpus build`, or the official all_data.csv "
                             "(default: build the corpus from the data root)")
    add(parser, output={"required": True, "help": "model folder to write"})
    parser.add_argument("--name", default=None, help="model name recorded in the config (default: folder name)")
    add(parser, encoder={"help": "sentence encoder (name or folder)"})
    parser.add_argument("--dim", type=int, default=64, help="pragmatic/semantic space size l (default 64)")
    parser.add_argument("--transform", choices=["p2s", "s2p", "both"], default="p2s",
                        help="space transformation (paper Table 2; default p2s)")
    parser.add_argument("--imp-metric", choices=["cosine", "euclidean"], default="cosine")
    parser.add_argument("--prag-metric", choices=["cosine", "euclidean"], default="euclidean")
    for flag, default in (("--gamma1", 0.5), ("--gamma2", 0.7), ("--alpha", 1.0), ("--lr", 0.01),
                          ("--weight-decay", 0.001)):
        parser.add_argument(flag, type=float, default=default)
    add(parser, batch_size={"default": 8192, "help": "training batch size (default 8192)"})
    parser.add_argument("--encode-batch-size", type=positive_int, default=64, help="encoder batch size (default 64)")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--hard-negatives", choices=["none", "source", "mined", "both"], default="none",
                        help="extra pragmatic margin against hard negatives: the corpus's hard_negative column "
                             "(source), the nearest other pair's explicit side in encoder space (mined), or both; "
                             "none = the paper's objective (default)")
    parser.add_argument("--hard-alpha", type=float, default=1.0,
                        help="weight of the hard-negative margin (used with --hard-negatives)")
    parser.add_argument("--in-batch-negatives", type=non_negative_float, default=0.0, metavar="WEIGHT",
                        help="weight of a pragmatic margin of each implicit sentence against the nearest explicit "
                             "side of the other pairs of its batch (paraphrases left out); 0 = the paper's objective "
                             "(default)")
    parser.add_argument("--source-weight", action="append", default=[], metavar="SOURCE=WEIGHT",
                        type=source_weight, dest="source_weights",
                        help="loss weight of one source's training pairs (repeatable; default 1 each: the paper)")
    add(parser, "seed", "cache", device={"default": "cpu", "help": "torch device (default cpu)"},
        overwrite={"help": "replace an existing model folder (atomically: a run killed while saving leaves the old "
                           "model whole)"})
    add(parser, "data_root")
    parser.set_defaults(func=run)


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def source_weight(text: str) -> tuple[str, float]:
    """``SOURCE=WEIGHT`` with a positive weight."""
    source, sep, weight = text.partition("=")
    try:
        value = float(weight)
    except ValueError:
        value = float("nan")
    if not sep or not source or not value > 0:
        raise argparse.ArgumentTypeError(f"expected SOURCE=WEIGHT with a positive weight, got {text!r}")
    return source, value


def run(args: argparse.Namespace) -> int:
    from pragmeter.encoders import canonical_name
    from pragmeter.impscore.training import TrainConfig, train

    values = {f.name: getattr(args, f.name) for f in fields(TrainConfig) if hasattr(args, f.name)}
    config = TrainConfig(**{**values, "encoder": canonical_name(args.encoder), "source_weights": dict(args.source_weights)})
    result = train(config, args.output, args.corpus, name=args.name, data_root=args.data_root, cache_root=args.cache,
                   overwrite=args.overwrite, on_corpus_report=lambda table: print(table, file=sys.stderr))
    test = result.test
    print(f"best epoch {result.best_epoch}; test implicitness accuracy {test.get('implicitness_accuracy', float('nan')):.4f}, "
          f"pragmatics accuracy {test.get('pragmatics_accuracy', float('nan')):.4f} -> {result.folder}")
    return 0
