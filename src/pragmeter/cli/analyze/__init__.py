"""``pragmeter analyze profile|stratify|correlate|report|generation-check``: where models break as language
gets more implicit."""

from __future__ import annotations

from pragmeter.cli.analyze import correlate, generation_check, profile, report, stratify
from pragmeter.cli.common import add_group


def register(subparsers) -> None:
    add_group(subparsers, "analyze", "analyses: profile, stratify, correlate, report, generation-check",
              "ImpScore profiles of labelled sets, accuracy by implicitness, correlation of score columns, the "
              "generation check, HTML reports.", (profile, stratify, correlate, generation_check, report))
