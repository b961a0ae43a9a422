"""General NLI, monotonicity and presupposition sets (``load_nli(name, split)`` → :class:`NliPair` rows), found by
name in ``SETS``; each set's reader is one module here. Which sets train and which only evaluate is stated in each
module and in docs/data.md."""

from __future__ import annotations

import importlib
import os

from pragmeter.datasets.nli.base import NLI_LABELS, NliPair
from pragmeter.errors import DataError

# name -> (module, default split)
SETS = {"taxinli": "train", "esnli": "dev", "cad_nli": "train", "sick": "train", "conjnli": "train", "med": "train",
        "help": "train", "monli": "train", "scone": "train", "imppres": "presupposition", "dnc": "train",
        "xnli_en": "test", "control": "test", "breaking_nli": "test"}


def load_nli(name: str, split: str | None = None, root: str | os.PathLike | None = None) -> list[NliPair]:
    """The pairs of NLI set ``name`` (a key of ``SETS``) in ``split`` (its default split when None)."""
    if name not in SETS:
        raise DataError(f"unknown NLI set {name!r}; choose one of {', '.join(SETS)}")
    module = importlib.import_module(f"pragmeter.datasets.nli.{name}")
    return module.load(split or SETS[name], root)


def files(name: str, split: str | None = None) -> list[str]:
    """The data-root files the set ``name`` reads for ``split`` (None: over all its splits)."""
    module = importlib.import_module(f"pragmeter.datasets.nli.{name}")
    found = []
    for key, value in module.FILES.items():
        if split is not None and key != split:
            continue
        for relative in (value,) if isinstance(value, str) else value:
            if relative not in found:
                found.append(relative)
    return found


__all__ = ["NLI_LABELS", "NliPair", "SETS", "files", "load_nli"]
