"""Emphasized-Talk (Lin & Lee, Findings of EMNLP 2024): one item per emphasized word of each dialogue.

The 984 dialogues hold 2,085 emphasized words (dialogue 690 has none); every one becomes an item (none
dropped), with the dialogue context turns, the current turn with that word wrapped in quotation marks, and all
its reference implications.

Where the emphasized word is marked (the annotation gives the word, not its position):
1. the first whole-word occurrence in the current turn's text (case-insensitive; a "word" boundary is any
   character that is not a letter or digit, so ``i`` matches in ``i'll``) — ``match = "word"``;
2. otherwise (3 items: annotator typos such as ``nterview`` for ``interview``) the first substring
   occurrence, widened to the whole words it touches — ``match = "widened"``. Item ``et-482-4``
   (``nterview``) thus gets the same prompt as ``et-482-2`` (``interview``), with different references;
   both are kept;
3. a word that does not occur at all is a DataError (none in the pinned file).
When the word occurs more than once (23 items, e.g. ``i`` in "i said i had been…"), the first occurrence is
marked, as the annotators saw the sentence left to right and no position was recorded; ``occurrences`` keeps
the count so such items can be analysed or excluded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from pragmeter.data.root import data_file
from pragmeter.errors import DataError
from pragmeter.io.tables import read_json

FILE = "emphasized_talk/data.json"
FILES = (FILE,)
_SPEAKER = re.compile(r"^\s*([01]):\s?")


@dataclass(frozen=True)
class EmphasizedTalkItem:
    id: str  # "et-<dialogue>-<word index>"
    dialogue: int  # index of the dialogue in data.json
    context: tuple[str, ...]  # previous turns, each "S: text" with S the speaker (0 or 1)
    current: str  # current turn, "S: text"
    word: str  # emphasized word or phrase as annotated
    marked_current: str  # current turn with the emphasized span in quotation marks
    span: tuple[int, int]  # character span of the marked text within ``current``
    occurrences: int  # whole-word occurrences of ``word`` in the current turn
    match: str  # "word" or "widened" (see module docstring)
    references: tuple[str, ...]  # reference implications (at least one)

    @property
    def context_text(self) -> str:
        return "\n".join(self.context)


def _is_word_char(char: str) -> bool:
    return char.isalnum()


def locate(word: str, text: str, start: int = 0) -> tuple[tuple[int, int], int, str] | None:
    """(span, whole-word occurrence count, match kind) of ``word`` in ``text[start:]``, or None."""
    lowered, target = text.lower(), word.lower()
    whole = []
    for found in re.finditer(re.escape(target), lowered[start:]):
        begin, end = found.start() + start, found.end() + start
        before_ok = begin == 0 or not _is_word_char(text[begin - 1])
        after_ok = end == len(text) or not _is_word_char(text[end])
        if before_ok and after_ok:
            whole.append((begin, end))
    if whole:
        return whole[0], len(whole), "word"
    begin = lowered.find(target, start)
    if begin < 0:
        return None
    end = begin + len(target)
    while begin > start and _is_word_char(text[begin - 1]):
        begin -= 1
    while end < len(text) and _is_word_char(text[end]):
        end += 1
    return (begin, end), 0, "widened"


def read_dialogues(root: str | os.PathLike | None = None, path: str | os.PathLike | None = None) -> dict:
    """data.json (or ``path``, a file of your own in its schema), its shape checked: previous turn ->
    {"current": text, "emphasis": {word: [implication, …]}}, every implication a non-empty text."""
    path = data_file(FILE, root) if path is None else Path(path)
    data = read_json(path, dict, "dialogues in the Emphasized-Talk data.json schema")
    for number, value in enumerate(data.values()):
        emphasis = value.get("emphasis") if isinstance(value, dict) else None
        if not isinstance(emphasis, dict) or not isinstance(value.get("current"), str):
            raise DataError(f"{path}: dialogue {number}: expected 'current' (text) and an 'emphasis' object")
        for word, implications in emphasis.items():
            if (not isinstance(implications, list) or not implications
                    or not all(isinstance(i, str) and i.strip() for i in implications)):
                raise DataError(f"{path}: dialogue {number}: emphasis {word!r}: expected a list of non-empty texts "
                                "(at least one)")
    return data


def load_emphasized_talk(root: str | os.PathLike | None = None,
                         path: str | os.PathLike | None = None) -> list[EmphasizedTalkItem]:
    """Every emphasized word; ``path`` reads a file of your own in the data.json schema instead (no checksum)."""
    path = data_file(FILE, root) if path is None else Path(path)
    data = read_dialogues(path=path)
    items = []
    for dialogue, (context_key, value) in enumerate(data.items()):
        where = f"{path}: dialogue {dialogue}"
        current, emphasis = value["current"], value["emphasis"]  # shapes checked by read_dialogues
        # One pinned dialogue (690) has an empty 'emphasis' object: it contributes no item.
        speaker = _SPEAKER.match(current)
        body_start = speaker.end() if speaker else 0  # never mark the speaker digit
        context = tuple(turn.strip() for turn in context_key.split("<br>") if turn.strip())
        for index, (word, references) in enumerate(emphasis.items()):
            found = locate(word, current, body_start)
            if found is None:
                raise DataError(f"{where}: emphasized word {word!r} does not occur in the current turn {current!r}")
            (begin, end), occurrences, match = found
            marked = f'{current[:begin]}"{current[begin:end]}"{current[end:]}'
            items.append(EmphasizedTalkItem(
                id=f"et-{dialogue}-{index}", dialogue=dialogue, context=context, current=current, word=word,
                marked_current=marked, span=(begin, end), occurrences=occurrences, match=match,
                references=tuple(r.strip() for r in references),
            ))
    return items
