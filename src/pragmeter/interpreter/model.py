"""The interpreter: what an utterance means in its context, as INLI's four relations to a candidate reading.

An INLI pair classifier (``pragmeter classifier train inli``) reads a premise — the situation and what was said — and
a hypothesis — a candidate reading — and gives the probabilities of INLI's labels: ``implied`` (the reading is what
the speaker means without saying it), ``explicit`` (what they said, restated), ``neutral`` and ``contradiction``.

The premise joins the context and the utterance as INLI's conversational premises (from Circa and LUDWIG) and DRInQ
items read: the context, then the utterance in double quotes (``PREMISE_TEMPLATE``). Premises already written as
INLI's are classified as they are (:meth:`Interpreter.classify`).

A reading's score (:meth:`Interpreter.scores`) is P(implied) + P(explicit): the probability that the speaker meant it,
implicitly or in so many words. A direct utterance's meaning is ``explicit``, an indirect one's ``implied``, and
a reading that is neither (``neutral``, ``contradiction``) is not what was meant, so summing the two entailment
classes ranks the meant reading first whether the utterance is direct or indirect. A 3-way model (``entailed``)
scores P(entailed).

Explicit weight. An utterance meant indirectly also says something at face value, and that restatement is what INLI
calls explicit: with the plain sum it can outscore the meant reading. A model folder may therefore record a weight
``w`` from 0 to 1 (``explicit_weight`` in its settings, 1 when absent), and a reading's score is then
P(implied) + w P(explicit); it is chosen on development choice splits, since a figure's plain meaning is also read as
explicit and needs its share. Labels (:meth:`Interpreter.classify`) do not read it; :meth:`Interpreter.load` and the
``local:`` backend's ``explicit_weight`` model argument override it.

Model folders: a ``classifier train inli`` folder (whole weights, ``model.safetensors``), the shipped form
(:mod:`pragmeter.interpreter.shipped`: low-rank changes over an installable base encoder plus the classification
layer), the same changes as a peft LoRA adapter (:mod:`pragmeter.interpreter.adapter`), or any NLI cross-encoder (a
plain Hugging Face sequence-classification folder whose ``id2label`` names NLI's labels:
:func:`pragmeter.classify.model.plain_settings`), local or, with a connection, by its Hub name.
:meth:`Interpreter.load` without a name opens the default that ships in the package; :meth:`Interpreter.save` writes
whole weights that ``sentence_transformers.CrossEncoder`` opens.

Precision. In bf16 (or fp16) the close calls are answered again in fp32: pairs whose two likeliest labels, and items
whose two best readings, lie closer than a gap (:mod:`pragmeter.interpreter.recheck`).

The names it shares with ``sentence_transformers.CrossEncoder`` keep their contracts: :meth:`Interpreter.predict`
takes (premise, hypothesis) pairs (it returns probabilities, as ``CrossEncoder.predict(..., apply_softmax=True)``),
:meth:`Interpreter.rank` returns the readings sorted by score as ``[{"corpus_id", "score", "text"}]``.
"""

from __future__ import annotations

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


def explicit_weight_of(settings, name: str = "", explicit_weight: float | None = None) -> float:
    """The weight on P(explicit) in a reading's score (module notes): ``explicit_weight``, or the folder's where it is
    None; a PragmeterError for a weight outside 0..1, or other than 1 for a model without an ``explicit`` label."""
    from pragmeter.classify.model import explicit_weight_problem

    weight = settings.explicit_weight if explicit_weight is None else explicit_weight
    problem = explicit_weight_problem(weight)
    if problem:
        raise PragmeterError(f"explicit_weight {problem}")
    if weight != 1 and "explicit" not in settings.labels:
        raise PragmeterError(f"explicit_weight {weight!r}: {name or 'the model'} has no explicit label (labels "
                             f"{list(settings.labels)}); only 1 applies")
    return float(weight)


def is_interpreter(settings) -> bool:
    """Whether a classifier with these settings reads as an interpreter (:func:`meant_columns` accepts it)."""
    try:
        meant_columns(settings)
    except PragmeterError:
        return False
    return True


class Interpreter:
    """An INLI (or NLI) pair classifier read as an interpreter: :meth:`predict` and :meth:`classify` pairs,
    :meth:`scores`, :meth:`rank` and :meth:`choose` readings of an utterance in context. ``runtime``
    (pragmeter.encoders.runtime.Runtime): how it runs, when :meth:`load` made it; ``folder``: the model folder it
    was opened from."""

    runtime = None
    folder = None

    def __init__(self, classifier, name: str = "", explicit_weight: float | None = None):
        """``explicit_weight``: the weight on P(explicit) in a reading's score (module notes; None: the folder's,
        ``classifier.settings.explicit_weight``)."""
        self.classifier = classifier
        self.name = name
        self.meant = meant_columns(classifier.settings, name)
        self.explicit_weight = explicit_weight_of(classifier.settings, name, explicit_weight)
        labels = list(classifier.settings.labels)
        self._weights = np.array([self.explicit_weight if labels[i] == "explicit" else 1.0 for i in self.meant],
                                 dtype=np.float32)

    # -- loading ------------------------------------------------------------------------------------
    @classmethod
    def load(cls, name: str | os.PathLike | None = None, *, backend: str = "auto", precision: str = "auto",
             device: str | None = None, threads: int | str | None = None, progress: bool = True,
             fp32_recheck: bool = True, explicit_weight: float | None = None) -> "Interpreter":
        """The packaged default (``name`` None), a packaged interpreter by name, a model folder (shipped form,
        its peft LoRA adapter form, a ``classifier train inli`` folder or a plain NLI cross-encoder) or, with a
        connection, an NLI cross-encoder's Hub name (e.g. ``cross-encoder/nli-deberta-v3-base``); every other argument
        by keyword, named as :meth:`pragmeter.impscore.model.ImpScore.load` names them. Run as
        :func:`pragmeter.interpreter.runtime.interpreter_runtime` resolves ``backend``, ``precision``, ``device`` and
        ``threads``: ``auto`` is OpenVINO on a CPU (:mod:`pragmeter.classify.openvino`: converted once per model
        content, with a bar unless ``progress`` is False), in bf16 where the CPU has bf16 instructions and the
        folder records a bf16 check within bounds (with the encoder layers it kept in fp32, if any), else fp32;
        torch on a GPU ``device``. :attr:`runtime` says
        which. In bf16 (or fp16) the close calls are answered again in fp32
        (:class:`pragmeter.interpreter.recheck.Fp32Recheck`) unless ``fp32_recheck`` is False; with it, the check's
        bounds are those of the recheck (:func:`pragmeter.interpreter.runtime.recorded_bf16_check`).
        ``explicit_weight``: the weight on P(explicit) in a reading's score (module notes; None: the folder's)."""
        from pragmeter.classify.model import read_settings
        from pragmeter.interpreter.hub import resolve_interpreter
        from pragmeter.interpreter.runtime import interpreter_runtime

        folder = resolve_interpreter(name)
        label = str(name or folder.name)
        settings = read_settings(folder)[2]  # an interpreter with a weight it can take, before any conversion
        meant_columns(settings, label)
        explicit_weight_of(settings, label, explicit_weight)
        runtime = interpreter_runtime(folder, backend, precision, device, threads, fp32_recheck)
        if runtime.backend == "openvino":
            from pragmeter.classify.openvino import OpenVinoClassifier

            interpreter = cls(OpenVinoClassifier(folder, runtime, progress), label, explicit_weight)
            if interpreter.classifier.fp32_layers:  # as its bf16 check was measured: said in the signature
                from dataclasses import replace

                layers = ", ".join(map(str, interpreter.classifier.fp32_layers))
                runtime = replace(runtime, reason=f"{runtime.reason}; encoder layers {layers} in fp32")
        else:
            from pragmeter.classify.loading import load_classifier

            interpreter = cls(load_classifier(folder, runtime.device, runtime), label, explicit_weight)
        if fp32_recheck and runtime.precision != "fp32":  # said in the signature, so answers cached without it differ
            from dataclasses import replace

            from pragmeter.interpreter.recheck import Fp32Recheck, recheck_gap

            interpreter.classifier = Fp32Recheck(interpreter.classifier, recheck_gap(folder), folder)
            runtime = replace(runtime, reason=f"{runtime.reason}; {interpreter.classifier.description}")
        interpreter.runtime, interpreter.folder = runtime, folder
        return interpreter

    def save(self, folder: str | os.PathLike, card: str | None = None) -> Path:
        """Write the interpreter as whole weights (``model.safetensors``, fp32), config with its settings, tokenizer
        (its ``model_max_length`` the interpreter's) and README.md card, atomically: a folder that :meth:`load`
        opens and ``sentence_transformers.CrossEncoder(folder)`` loads, giving the same probabilities with
        ``predict(pairs, apply_softmax=True)``. ``card``: the card's text (default: :func:`export_card`)."""
        from pragmeter.classify.card import export_card
        from pragmeter.classify.loading import load_classifier
        from pragmeter.classify.model import TextClassifier

        classifier = self.classifier
        if not isinstance(classifier, TextClassifier):  # another runtime (OpenVINO): the torch model of its folder
            if self.folder is None:
                raise PragmeterError(f"{self.name or 'this interpreter'} has no torch model to save: load it from a "
                                     f"folder with Interpreter.load")
            classifier = load_classifier(self.folder, "cpu", "fp32")
        tokenizer_limit, weight = classifier.tokenizer.model_max_length, classifier.settings.explicit_weight
        classifier.tokenizer.model_max_length = classifier.settings.max_length  # CrossEncoder truncates there too
        classifier.settings.explicit_weight = self.explicit_weight  # the weight it scores with, not only the folder's
        try:
            return classifier.save(folder, card if card is not None else export_card(self.name, classifier.settings,
                                                                                     self.folder))
        finally:
            classifier.tokenizer.model_max_length, classifier.settings.explicit_weight = tokenizer_limit, weight

    @property
    def labels(self) -> list[str]:
        return list(self.classifier.labels)

    @property
    def meant_labels(self) -> list[str]:
        """The labels whose probabilities make a reading's score (:meth:`meant_scores`)."""
        return [self.labels[i] for i in self.meant]

    @property
    def rechecks_close_calls(self) -> bool:
        """Whether its close calls are answered again in fp32 (a reduced precision loaded with the recheck)."""
        from pragmeter.interpreter.recheck import Fp32Recheck

        return isinstance(self.classifier, Fp32Recheck)

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

    def predict(self, pairs: Sequence[Sequence[str]], batch_size: int = 64, progress: bool = False) -> np.ndarray:
        """Rows of label probabilities (columns in :attr:`labels` order), one per (premise, hypothesis) pair: what
        ``CrossEncoder.predict(pairs, apply_softmax=True)`` gives."""
        if isinstance(pairs, str):
            raise PragmeterError("pairs must be a list of (premise, hypothesis) pairs, not one string")
        pairs = list(pairs)
        for index, pair in enumerate(pairs):
            if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise PragmeterError(f"pair {index}: not a (premise, hypothesis) pair ({pair!r})")
        return self.probabilities([p for p, _ in pairs], [h for _, h in pairs], batch_size, progress)

    def _probabilities_rechecked(self, premises: list[str], hypotheses: list[str], batch_size: int,
                                 progress: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """The probabilities and which rows were answered again in fp32 (None: no close calls are rechecked)."""
        if self.rechecks_close_calls:
            return self.classifier.probabilities_rechecked(premises, hypotheses, batch_size, progress)
        return self.classifier.probabilities(premises, hypotheses, batch_size, progress), None

    def settle_close_choices(self, premises: list[str], hypotheses: list[str], sizes: Sequence[int],
                             rows: np.ndarray, exact: np.ndarray | None = None, batch_size: int = 64) -> np.ndarray:
        """``rows`` (probabilities of consecutive items' (premise, reading) pairs, ``sizes`` readings each) with every
        item whose two best readings' scores lie closer than the recheck gap answered again in fp32, but for the rows
        ``exact`` (already fp32's); unchanged where no close calls are rechecked (module notes)."""
        from pragmeter.interpreter.recheck import close_calls

        if not self.rechecks_close_calls:
            return rows
        scores, again, start = self.meant_scores(rows), np.zeros(len(rows), dtype=bool), 0
        exact = np.zeros(len(rows), dtype=bool) if exact is None else exact
        for size in sizes:
            if close_calls(scores[None, start:start + size], self.classifier.gap)[0]:
                again[start:start + size] = ~exact[start:start + size]
            start += size
        return self.classifier.answer_again(premises, hypotheses, rows, again, batch_size)

    def meant_scores(self, probabilities: np.ndarray) -> np.ndarray:
        """Each row's score as a meant reading: P(implied) + w P(explicit), w the explicit weight (module notes;
        P(entailed) for a 3-way model)."""
        if self.explicit_weight == 1:
            return probabilities[:, self.meant].sum(axis=1)
        return probabilities[:, self.meant] @ self._weights.astype(probabilities.dtype, copy=False)

    def scores_many(self, premises: Sequence[str], readings: Sequence[Sequence[str]], batch_size: int = 64,
                    progress: bool = False) -> list[list[float]]:
        """Scores of each premise's readings (:meth:`meant_scores`) in the order given, all pairs in one batched
        pass."""
        premises = _check_texts(premises, "premise")
        if isinstance(readings, (str, bytes, dict)) or not isinstance(readings, Iterable):
            raise PragmeterError(f"readings must be a list of lists of texts, one per premise, not "
                                 f"{type(readings).__name__} {_shown(readings)}")
        readings = [_check_readings(options, f"item {index}: ") for index, options in enumerate(readings)]
        if len(premises) != len(readings):
            raise PragmeterError(f"give one list of readings per premise ({len(premises)} premises for "
                                 f"{len(readings)} lists of readings)")
        flat_premises = [p for p, options in zip(premises, readings) for _ in options]
        flat = [text for options in readings for text in options]
        if not flat:
            return []
        rows, exact = self._probabilities_rechecked(flat_premises, flat, batch_size, progress)
        scores = self.meant_scores(self.settle_close_choices(flat_premises, flat, [len(o) for o in readings], rows,
                                                             exact, batch_size))
        out, start = [], 0
        for options in readings:
            out.append([float(s) for s in scores[start:start + len(options)]])
            start += len(options)
        return out

    def scores(self, context: str, utterance: str, readings: Sequence[str], batch_size: int = 64) -> list[float]:
        """Each reading's score as what the speaker meant by ``utterance`` in ``context``: P(implied) + w P(explicit)
        (see the module notes), in the order given."""
        from pragmeter.text import invalid_text_reason

        reason = invalid_text_reason(utterance)
        if reason:
            raise PragmeterError(f"the utterance is empty or not text ({reason})")
        if context is not None and not isinstance(context, str):
            raise PragmeterError(f"the context must be a text, not {type(context).__name__} {_shown(context)}")
        return self.scores_many([premise(context, utterance)], [_check_readings(readings)], batch_size)[0]

    def rank(self, context: str, utterance: str, readings: Sequence[str], top_k: int | None = None,
             batch_size: int = 64) -> list[dict]:
        """The readings sorted by score (:meth:`scores`), highest first (equal scores in the order given), as
        ``CrossEncoder.rank`` returns documents: ``[{"corpus_id": index in readings, "score", "text"}]``, the first
        ``top_k`` only when given."""
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise PragmeterError(f"top_k must be a positive whole number, got {top_k!r}")
        readings = _check_readings(readings)
        scores = self.scores(context, utterance, readings, batch_size)
        order = sorted(range(len(scores)), key=lambda index: -scores[index])
        return [{"corpus_id": index, "score": scores[index], "text": readings[index]} for index in order[:top_k]]

    def choose(self, context: str, utterance: str, readings: Sequence[str], batch_size: int = 64) -> int:
        """The index of the reading most likely meant (:meth:`scores`' highest; the first among equal scores)."""
        return int(np.argmax(self.scores(context, utterance, readings, batch_size)))
