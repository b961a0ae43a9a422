"""``pragmeter impscore corpus|train|evaluate|models``: build, train, check and list ImpScore models."""

from __future__ import annotations

from pragmeter.cli.common import add_group
from pragmeter.cli.impscore import corpus, evaluate, models, train


def register(subparsers) -> None:
    add_group(subparsers, "impscore", "ImpScore models: corpus, train, evaluate, models",
              "Build the training corpus, train ImpScore heads, evaluate a model (corpus test split, ranking and "
              "choice checks), list shipped models.", (corpus, train, evaluate, models))
