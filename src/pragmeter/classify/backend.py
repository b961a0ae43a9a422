"""``--model local:PATH``: a fine-tuned classifier folder from ``pragmeter classifier train`` answers the harness's
tasks. It joins the chat backends through the backend table of :mod:`pragmeter.llm.backends` (``llm/`` never imports
``classify/``; the table names this module, imported when ``local`` is first asked for).

The classifier reads the structured input each request carries (:mod:`pragmeter.llm.request`), never the prompt's
prose: a single-text model answers ``text`` requests (the ISHate and hate-detection tasks), a pair model ``pair``
requests (INLI's premise and hypothesis). The answer is the predicted label's word that the task parses (recorded in
the model folder), so API and local models share one results format. A pair model whose labels make a reading's
score is an interpreter (:mod:`pragmeter.interpreter.model`) and also answers ``choice`` requests, the
multiple-choice tasks' items (DRInQ, LUDWIG, Circa, Fig-QA, the Floyd battery) — premise = the context with the
quoted utterance, each option a reading — with the task's text for the reading most likely meant (P(implied) +
w P(explicit), w the explicit weight); an item whose options are utterances (Snarks) has no reading to rank and
cannot be asked. A task that asks a kind of request the model does not answer is refused before any request
(``eval/runner.py: check_kinds``).
Requests are batched: every request waiting at the same moment goes through one forward pass. The folder may also be
a packaged interpreter's name.

The folder opens as every command opens it (:func:`pragmeter.classify.opening.open_classifier`): an interpreter as
:meth:`pragmeter.interpreter.model.Interpreter.load` resolves it (OpenVINO on a CPU, in bf16 only where its recorded
check allows; torch on a GPU ``device``); any other classifier through torch. Its runtime's signature is in the
results' model settings (``runtime_signature``).

Model arguments: ``device`` (a torch device; default: as ``pragmeter interpret`` and ``classifier predict`` run the
folder), ``batch_size`` (default 64), ``backend`` (auto, openvino or torch; default auto), ``precision`` (auto,
fp32, bf16 or fp16; default auto) and, for an interpreter, ``explicit_weight`` (the weight on P(explicit) in a
reading's score, 0 to 1; default: the folder's, :mod:`pragmeter.interpreter.model`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pragmeter.errors import DataError, PragmeterError
from pragmeter.llm.backends.base import BackendFailed, BackendFatal, ChatBackend, Completion, reject_unknown_args
from pragmeter.llm.request import ChoiceInput, PairInput, Request, TextInput
from pragmeter.text import is_blank

_KNOWN = {"device", "batch_size", "backend", "precision", "explicit_weight"}
# The form a classification answer takes, part of every cache key: answers cached in another form (a 4-way folder's
# bare labels, before a label was answered in the task's own text) are asked again, never replayed as invalid.
ANSWER_FORM = "the task's answer text for the decided label"


def classifier_input(request: Request) -> tuple[str, str | None]:
    """(text, hypothesis or None) of a ``text`` or ``pair`` request; ValueError when it holds no text to classify."""
    if isinstance(request.input, PairInput):
        return request.input.premise, request.input.hypothesis
    if not isinstance(request.input, TextInput):
        raise ValueError(f"a {request.kind} request holds no text to classify")
    if not isinstance(request.input.text, str) or is_blank(request.input.text):
        # e.g. ISHate messages whose cleaned text is empty (the dataset's cleaning removed a post that was only a
        # link or a number): nothing to classify, as `classifier predict` refuses an empty row
        raise ValueError("the item's text is empty (no text to classify)")
    return request.input.text, None


class LocalClassifierBackend(ChatBackend):
    def __init__(self, path: str, device: str | None = None, batch_size: int = 64, backend: str = "auto",
                 precision: str = "auto", explicit_weight: float | None = None):
        from pragmeter.classify.opening import open_classifier
        from pragmeter.interpreter.hub import resolve_interpreter

        self.path = path
        if not (Path(path) / "config.json").is_file():  # a packaged interpreter's name
            path = str(resolve_interpreter(path))
        self.folder = path
        self.classifier, self.runtime = open_classifier(path, backend=backend, precision=precision, device=device)
        self.interpreter = self._interpreter(explicit_weight)
        self.kinds = self._kinds()
        self.batch_size = batch_size
        self.concurrency = batch_size  # so that a full batch of requests can wait together
        # Per waiting request: its (text, hypothesis or None) inputs, how its answer follows from their
        # probability rows, and the future it waits on.
        self._pending: list[tuple[list[tuple[str, str | None]], Callable, asyncio.Future]] = []
        self._scheduled = False

    def _interpreter(self, explicit_weight: float | None):
        """The classifier read as an interpreter (it answers multiple-choice items), or None; an explicit weight for
        another classifier is refused."""
        from pragmeter.interpreter.model import Interpreter, is_interpreter

        if is_interpreter(self.classifier.settings):
            return Interpreter(self.classifier, self.path, explicit_weight)
        if explicit_weight is not None:
            raise PragmeterError(f"model argument explicit_weight: {self.path} is not an interpreter (it scores no "
                                 f"readings)")
        return None

    def _kinds(self) -> frozenset[str]:
        """The request kinds this classifier answers: ``text`` (a single-text model), ``pair`` (a pair model) and
        ``choice`` (an interpreter)."""
        if self.classifier.settings.input_kind != "pair":
            return frozenset({TextInput.kind})
        return frozenset({PairInput.kind} | ({ChoiceInput.kind} if self.interpreter is not None else set()))

    @classmethod
    def from_args(cls, target: str | None, args: dict[str, str]) -> "LocalClassifierBackend":
        reject_unknown_args(args, _KNOWN, "local")
        if not target:
            raise PragmeterError("the local backend needs a classifier folder: local:PATH")
        try:
            batch_size = int(args.get("batch_size") or 64)
        except ValueError:
            raise PragmeterError(f"model argument batch_size={args['batch_size']!r} is not an integer") from None
        if batch_size < 1:
            raise PragmeterError("model argument batch_size must be at least 1")
        if args.get("device"):
            from pragmeter.encoders.runtime import device_problem

            problem = device_problem(args["device"])
            if problem:
                raise PragmeterError(f"model argument device {problem}")
        weight = None
        if args.get("explicit_weight"):
            from pragmeter.classify.model import parse_explicit_weight

            try:
                weight = parse_explicit_weight(args["explicit_weight"])
            except PragmeterError as error:
                raise PragmeterError(f"model argument explicit_weight {error}") from None
        return cls(target, args.get("device") or None, batch_size, args.get("backend") or "auto",
                   args.get("precision") or "auto", weight)

    def identity(self) -> dict:
        settings = self.classifier.settings
        # how it runs is part of what answers, for every classifier: a bf16 answer is not an fp32 one's cache hit,
        # nor one whose close calls were answered again in fp32 (interpreter/recheck.py) one without
        from pragmeter.interpreter.recheck import Fp32Recheck

        run = f"{self.runtime.backend} {self.runtime.precision}"
        if isinstance(self.classifier, Fp32Recheck):
            run += f", {self.classifier.description}"
        return {"backend": "local", "model": self.path, "base_encoder": settings.base_encoder,
                "recipe": settings.recipe, "weights_sha256": self._weights_digest(), "runtime": run,
                "answers": ANSWER_FORM}

    def _weights_digest(self) -> str:
        from pragmeter.classify.loading import weights_file
        from pragmeter.data.root import sha256_of

        if not hasattr(self, "_digest"):
            self._digest = sha256_of(weights_file(self.folder))
        return self._digest

    def decoding(self, max_tokens: int | None) -> dict:
        settings = self.classifier.settings
        bias = {"decision_bias": settings.decision_bias} if any(settings.decision_bias.values()) else {}
        if self.interpreter is not None and self.interpreter.explicit_weight != 1:  # choices differ: not a cache hit
            bias["explicit_weight"] = self.interpreter.explicit_weight
        return {"decoding": "argmax", "max_length": settings.max_length, **bias}

    def settings(self) -> dict:
        return {**self.identity(), **self.decoding(None), "batch_size": self.batch_size,
                "device": str(self.classifier.device), "runtime_signature": self.runtime.signature()}

    def unaskable(self, request: Request) -> str | None:
        """Why the classifier cannot take this request (a kind it does not answer, an empty text, or a
        multiple-choice item with no utterance whose readings it could rank), else None: the run counts the item as
        an invalid answer and lists it, instead of failing the request on every rerun."""
        try:
            self._request(request)
        except ValueError as error:
            return f"local classifier: {error}"
        return None

    async def complete(self, request: Request) -> Completion:
        if request.top_logprobs:
            raise BackendFatal("the local backend answers with a label, not log-probabilities: use mode=generate")
        try:
            inputs, answer = self._request(request)
        except ValueError as error:
            raise BackendFailed(f"local classifier: {error}") from None
        future = asyncio.get_running_loop().create_future()
        self._pending.append((inputs, answer, future))
        if sum(len(waiting) for waiting, _, _ in self._pending) >= self.batch_size:
            self._flush()
        elif not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)
        return Completion(text=await future, finish_reason="stop")

    def _request(self, request: Request) -> tuple[list[tuple[str, str | None]], Callable]:
        """The classifier inputs a request asks about and the function from their probability rows to the answer:
        the label's word for one text or pair, the task's answer for the option most likely meant for a
        multiple-choice item. ValueError for a request the classifier cannot take."""
        if request.kind not in self.kinds:
            raise ValueError(f"it answers {' and '.join(sorted(self.kinds))} requests, not {request.kind}")
        if isinstance(request.input, ChoiceInput):
            return self._choice(request.input)
        text, hypothesis = classifier_input(request)
        # the task's text for the label first (it parses that), then the folder's own word, then the label itself
        words = {**self.classifier.settings.answer_words, **request.input.answers}

        def label(rows: np.ndarray) -> str:
            decided = self.classifier.decide(rows)[0]
            return words.get(decided, decided)

        return [(text, hypothesis)], label

    def _choice(self, found: ChoiceInput) -> tuple[list[tuple[str, str | None]], Callable]:
        """A multiple-choice item read by the interpreter: the premise is the context with the quoted utterance, each
        option a reading, the answer the task's text for the option with the highest score (P(implied) +
        w P(explicit))."""
        from pragmeter.interpreter.model import premise

        item = found.item
        if not item.utterance.strip():
            raise ValueError(f"item {item.id} has no utterance whose readings the interpreter could rank (its options "
                             f"are utterances)")
        keys = list(item.keys)
        return ([(premise(item.context, item.utterance), reading) for reading in item.readings],
                lambda rows: found.answers[keys[int(np.argmax(self.interpreter.meant_scores(rows)))]])

    def _flush(self) -> None:
        self._scheduled = False
        batch, self._pending = self._pending, []
        if not batch:
            return
        flat = [pair for inputs, _, _ in batch for pair in inputs]
        texts = [text for text, _ in flat]
        pairs = None if flat[0][1] is None else [hypothesis for _, hypothesis in flat]
        try:
            rows = self.classifier.probabilities(texts, pairs, self.batch_size)
        except DataError as error:  # damaged weights (NaN probabilities): no request can be answered
            for *_, future in batch:
                future.set_exception(BackendFatal(str(error)))
            return
        except Exception as error:  # noqa: BLE001 - every waiting request gets the failure
            for *_, future in batch:
                future.set_exception(BackendFailed(f"local classifier failed: {error}"))
            return
        start = 0
        for inputs, answer, future in batch:
            try:
                future.set_result(answer(rows[start:start + len(inputs)]))
            except Exception as error:  # noqa: BLE001 - this request's answer fails, not the others'
                future.set_exception(BackendFailed(f"local classifier failed: {error}"))
            start += len(inputs)


BACKEND = LocalClassifierBackend
