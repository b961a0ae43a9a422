"""``pragmeter classifier train|predict|drinq-nli``: fine-tuned local classifiers (INLI, ISHate Task A/B)."""

from __future__ import annotations

from pragmeter.cli.classifier import drinq_nli, predict, train


def register(subparsers) -> None:
    parser = subparsers.add_parser("classifier", help="local classifiers: train, predict, drinq-nli",
                                   description="Fine-tune transformers classifiers on INLI or ISHate, label files "
                                               "with them, and answer DRInQ zero-shot with an INLI model.")
    commands = parser.add_subparsers(dest="classifier_command", metavar="ACTION", required=True)
    for module in (train, predict, drinq_nli):
        module.register(commands)
