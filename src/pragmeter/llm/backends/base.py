"""The interface every chat backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from pragmeter.errors import PragmeterError
from pragmeter.llm.request import KINDS, Request


@dataclass(frozen=True)
class Completion:
    """One model answer. ``text`` None means the server answered without content (an invalid answer)."""

    text: str | None
    finish_reason: str | None = None
    # The first generated token's most likely alternatives, (token, log-probability) best first, when asked for.
    top_logprobs: tuple[tuple[str, float], ...] | None = None


class BackendFatal(Exception):
    """A failure no retry can fix for any item (bad key, unknown model): the run stops."""


class BackendFailed(Exception):
    """This request failed after all retries (or for good, e.g. 400); the item is marked invalid."""


class ChatBackend(ABC):
    """A chat model. ``identity()`` and ``decoding()`` go into cache keys and results (never secrets). ``kinds``: the
    request kinds it answers (:mod:`pragmeter.llm.request`); a chat model reads the messages every request carries,
    so it answers them all."""

    concurrency: int = 1
    kinds: ClassVar[frozenset[str]] = KINDS

    @classmethod
    @abstractmethod
    def from_args(cls, target: str | None, args: dict[str, str]) -> "ChatBackend":
        """Build from ``--model NAME:TARGET`` and ``--model-args``; reject unknown keys."""

    @abstractmethod
    def identity(self) -> dict:
        """What model answers (e.g. {"backend": "openai-chat", "model": "llama"}); part of the cache key."""

    @abstractmethod
    def decoding(self, max_tokens: int | None) -> dict:
        """Decoding parameters as sent (temperature, max_tokens, seed…); part of the cache key."""

    def settings(self) -> dict:
        """Public settings for results files (identity, decoding defaults, transport); no secrets."""
        return {**self.identity(), **self.decoding(None), "concurrency": self.concurrency}

    @abstractmethod
    async def complete(self, request: Request) -> Completion:
        """Answer ``request`` (of a kind the backend answers). ``request.sample`` > 0 asks for another independent
        sample of the same prompt; ``request.top_logprobs`` = K asks for the K most likely first tokens with their
        log-probabilities.

        Raise BackendFailed when this request cannot be answered, BackendFatal when no request can (including
        a backend without log-probabilities asked for them).
        """

    def unaskable(self, request: Request) -> str | None:
        """Why this model can never answer ``request`` (no retry or rerun would change it), else None: a request of a
        kind it does not answer; a backend adds its own reasons (a local classifier given an empty text)."""
        if request.kind not in self.kinds:
            return f"{self.identity().get('backend')} answers {', '.join(sorted(self.kinds))} requests, not {request.kind}"
        return None

    async def aclose(self) -> None:
        """Release connections (called once at the end of a run)."""


def reject_unknown_args(args: dict[str, str], known: set[str] | frozenset[str], backend: str) -> None:
    """Model arguments are typed by hand on the command line: name the bad ones and the accepted ones."""
    unknown = set(args) - set(known)
    if unknown:
        raise PragmeterError(f"unknown {backend} model argument(s): {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(sorted(known))}")
