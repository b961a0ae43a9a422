"""``pragmeter impscore corpus|train|evaluate|models``: build, train, check and list ImpScore models."""

from __future__ import annotations

from pragmeter.cli.impscore import corpus, evaluate, models, train


def register(subparsers) -> None:
    parser = subparsers.add_parser("impscore", help="ImpScore models: corpus, train, evaluate, models",
                                   description="Build the training corpus, train ImpScore heads, evaluate a model "
                                               "(corpus test split, ranking and choice checks), list shipped models.")
    commands = parser.add_subparsers(dest="impscore_command", metavar="ACTION", required=True)
    for module in (corpus, train, evaluate, models):
        module.register(commands)
