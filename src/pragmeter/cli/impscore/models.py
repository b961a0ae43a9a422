"""``pragmeter impscore models``: the shipped ImpScore models — purpose, encoder, speed, accuracy, human-suite
figures and licence terms."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    parser = subparsers.add_parser("models", help="list the shipped ImpScore models")
    parser.add_argument("--measure", action="store_true",
                        help="time each model on this machine (sentences/s) instead of the recorded figure")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.impscore.catalogue import catalogue, catalogue_text

    print(catalogue_text(catalogue(measure=args.measure), measured=args.measure))
    return 0
