"""``pragmeter distance A B``: pragmatic distance of two sentences."""

from __future__ import annotations

import argparse

from pragmeter.cli.common import add_impscore_options, load_model


def register(subparsers) -> None:
    parser = subparsers.add_parser("distance", help="pragmatic distance between two sentences",
                                   description="Print the pragmatic distance ‖h_p(A) − h_p(B)‖ of two sentences.")
    parser.add_argument("a", help="first sentence")
    parser.add_argument("b", help="second sentence")
    add_impscore_options(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    model = load_model(args)
    print(f"{model.pragmatic_distance(args.a, args.b):.4f}")
    return 0
