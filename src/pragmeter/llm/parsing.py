"""Answer parsers. Each returns the parsed answer or None (invalid); nothing is ever guessed into a label."""

from __future__ import annotations

import json
import re


class LabelParser:
    """Finds label words (whole words, case-insensitive; '-' counts as part of a word, so ``non-subtle`` never
    matches ``subtle``). Valid only when exactly one distinct label is named; synonyms may map to one label."""

    def __init__(self, words: dict[str, str]):
        self.words = {w.lower(): label for w, label in words.items()}
        alternatives = "|".join(re.escape(w) for w in sorted(self.words, key=len, reverse=True))
        self._pattern = re.compile(rf"(?<![\w-])({alternatives})(?![\w-])", re.IGNORECASE)

    def __call__(self, text: str | None) -> str | None:
        if not isinstance(text, str) or not text:  # no text (or not text at all): an invalid answer, never a crash
            return None
        found = {self.words[m.lower()] for m in self._pattern.findall(text)}
        return found.pop() if len(found) == 1 else None


def json_object(text: str | None) -> dict | None:
    """The first JSON object in ``text`` (code fences, quotes and prose around it tolerated), else None."""
    if not isinstance(text, str) or not text:
        return None
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def json_field(text: str | None, field: str) -> object | None:
    """``field`` of the first JSON object in ``text``; falls back to a ``"field": value`` regex for JSON that
    does not parse (unescaped quotes, trailing commas, cut-off output)."""
    value = (json_object(text) or {}).get(field)
    if value is not None or not isinstance(text, str) or not text:
        return value
    found = re.search(rf"""["']?{re.escape(field)}["']?\s*:\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[-+]?\d+(?:\.\d+)?)""",
                      text)
    if not found:
        return None
    raw = found.group(1)
    if raw[0] in "\"'":
        try:
            return json.loads(raw) if raw[0] == '"' else raw[1:-1]
        except json.JSONDecodeError:
            return raw[1:-1]
    return float(raw)
