"""pragmeter: measure implicit language and how well models understand it."""

from __future__ import annotations

from pragmeter.version import __version__

__all__ = ["ImpScore", "Interpreter", "__version__"]


def __getattr__(name: str):
    # Lazy: importing pragmeter must not import torch (keeps `pragmeter --help` and the harness fast).
    if name == "ImpScore":
        from pragmeter.impscore.model import ImpScore

        return ImpScore
    if name == "Interpreter":
        from pragmeter.interpreter.model import Interpreter

        return Interpreter
    raise AttributeError(name)


def __dir__() -> list[str]:  # the lazy names too, for completion and help()
    return sorted(set(globals()) | set(__all__))
