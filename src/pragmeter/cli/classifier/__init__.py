"""``pragmeter classifier train|predict|drinq-nli``: fine-tuned local classifiers (INLI, ISHate Task A/B)."""

from __future__ import annotations

from pragmeter.cli.classifier import drinq_nli, predict, train
from pragmeter.cli.common import add_group


def register(subparsers) -> None:
    add_group(subparsers, "classifier", "local classifiers: train, predict, drinq-nli",
              "Fine-tune transformers classifiers on INLI or ISHate, label files with them, and answer DRInQ "
              "zero-shot with an INLI model.", (train, predict, drinq_nli))
