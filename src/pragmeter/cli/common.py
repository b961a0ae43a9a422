"""Options shared by several commands."""

from __future__ import annotations

import argparse


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="shipped model name or model folder (default: the shipped default)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="encoder batch size (default 64 on a CPU, 1024 on a GPU)")
    parser.add_argument("--device", default=None, help="torch device, e.g. cpu or cuda (default: best available)")
    parser.add_argument("--dtype", default=None, choices=["float32", "float16", "bfloat16"],
                        help="torch encoder precision (default: bfloat16 or float16 on a GPU, float32 on a CPU)")


def add_data_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-root", default=None,
                        help="folder with the upstream data files (default: $PRAGMETER_DATA, else ../shared/data)")


def load_model(args: argparse.Namespace):
    from pragmeter.impscore.model import ImpScore

    return ImpScore.load(args.model, device=args.device, batch_size=args.batch_size, dtype=args.dtype)
