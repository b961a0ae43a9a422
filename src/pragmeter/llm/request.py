"""One question to a model, as the task built it (the shape of lm-evaluation-harness's ``Instance``).

A :class:`Request` always carries the chat ``messages`` a chat model reads (they also key the response cache), and,
where the task has one, the structured ``input`` the messages were written from, so that a model that reads items
instead of prose (a local classifier, ``classify/backend.py``) answers without parsing the prompt back:

- ``"text"`` (:class:`TextInput`): one text to label (ISHate, hate detection);
- ``"pair"`` (:class:`PairInput`): a premise and a hypothesis (INLI);
  a classification task gives both the answer text it parses as each label, in which a local classifier answers;
- ``"choice"`` (:class:`ChoiceInput`): a multiple-choice item (its context, its utterance, the readings to choose
  from under their keys) and the answer text the task parses as each key (DRInQ, LUDWIG, Circa, Fig-QA, Snarks, the
  Floyd battery).

A request without an input is of kind ``"chat"``: only a chat model answers it. Each backend says which kinds it
answers (``ChatBackend.kinds``); a chat model answers every kind, as every request carries its messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Protocol

Messages = list[dict[str, str]]

CHAT = "chat"


@dataclass(frozen=True)
class TextInput:
    """One text to label, and the answer text the task parses as each label (empty: the model's own words)."""

    kind: ClassVar[str] = "text"
    text: str
    answers: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class PairInput:
    """A premise and a hypothesis to relate (NLI), and the answer text the task parses as each label (empty: the
    model's own words)."""

    kind: ClassVar[str] = "pair"
    premise: str
    hypothesis: str
    answers: dict[str, str] = field(default_factory=dict, compare=False)


class ChoiceItemShape(Protocol):
    """What a multiple-choice item gives a model that reads it (``eval.multiple_choice.ChoiceItem``)."""

    id: str
    context: str  # the situation the utterance is said in ("" when the item has none)
    utterance: str  # what is said ("" when the options are the utterances themselves)
    options: tuple[tuple[str, str], ...]  # ((key, reading), …) in the order shown

    @property
    def keys(self) -> tuple[str, ...]: ...

    @property
    def readings(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class ChoiceInput:
    """A multiple-choice item and the answer text the task parses as each of its option keys (what a model answers
    to choose that option)."""

    kind: ClassVar[str] = "choice"
    item: ChoiceItemShape
    answers: dict[str, str] = field(compare=False)


Input = TextInput | PairInput | ChoiceInput
KINDS = frozenset({CHAT, TextInput.kind, PairInput.kind, ChoiceInput.kind})


@dataclass(frozen=True)
class Request:
    """One request: the messages, the task's token budget, which independent sample of them it is, how many of the
    first token's likeliest alternatives to return (log-probability scoring), and the structured input the messages
    ask about (None: the messages are all there is)."""

    messages: Messages
    max_tokens: int | None = None
    sample: int = 0
    top_logprobs: int | None = None
    input: Input | None = None

    @property
    def kind(self) -> str:
        return self.input.kind if self.input is not None else CHAT
