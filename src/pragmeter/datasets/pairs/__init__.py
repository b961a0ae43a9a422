"""Readers that turn upstream datasets into (implicit, explicit) pairs for the ImpScore corpus, one module per
source, each registered here by name (the corpus builder merges this registry into its source list)."""

from __future__ import annotations

from collections.abc import Callable

from pragmeter.datasets.pairs.base import DEFAULT_CAP, SourcePairs
from pragmeter.datasets.pairs.capp import capp
from pragmeter.datasets.pairs.figqa import figqa
from pragmeter.datasets.pairs.flute import flute
from pragmeter.datasets.pairs.impli import impli
from pragmeter.datasets.pairs.irony_interpretations import irony_interpretations
from pragmeter.datasets.pairs.isarcasmeval import isarcasmeval
from pragmeter.datasets.pairs.pets_euphemisms import pets_euphemisms
from pragmeter.datasets.pairs.sarcasm_sign import sarcasm_sign

# Figurative, ironic and indirect everyday language (SOURCES.md); the ``figurative`` preset.
PAIR_SOURCES: dict[str, Callable[..., SourcePairs]] = {
    "impli": impli,
    "flute": flute,
    "irony_interpretations": irony_interpretations,
    "isarcasmeval": isarcasmeval,
    "sarcasm_sign": sarcasm_sign,
    "capp": capp,
    "pets_euphemisms": pets_euphemisms,
    "figqa": figqa,
}

__all__ = ["DEFAULT_CAP", "PAIR_SOURCES", "SourcePairs"]
