"""Open any classifier folder pragmeter writes: a fine-tuned encoder (``model.safetensors``), its shipped form (low-rank
changes over a base encoder: :mod:`pragmeter.interpreter.shipped`), the same changes as a peft LoRA adapter
(:mod:`pragmeter.interpreter.adapter`) or a frozen encoder with an SVM on its embeddings (``svm.safetensors``). All
answer ``labels``, ``settings``, ``probabilities``, ``decide`` and ``predict`` alike. How a command opens one, with
its runtime: :func:`pragmeter.classify.opening.open_classifier`."""

from __future__ import annotations

import os
from pathlib import Path

from pragmeter.classify.model import TextClassifier
from pragmeter.classify.svm import EmbeddingSVMClassifier


def load_classifier(folder: str | os.PathLike, device: str | None = None,
                    precision="auto") -> TextClassifier | EmbeddingSVMClassifier:
    """The classifier of ``folder`` (whole weights, the shipped form, its peft adapter form or an svm head) on
    ``device`` in ``precision`` (a resolved Runtime for a fine-tuned encoder, or a precision; see
    :func:`pragmeter.classify.opening.open_classifier` for how commands open one)."""
    from pragmeter.interpreter.adapter import is_adapter, load_adapter
    from pragmeter.interpreter.shipped import is_shipped, load_shipped

    if (Path(folder) / EmbeddingSVMClassifier.WEIGHTS_FILE).is_file():
        return EmbeddingSVMClassifier.load(folder, device, precision)
    if not (Path(folder) / TextClassifier.WEIGHTS_FILE).is_file():
        if is_shipped(Path(folder)):
            return load_shipped(folder, device, precision)
        if is_adapter(folder):
            return load_adapter(folder, device, precision)
    return TextClassifier.load(folder, device, precision)


def weights_file(folder: str | os.PathLike) -> Path:
    """The folder's weights file (what identifies the model in run records); for the shipped and the peft forms their
    config, which holds the sha256 of every weights file."""
    from pragmeter.interpreter.adapter import is_adapter
    from pragmeter.interpreter.shipped import is_shipped

    svm = Path(folder) / EmbeddingSVMClassifier.WEIGHTS_FILE
    if svm.is_file():
        return svm
    whole = Path(folder) / TextClassifier.WEIGHTS_FILE
    if not whole.is_file() and (is_shipped(Path(folder)) or is_adapter(folder)):
        return Path(folder) / "config.json"
    return whole
