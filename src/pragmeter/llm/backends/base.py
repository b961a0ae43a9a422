"""The interface every chat backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from pragmeter.errors import PragmeterError

Messages = list[dict[str, str]]


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
    """A chat model. ``identity()`` and ``decoding()`` go into cache keys and results (never secrets)."""

    concurrency: int = 1

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
    async def complete(self, messages: Messages, max_tokens: int | None, sample: int = 0,
                       top_logprobs: int | None = None) -> Completion:
        """Answer ``messages``. ``sample`` > 0 asks for another independent sample of the same prompt;
        ``top_logprobs`` = K asks for the K most likely first tokens with their log-probabilities.

        Raise BackendFailed when this request cannot be answered, BackendFatal when no request can (including
        a backend without log-probabilities asked for them).
        """

    def unaskable(self, messages: Messages) -> str | None:
        """Why this model can never answer ``messages`` (no retry or rerun would change it), else None. A chat model
        takes any prompt; a local classifier only one that holds its input (classify/backend.py)."""
        return None

    async def aclose(self) -> None:
        """Release connections (called once at the end of a run)."""


def reject_unknown_args(args: dict[str, str], known: set[str] | frozenset[str], backend: str) -> None:
    """Model arguments are typed by hand on the command line: name the bad ones and the accepted ones."""
    unknown = set(args) - set(known)
    if unknown:
        raise PragmeterError(f"unknown {backend} model argument(s): {', '.join(sorted(unknown))}; "
                             f"known: {', '.join(sorted(known))}")
