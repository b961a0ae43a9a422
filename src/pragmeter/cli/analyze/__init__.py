"""``pragmeter analyze profile|stratify|correlate|report|generation-check``: where models break as language
gets more implicit."""

from __future__ import annotations

from pragmeter.cli.analyze import correlate, generation_check, profile, report, stratify


def register(subparsers) -> None:
    parser = subparsers.add_parser("analyze", help="analyses: profile, stratify, correlate, report, generation-check",
                                   description="ImpScore profiles of labelled sets, accuracy by implicitness, "
                                               "correlation of score columns, the generation check, HTML reports.")
    commands = parser.add_subparsers(dest="analyze_command", metavar="ACTION", required=True)
    for module in (profile, stratify, correlate, generation_check, report):
        module.register(commands)
