"""The interpreter: what an utterance means in its context, as INLI's four relations to a candidate reading.

An INLI pair classifier (``pragmeter classifier train inli``) reads a premise — the situation and what was said — and
a hypothesis — a candidate reading — and gives the probabilities of INLI's labels: ``implied`` (the reading is what
the speaker means without saying it), ``explicit`` (what they said, restated), ``neutral`` and ``contradiction``.

The premise joins the context and the utterance as INLI's conversational premises (from Circa and LUDWIG) and DRInQ
items read: the context, then the utterance in double quotes (``PREMISE_TEMPLATE``). Premises already written as
INLI's are classified as they are (:meth:`Interpreter.classify`).

A reading's score (:meth:`Interpreter.rank`) is P(implied) + P(explicit): the probability that the speaker meant it,
implicitly or in so many words. A direct utterance's meaning is ``explicit``, an indirect one's ``implied``, and
a reading that is neither (``neutral``, ``contradiction``) is not what was meant, so summing the two entailment
classes ranks the meant reading first whether the utterance is direct or indirect. A 3-way model (``entailed``)
scores P(entailed).

Model folders: a ``classifier train inli`` folder (whole weights, ``model.safetensors``), or the shipped form
(:mod:`pragmeter.classify.shipped`: low-rank changes over an installable base encoder plus the classification
layer). :meth:`Interpreter.load` without a name opens the default that ships in the package.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from pragmeter.errors import PragmeterError

LABELS = ("implied", "explicit", "neutral", "contradiction")
MEANT_LABELS = ("implied", "explicit", "entailed")  # the labels whose probabilities sum to a reading's score
PREMISE_TEMPLATE = '{context} "{utterance}"'


def premise(context: str, utterance: str) -> str:
    """The INLI-style premise of ``utterance`` said in ``context``: the context, then the utterance in double quotes
    (kept as it is when already quoted); the quoted utterance alone without a context."""
    context, utterance = (context or "").strip(), utterance.strip()
    quoted = utterance if len(utterance) > 1 and utterance[0] == utterance[-1] == '"' else f'"{utterance}"'
    return PREMISE_TEMPLATE.format(context=context, utterance=quoted[1:-1]) if context else quoted


def _check_texts(texts: Sequence[str], what: str) -> list[str]:
    """``texts`` as a list, each a text an encoder can take (:func:`pragmeter.text.invalid_text_reason`: not empty, not
    only spaces or invisible characters, no NUL); one string, a mapping or a non-iterable is refused, not read as its
    characters or keys."""
    from pragmeter.text import invalid_text_reason

    if isinstance(texts, (str, bytes, dict)) or not isinstance(texts, Iterable):
        raise PragmeterError(f"{what} must be a list of texts, not {type(texts).__name__} {_shown(texts)}")
    texts = list(texts)
    for index, text in enumerate(texts):
        reason = invalid_text_reason(text)
        if reason:
            raise PragmeterError(f"{what} {index}: empty or not text ({reason}: {_shown(text)})")
    return texts


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_readings(readings: Sequence[str], where: str = "") -> list[str]:
    """One item's readings: a non-empty list of texts (a string is refused, never ranked as its characters)."""
    readings = _check_texts(readings, f"{where}readings" if where else "readings")
    if not readings:
        raise PragmeterError(f"{where}readings: none given; give one or more readings to rank")
    return readings


def meant_columns(settings, name: str = "") -> list[int]:
    """The columns of the labels whose probabilities make a reading's score; a PragmeterError for a model that is not
    an interpreter (not a pair model, or without both entailed and non-entailed labels)."""
    labels = list(settings.labels)
    meant = [i for i, label in enumerate(labels) if label in MEANT_LABELS]
    if settings.input_kind != "pair" or not meant or len(meant) == len(labels):
        raise PragmeterError(f"{name or 'the model'} is not an interpreter: it needs an INLI pair model with "
                             f"entailed and non-entailed labels (4-way or 3-way), not labels {labels}")
    return meant


def is_interpreter(settings) -> bool:
    """Whether a classifier with these settings reads as an interpreter (:func:`meant_columns` accepts it)."""
    try:
        meant_columns(settings)
    except PragmeterError:
        return False
    return True


class Interpreter:
    """An INLI pair classifier read as an interpreter: :meth:`classify` pairs, :meth:`rank` and :meth:`choose`
    readings of an utterance in context. ``runtime`` (pragmeter.encoders.runtime.Runtime): how it runs, when
    :meth:`load` made it."""

    runtime = None

    def __init__(self, classifier, name: str = ""):
        self.classifier = classifier
        self.name = name
        self.meant = meant_columns(classifier.settings, name)

    # -- loading ------------------------------------------------------------------------------------
    @classmethod
    def load(cls, name: str | os.PathLike | None = None, device: str | None = None, precision: str = "auto",
             backend: str = "auto", threads: int | str | None = None, progress: bool = True) -> "Interpreter":
        """The packaged default (``name`` None), a packaged interpreter by name, or a model folder (shipped form
        or a ``classifier train inli`` folder), run as :func:`pragmeter.classify.shipped.interpreter_runtime`
        resolves ``backend``, ``precision``, ``device`` and ``threads``: ``auto`` is OpenVINO on a CPU
        (:mod:`pragmeter.classify.openvino`: converted once per model content, with a bar unless ``progress`` is
        False), in bf16 where the CPU has bf16 instructions and the folder records a bf16 check within bounds, else
        fp32; torch on a GPU ``device``. :attr:`runtime` says which."""
        from pragmeter.classify.model import read_settings
        from pragmeter.classify.shipped import interpreter_runtime, resolve_interpreter

        folder = resolve_interpreter(name)
        label = str(name or folder.name)
        meant_columns(read_settings(folder)[2], label)  # an interpreter, before any conversion
        runtime = interpreter_runtime(folder, backend, precision, device, threads)
        if runtime.backend == "openvino":
            from pragmeter.classify.openvino import OpenVinoClassifier

            interpreter = cls(OpenVinoClassifier(folder, runtime, progress), label)
        else:
            from pragmeter.classify.loading import load_classifier

            interpreter = cls(load_classifier(folder, runtime.device, runtime.precision), label)
        interpreter.runtime = runtime
        return interpreter

    @property
    def labels(self) -> list[str]:
        return list(self.classifier.labels)

    @property
    def meant_labels(self) -> list[str]:
        """The labels whose probabilities make a reading's score (:meth:`meant_scores`)."""
        return [self.labels[i] for i in self.meant]

    @property
    def settings(self):
        return self.classifier.settings

    # -- inference ----------------------------------------------------------------------------------
    def probabilities(self, premises: Sequence[str], hypotheses: Sequence[str], batch_size: int = 64,
                      progress: bool = False) -> np.ndarray:
        """Rows of label probabilities (columns in :attr:`labels` order), one per (premise, hypothesis) pair."""
        premises, hypotheses = _check_texts(premises, "premise"), _check_texts(hypotheses, "hypothesis")
        if len(premises) != len(hypotheses):
            raise PragmeterError(f"{len(premises)} premises for {len(hypotheses)} hypotheses: give one of each per pair")
        if not premises:
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        return self.classifier.probabilities(premises, hypotheses, batch_size, progress)

    def classify(self, premises: Sequence[str], hypotheses: Sequence[str], batch_size: int = 64,
                 progress: bool = False) -> list[dict[str, float]]:
        """One ``{label: probability}`` dict per (premise, hypothesis) pair, labels in the model's order
        (``implied``, ``explicit``, ``neutral``, ``contradiction`` for a 4-way model)."""
        rows = self.probabilities(premises, hypotheses, batch_size, progress)
        return [dict(zip(self.labels, map(float, row))) for row in rows]

    def meant_scores(self, probabilities: np.ndarray) -> np.ndarray:
        """Each row's score as a meant reading: P(implied) + P(explicit) (P(entailed) for a 3-way model)."""
        return probabilities[:, self.meant].sum(axis=1)

    def rank_many(self, premises: Sequence[str], readings: Sequence[Sequence[str]], batch_size: int = 64,
                  progress: bool = False) -> list[list[float]]:
        """Scores of each premise's readings (:meth:`meant_scores`), all pairs in one batched pass."""
        premises = _check_texts(premises, "premise")
        if isinstance(readings, (str, bytes, dict)) or not isinstance(readings, Iterable):
            raise PragmeterError(f"readings must be a list of lists of texts, one per premise, not "
                                 f"{type(readings).__name__} {_shown(readings)}")
        readings = [_check_readings(options, f"item {index}: ") for index, options in enumerate(readings)]
        if len(premises) != len(readings):
            raise PragmeterError(f"{len(premises)} premises for {len(readings)} lists of readings")
        flat_premises = [p for p, options in zip(premises, readings) for _ in options]
        flat = [text for options in readings for text in options]
        scores = self.meant_scores(self.probabilities(flat_premises, flat, batch_size, progress))
        out, start = [], 0
        for options in readings:
            out.append([float(s) for s in scores[start:start + len(options)]])
            start += len(options)
        return out

    def rank(self, context: str, utterance: str, readings: Sequence[str], batch_size: int = 64) -> list[float]:
        """Each reading's score as what the speaker meant by ``utterance`` in ``context``: P(implied) + P(explicit)
        (see the module notes), in the order given."""
        from pragmeter.text import invalid_text_reason

        reason = invalid_text_reason(utterance)
        if reason:
            raise PragmeterError(f"the utterance is empty or not text ({reason})")
        if context is not None and not isinstance(context, str):
            raise PragmeterError(f"the context must be a text, not {type(context).__name__} {_shown(context)}")
        return self.rank_many([premise(context, utterance)], [_check_readings(readings)], batch_size)[0]

    def choose(self, context: str, utterance: str, readings: Sequence[str], batch_size: int = 64) -> int:
        """The index of the reading most likely meant (:meth:`rank`'s highest; the first among equal scores)."""
        return int(np.argmax(self.rank(context, utterance, readings, batch_size)))


def ship(source: str | os.PathLike, output: str | os.PathLike, rank: int | Sequence[int], val, test=None,
         bf16_pairs: int = 4096, batch_size: int = 64, progress: bool = True) -> dict:
    """The shipped form (:mod:`pragmeter.classify.shipped`) of the ``classifier train inli`` folder ``source`` at
    ``rank``, written to ``output`` with its card: validation accuracy of the whole and of the compressed model
    (``val``: Examples) with each validation pair's predicted label, bf16 checked on the first ``bf16_pairs``
    validation pairs (through OpenVINO, the path ``auto`` runs, where the CPU has bf16; else torch's autocast; 0: not
    measured, recorded as outside the bounds, so ``auto`` runs the model in fp32), the test report of the compressed
    model when ``test`` is given. Several ranks: each one's compressed validation accuracy is measured and the best
    ships (the smallest among equals); the test split is read once, for that one. Returns the metrics (also in
    metrics.json)."""
    from pragmeter.classify.card import interpreter_card
    from pragmeter.classify.model import TextClassifier, base_encoder
    from pragmeter.classify.shipped import bf16_bounds, bf16_check, compress, save_shipped
    from pragmeter.classify.training import evaluate, evaluate_with_probabilities
    from pragmeter.encoders.runtime import cpu_has_bf16

    source = Path(source)
    ranks = sorted({rank} if isinstance(rank, int) else set(rank))
    if not ranks or ranks[0] < 1:
        raise PragmeterError(f"rank must be at least 1, got {rank!r}")
    classifier = TextClassifier.load(source, "cpu", "fp32")
    classifier.settings.base_encoder = base_encoder(source, classifier.settings)  # the encoder the changes are over
    meant = Interpreter(classifier, source.name).meant  # an interpreter, before any work
    whole, _ = evaluate(classifier, val, batch_size, progress)
    by_rank, predicted, fp32 = {}, {}, {}  # per rank: report, labels and fp32 probabilities of the validation pairs
    for candidate in ranks[:-1]:  # compress() replaces the encoder: each candidate starts from the whole model
        trial = TextClassifier.load(source, "cpu", "fp32")
        compress(trial, candidate)
        by_rank[candidate], predicted[candidate], fp32[candidate] = evaluate_with_probabilities(
            trial, val, batch_size, progress)
    factors, head = compress(classifier, ranks[-1])
    by_rank[ranks[-1]], predicted[ranks[-1]], fp32[ranks[-1]] = evaluate_with_probabilities(
        classifier, val, batch_size, progress)
    rank = max(ranks, key=lambda r: (by_rank[r]["accuracy"], -r))
    if rank != ranks[-1]:
        classifier = TextClassifier.load(source, "cpu", "fp32")
        factors, head = compress(classifier, rank)
    # each validation pair's label as the shipped model predicts it (in fp32 on the CPU), one digit per pair, the
    # index in ``labels``: what a check of the shipped folder compares a few pairs against
    compressed = {**by_rank[rank], "predicted": "".join(str(classifier.labels.index(p)) for p in predicted[rank]),
                  "labels": list(classifier.labels)}
    pairs = max(0, min(bf16_pairs, len(val)))
    texts, hypotheses, checked_fp32 = val.texts[:pairs], val.pairs[:pairs], fp32[rank][:pairs]
    on_openvino = pairs > 0 and cpu_has_bf16()  # what ``auto`` runs here is OpenVINO's bf16: measured on that path
    if pairs and not on_openvino:
        check = {**bf16_check(classifier, texts, hypotheses, meant, checked_fp32, batch_size), "path": "torch"}
    else:  # not measured (yet): outside the bounds until it is
        check = {**bf16_bounds([], [], meant), "path": "none"}
    try:
        trained = json.loads((source / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        trained = {}
    metrics = {"rank": rank, "source": source.name, "val_whole": whole, "val_compressed": compressed,
               **({"val_by_rank": {str(r): by_rank[r]["accuracy"] for r in ranks}} if len(ranks) > 1 else {}),
               "bf16_check": check, "training": {k: trained.get(k) for k in (
                   "command", "commit", "settings", "train_config", "best_epoch", "history", "train_examples",
                   "data_files", "transformers", "torch", "device")}}
    if test is not None:
        metrics["test_compressed"], predictions = evaluate(classifier, test, batch_size, progress)
        if test.groups:
            from pragmeter.metrics.classification import accuracy_by_group

            metrics["test_compressed"]["per_source"] = accuracy_by_group(test.labels, predictions, test.groups)
    save_shipped(classifier, factors, head, output, interpreter_card(metrics), metrics, check)
    if on_openvino:  # the graph is converted from the shipped folder, then the check is written beside it
        from pragmeter.classify.openvino import OpenVinoClassifier
        from pragmeter.encoders.runtime import Runtime

        graph = OpenVinoClassifier(output, Runtime("openvino", "bf16"), progress=progress)
        check = {**bf16_bounds(checked_fp32, graph.probabilities(texts, hypotheses, batch_size), meant),
                 "path": "openvino"}
        metrics["bf16_check"] = check
        save_shipped(classifier, factors, head, output, interpreter_card(metrics), metrics, check)
    return metrics
