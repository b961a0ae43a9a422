"""How every command opens a classifier folder to classify with it (``interpret``, ``classifier predict``, the
``local:`` backend of ``eval``, the service's ``/interpret``): :func:`open_classifier`, one resolution of its runtime
(pragmeter.encoders.runtime.Runtime), so one folder runs one way, with one signature, whichever command runs it."""

from __future__ import annotations

import os
from pathlib import Path


def classifier_folder(model: str | os.PathLike | None) -> Path:
    """The folder of a classifier: ``model`` itself when it holds a config, else a packaged interpreter's name (None:
    the default) or, with a connection, an NLI cross-encoder's Hub name (:func:`resolve_interpreter`)."""
    from pragmeter.interpreter.hub import resolve_interpreter

    if model is not None and (Path(model) / "config.json").is_file():
        return Path(model)
    return resolve_interpreter(model)


def open_classifier(model: str | os.PathLike | None, *, backend: str = "auto", precision: str = "auto",
                    device: str | None = None, threads: int | str | None = None, progress: bool = True):
    """(the classifier, its :class:`pragmeter.encoders.runtime.Runtime`) of a model folder or a packaged interpreter's
    name (None: the packaged default interpreter). An interpreter runs as
    :meth:`pragmeter.interpreter.model.Interpreter.load` resolves ``backend``, ``precision``, ``device`` and
    ``threads`` (``auto``: OpenVINO on a CPU, torch on a GPU ``device``); any other classifier runs through torch
    (a fine-tuned encoder: on ``device``, None being torch's best one) or, an svm head, as its folder records."""
    from pragmeter.classify.loading import load_classifier
    from pragmeter.classify.model import read_settings, torch_runtime
    from pragmeter.classify.svm import EmbeddingSVMClassifier
    from pragmeter.errors import InvalidParameter
    from pragmeter.interpreter.model import Interpreter, is_interpreter

    folder = classifier_folder(model)
    if is_interpreter(read_settings(folder)[2]):
        interpreter = Interpreter.load(folder, backend=backend, precision=precision, device=device, threads=threads,
                                       progress=progress)
        return interpreter.classifier, interpreter.runtime
    if (folder / EmbeddingSVMClassifier.WEIGHTS_FILE).is_file():
        classifier = EmbeddingSVMClassifier.load(folder, device, precision)
        if backend not in ("auto", classifier.backend):
            raise InvalidParameter("backend", backend, f"{folder} is an svm head whose encoder runs "
                                   f"{classifier.backend}, as it was fitted", choices=("auto", classifier.backend))
        return classifier, classifier.runtime
    if backend not in ("auto", "torch"):
        raise InvalidParameter("backend", backend, f"only an interpreter runs through OpenVINO; {folder} runs "
                               "backend torch", choices=("auto", "torch"))
    classifier = load_classifier(folder, device, torch_runtime(device, precision))
    return classifier, classifier.runtime
