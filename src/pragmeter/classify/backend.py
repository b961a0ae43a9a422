"""``--model local:PATH``: a fine-tuned classifier folder from ``pragmeter classifier train`` answers the harness's
tasks. It joins the chat backends through :func:`pragmeter.llm.backends.register_backend` (``llm/`` never imports
``classify/``): importing this module registers it under ``local``.

The task's chat prompt is read back into the classifier's input: for pair models the last ``Premise:`` and
``Hypothesis:`` lines of the last user message (the INLI task's template ends with them), for single-text
models the last user message (the ISHate tasks send the text as the user turn). The answer is the predicted
label's word that the task parses (recorded in the model folder), so API and local models share one results
format. A pair model is an interpreter (:mod:`pragmeter.classify.interpreter`) and also answers the multiple-choice
tasks (DRInQ, LUDWIG, Circa, Fig-QA, the Floyd battery): it reads the item a prompt asks about
(:func:`pragmeter.eval.multiple_choice.prompt_item`) instead of the prompt — premise = the context with the quoted
utterance, each option a reading — and answers with the task's text for the reading most likely meant
(P(implied) + P(explicit)); an item whose options are utterances (Snarks) has no reading to rank and fails. Requests are batched: every request waiting at the same moment goes through one
forward pass. The folder may also be a packaged interpreter's name.

An interpreter runs as :meth:`pragmeter.classify.interpreter.Interpreter.load` resolves it (OpenVINO on a CPU, in bf16
only where its recorded check allows; torch on a GPU); any other classifier runs through torch.

Model arguments: ``device`` (default cuda when available), ``batch_size`` (default 64), ``backend`` (auto, openvino or
torch; default auto) and ``precision`` (auto, fp32 or bf16; default auto).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pragmeter.errors import DataError, PragmeterError
from pragmeter.eval.multiple_choice import prompt_item
from pragmeter.llm.backends import register_backend
from pragmeter.llm.backends.base import BackendFailed, BackendFatal, ChatBackend, Completion, Messages, reject_unknown_args
from pragmeter.text import is_blank

_KNOWN = {"device", "batch_size", "backend", "precision"}
_PAIR = re.compile(r"Premise:[ \t]*(?P<premise>.*?)\n\s*Hypothesis:[ \t]*(?P<hypothesis>.*?)\s*\Z", re.DOTALL)


def classifier_input(messages: Messages, input_kind: str) -> tuple[str, str | None]:
    """(text, hypothesis or None) from a task prompt; ValueError when the prompt holds no such input."""
    users = [m["content"] for m in messages if m.get("role") == "user"]
    if not users:
        raise ValueError("the prompt has no user message")
    content = users[-1]
    if not isinstance(content, str) or is_blank(content):
        # e.g. ISHate messages whose cleaned text is empty (the dataset's cleaning removed a post that was only a
        # link or a number): nothing to classify, as `classifier predict` refuses an empty row
        raise ValueError("the prompt's user message is empty (no text to classify)")
    if input_kind == "single":
        return content, None
    # The last "Premise:" starts the item (earlier ones are in-context examples).
    start = content.rfind("Premise:")
    found = _PAIR.match(content[start:]) if start >= 0 else None
    if not found:
        raise ValueError("the prompt does not end with 'Premise: …' and 'Hypothesis: …' lines")
    return found.group("premise").strip(), found.group("hypothesis").strip()


def open_classifier(folder: Path, device: str | None, backend: str = "auto", precision: str = "auto"):
    """(the classifier of ``folder``, its Runtime or None): an interpreter as Interpreter.load resolves ``backend``
    and ``precision`` (``device`` None: cuda when available, else the CPU's fast path), any other classifier through
    torch (``backend`` auto or torch)."""
    from pragmeter.classify.interpreter import Interpreter, is_interpreter
    from pragmeter.classify.loading import load_classifier
    from pragmeter.classify.model import read_settings
    from pragmeter.encoders.registry import default_device

    if is_interpreter(read_settings(folder)[2]):
        interpreter = Interpreter.load(folder, device or default_device(), precision, backend)
        return interpreter.classifier, interpreter.runtime
    if backend not in ("auto", "torch"):
        raise PragmeterError(f"model argument backend={backend!r}: only an interpreter runs through OpenVINO; "
                             f"{folder} runs backend=torch")
    return load_classifier(folder, device, precision), None


class LocalClassifierBackend(ChatBackend):
    def __init__(self, path: str, device: str | None = None, batch_size: int = 64, backend: str = "auto",
                 precision: str = "auto"):
        from pragmeter.classify.shipped import resolve_interpreter

        self.path = path
        if not (Path(path) / "config.json").is_file():  # a packaged interpreter's name
            path = str(resolve_interpreter(path))
        self.folder = path
        self.classifier, self.runtime = open_classifier(Path(path), device, backend, precision)
        self.batch_size = batch_size
        self.concurrency = batch_size  # so that a full batch of requests can wait together
        # Per waiting request: its (text, hypothesis or None) inputs, how its answer follows from their
        # probability rows, and the future it waits on.
        self._pending: list[tuple[list[tuple[str, str | None]], Callable, asyncio.Future]] = []
        self._scheduled = False

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
        return cls(target, args.get("device") or None, batch_size, args.get("backend") or "auto",
                   args.get("precision") or "auto")

    def identity(self) -> dict:
        settings = self.classifier.settings
        # how it runs is part of what answers, for every classifier: a bf16 answer is not an fp32 one's cache hit
        if self.runtime is not None:
            run = f"{self.runtime.backend} {self.runtime.precision}"
        else:  # torch (a fine-tuned encoder) or an svm over its encoder's backend
            classifier = self.classifier
            run = f"{getattr(classifier, 'backend', 'torch')} {getattr(classifier, 'runs_in', classifier.precision)}"
        return {"backend": "local", "model": self.path, "base_encoder": settings.base_encoder,
                "recipe": settings.recipe, "weights_sha256": self._weights_digest(), "runtime": run}

    def _weights_digest(self) -> str:
        from pragmeter.classify.loading import weights_file
        from pragmeter.data.root import sha256_of

        if not hasattr(self, "_digest"):
            self._digest = sha256_of(weights_file(self.folder))
        return self._digest

    def decoding(self, max_tokens: int | None) -> dict:
        settings = self.classifier.settings
        bias = {"decision_bias": settings.decision_bias} if any(settings.decision_bias.values()) else {}
        return {"decoding": "argmax", "max_length": settings.max_length, **bias}

    def settings(self) -> dict:
        return {**self.identity(), **self.decoding(None), "batch_size": self.batch_size,
                "device": str(self.classifier.device)}

    def unaskable(self, messages: Messages) -> str | None:
        """Why the classifier cannot take this prompt (no input text in it, or a multiple-choice item with no
        utterance whose readings it could rank), else None: the run counts the item as an invalid answer and lists
        it, instead of failing the request on every rerun."""
        try:
            self._request(messages)
        except ValueError as error:
            return f"local classifier: {error}"
        return None

    async def complete(self, messages: Messages, max_tokens: int | None, sample: int = 0,
                       top_logprobs: int | None = None) -> Completion:
        if top_logprobs:
            raise BackendFatal("the local backend answers with a label, not log-probabilities: use mode=generate")
        try:
            inputs, answer = self._request(messages)
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

    def _request(self, messages: Messages) -> tuple[list[tuple[str, str | None]], Callable]:
        """The classifier inputs a prompt asks about and the function from their probability rows to the answer:
        the label's word for one text or pair, the task's answer for the option most likely meant for a
        multiple-choice item."""
        kind = self.classifier.settings.input_kind
        words = self.classifier.settings.answer_words
        found = prompt_item(messages) if kind == "pair" else None
        if found is not None:
            return self._choice(found)
        text, hypothesis = classifier_input(messages, kind)

        def label(rows: np.ndarray) -> str:
            decided = self.classifier.decide(rows)[0]
            return words.get(decided, decided)

        return [(text, hypothesis)], label

    def _choice(self, found) -> tuple[list[tuple[str, str | None]], Callable]:
        """A multiple-choice item (:func:`pragmeter.eval.multiple_choice.prompt_item`) read by the interpreter: the
        premise is the context with the quoted utterance, each option a reading, the answer the task's text for the
        option with the highest P(implied) + P(explicit)."""
        from pragmeter.classify.interpreter import Interpreter, premise

        try:
            interpreter = Interpreter(self.classifier, self.path)  # checks the labels make a reading's score
        except PragmeterError as error:
            raise BackendFatal(str(error)) from None
        item = found.item
        if not item.utterance.strip():
            raise ValueError(f"item {item.id} has no utterance whose readings the interpreter could rank (its options "
                             f"are utterances)")
        keys = list(item.keys)
        return ([(premise(item.context, item.utterance), reading) for reading in item.readings],
                lambda rows: found.answers[keys[int(np.argmax(interpreter.meant_scores(rows)))]])

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


register_backend("local", LocalClassifierBackend)
