"""``--model local:PATH``: a fine-tuned classifier folder from ``pragmeter classifier train`` answers the harness's
tasks. It joins the chat backends through :func:`pragmeter.llm.backends.register_backend` (``llm/`` never imports
``classify/``): importing this module registers it under ``local``.

The task's chat prompt is read back into the classifier's input: for pair models the last ``Premise:`` and
``Hypothesis:`` lines of the last user message (the INLI task's template ends with them), for single-text
models the last user message (the ISHate tasks send the text as the user turn). The answer is the predicted
label's word that the task parses (recorded in the model folder), so API and local models share one results
format. Requests are batched: every request waiting at the same moment goes through one forward pass.

Model arguments: ``device`` (default cuda when available), ``batch_size`` (default 64).
"""

from __future__ import annotations

import asyncio
import re

from pragmeter.errors import PragmeterError
from pragmeter.llm.backends import register_backend
from pragmeter.llm.backends.base import BackendFailed, BackendFatal, ChatBackend, Completion, Messages, reject_unknown_args

_KNOWN = {"device", "batch_size"}
_PAIR = re.compile(r"Premise:[ \t]*(?P<premise>.*?)\n\s*Hypothesis:[ \t]*(?P<hypothesis>.*?)\s*\Z", re.DOTALL)


def classifier_input(messages: Messages, input_kind: str) -> tuple[str, str | None]:
    """(text, hypothesis or None) from a task prompt; ValueError when the prompt holds no such input."""
    users = [m["content"] for m in messages if m.get("role") == "user"]
    if not users:
        raise ValueError("the prompt has no user message")
    content = users[-1]
    if not isinstance(content, str) or not content.strip():
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


class LocalClassifierBackend(ChatBackend):
    def __init__(self, path: str, device: str | None = None, batch_size: int = 64):
        from pragmeter.classify.loading import load_classifier

        self.path = path
        self.classifier = load_classifier(path, device)
        self.batch_size = batch_size
        self.concurrency = batch_size  # so that a full batch of requests can wait together
        self._pending: list[tuple[str, str | None, asyncio.Future]] = []
        self._scheduled = False

    @classmethod
    def from_args(cls, target: str | None, args: dict[str, str]) -> "LocalClassifierBackend":
        reject_unknown_args(args, _KNOWN, "local")
        if not target:
            raise PragmeterError("the local backend needs a classifier folder: --model local:PATH")
        try:
            batch_size = int(args.get("batch_size") or 64)
        except ValueError:
            raise PragmeterError(f"model argument batch_size={args['batch_size']!r} is not an integer") from None
        if batch_size < 1:
            raise PragmeterError("model argument batch_size must be at least 1")
        return cls(target, args.get("device") or None, batch_size)

    def identity(self) -> dict:
        settings = self.classifier.settings
        return {"backend": "local", "model": self.path, "base_encoder": settings.base_encoder,
                "recipe": settings.recipe, "weights_sha256": self._weights_digest()}

    def _weights_digest(self) -> str:
        from pragmeter.classify.loading import weights_file
        from pragmeter.data.root import sha256_of

        if not hasattr(self, "_digest"):
            self._digest = sha256_of(weights_file(self.path))
        return self._digest

    def decoding(self, max_tokens: int | None) -> dict:
        settings = self.classifier.settings
        bias = {"decision_bias": settings.decision_bias} if any(settings.decision_bias.values()) else {}
        return {"decoding": "argmax", "max_length": settings.max_length, **bias}

    def settings(self) -> dict:
        return {**self.identity(), **self.decoding(None), "batch_size": self.batch_size,
                "device": str(self.classifier.device)}

    def unaskable(self, messages: Messages) -> str | None:
        """Why the classifier cannot take this prompt (no input text in it), else None: the run counts the item as
        an invalid answer and lists it, instead of failing the request on every rerun."""
        try:
            classifier_input(messages, self.classifier.settings.input_kind)
        except ValueError as error:
            return f"local classifier: {error}"
        return None

    async def complete(self, messages: Messages, max_tokens: int | None, sample: int = 0,
                       top_logprobs: int | None = None) -> Completion:
        if top_logprobs:
            raise BackendFatal("the local backend answers with a label, not log-probabilities: use mode=generate")
        try:
            text, hypothesis = classifier_input(messages, self.classifier.settings.input_kind)
        except ValueError as error:
            raise BackendFailed(f"local classifier: {error}") from None
        future = asyncio.get_running_loop().create_future()
        self._pending.append((text, hypothesis, future))
        if len(self._pending) >= self.batch_size:
            self._flush()
        elif not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._flush)
        label = await future
        words = self.classifier.settings.answer_words
        return Completion(text=words.get(label, label), finish_reason="stop")

    def _flush(self) -> None:
        self._scheduled = False
        batch, self._pending = self._pending, []
        if not batch:
            return
        texts = [text for text, _, _ in batch]
        pairs = None if batch[0][1] is None else [hypothesis for _, hypothesis, _ in batch]
        try:
            labels = self.classifier.predict(texts, pairs, self.batch_size)
        except Exception as error:  # noqa: BLE001 - every waiting request gets the failure
            for *_, future in batch:
                future.set_exception(BackendFailed(f"local classifier failed: {error}"))
            return
        for (*_, future), label in zip(batch, labels):
            future.set_result(label)


register_backend("local", LocalClassifierBackend)
