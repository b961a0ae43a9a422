"""Open any classifier folder pragmeter writes: a fine-tuned encoder (``model.safetensors``) or a frozen encoder
with an SVM on its embeddings (``svm.safetensors``). Both answer ``labels``, ``settings``, ``probabilities``,
``decide`` and ``predict`` alike."""

from __future__ import annotations

import os
from pathlib import Path

from pragmeter.classify.model import TextClassifier
from pragmeter.classify.svm import EmbeddingSVMClassifier


def load_classifier(folder: str | os.PathLike, device: str | None = None,
                    precision: str = "auto") -> TextClassifier | EmbeddingSVMClassifier:
    if (Path(folder) / EmbeddingSVMClassifier.WEIGHTS_FILE).is_file():
        return EmbeddingSVMClassifier.load(folder, device, precision)
    return TextClassifier.load(folder, device, precision)


def weights_file(folder: str | os.PathLike) -> Path:
    """The folder's weights file (what identifies the model in run records)."""
    svm = Path(folder) / EmbeddingSVMClassifier.WEIGHTS_FILE
    return svm if svm.is_file() else Path(folder) / TextClassifier.WEIGHTS_FILE
