"""The interpreter: a cross-encoder that reads a (context, utterance) pair against candidate readings of it, with
INLI's four labels (implied, explicit, neutral, contradiction) or any NLI model's three.

- ``model``: :class:`~pragmeter.interpreter.model.Interpreter` (load, predict, scores, rank, choose, save);
- ``hub``: where an interpreter's folder comes from (a path, a packaged name, a Hugging Face Hub name);
- ``shipped``: the shipped form, low-rank changes over an installable base encoder plus the classification layer;
- ``adapter``: the same changes as a peft LoRA adapter folder;
- ``runtime``: how an interpreter runs here, and the bf16 check that lets ``auto`` choose bf16;
- ``release``: a trained run written in the shipped form (``pragmeter interpret ship``);
- ``drinq``: DRInQ answered through the interpreter (``pragmeter classifier drinq-nli``);
- ``models/``: the interpreters packaged with pragmeter.

The classifier it runs on (fine-tuning, loading, OpenVINO) is :mod:`pragmeter.classify`'s.
"""

from __future__ import annotations

__all__ = ["Interpreter"]


def __getattr__(name: str):
    # Lazy: importing the package must not import torch
    if name == "Interpreter":
        from pragmeter.interpreter.model import Interpreter

        return Interpreter
    raise AttributeError(name)
