"""The one shape of a multiple-choice item, shared by every reader of one: the benchmarks a chat model or an
interpreter answers (``eval/multiple_choice``) and ImpScore's choice checks (``impscore/ood``)."""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ChoiceItem:
    """The situation (``context``), what is said (``utterance``), the readings to choose from (``options``, each under
    the key an answer names: a letter or a number) and the meant one (``answer``, its key); ``text`` is the item's
    implicit text (what ImpScore stratifies), ``extra`` fields are logged with each sample."""

    id: str
    context: str  # the situation the utterance is said in ("" when the item has none)
    utterance: str  # what is said, whose meaning is chosen ("" when the options are the utterances themselves)
    options: tuple[tuple[str, str], ...]  # ((key, reading), …) in the order shown
    answer: str  # key of the meant reading
    text: str  # the item's implicit text, stratified by ImpScore
    extra: dict = field(default_factory=dict, compare=False)  # logged with each sample (source, group, …)

    @classmethod
    def lettered(cls, id: str, utterance: str, readings: Sequence[str], meant: int, context: str = "",
                 **extra) -> "ChoiceItem":
        """An item whose readings are keyed A, B, C… in order (1, 2, 3… past 26), the meant one by its index."""
        keys = (list(string.ascii_uppercase[:len(readings)]) if len(readings) <= 26
                else [str(i) for i in range(1, len(readings) + 1)])
        return cls(id, context, utterance, tuple(zip(keys, readings)), keys[meant], utterance, extra)

    @property
    def readings(self) -> tuple[str, ...]:
        return tuple(reading for _, reading in self.options)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.options)

    @property
    def answer_index(self) -> int:
        return self.keys.index(self.answer)
