"""Small text helpers shared by every layer: whether a value can be encoded, a comparison key, a content hash."""

from __future__ import annotations

import hashlib
import math
import re

# What shows nothing: whitespace and Unicode's default-ignorable code points (DerivedCoreProperties.txt): the
# zero-width space U+200B, the byte-order mark U+FEFF, the word joiner U+2060, joiners, direction marks, variation
# selectors, tags. A text made only of them is empty to a reader, whatever an encoder would make of it.
_INVISIBLE = re.compile("[\\s\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
                        "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]*")


def is_missing(value: object) -> bool:
    """A table cell with no value: None or NaN (what pandas gives for an empty cell)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def is_invisible(text: str) -> bool:
    """Whether ``text`` shows nothing: only whitespace and invisible characters (``_INVISIBLE``), or nothing."""
    return _INVISIBLE.fullmatch(text) is not None


def is_blank(value: object) -> bool:
    """A table cell with nothing in it: missing (:func:`is_missing`) or a string of spaces and invisible characters
    (:func:`is_invisible`)."""
    return is_missing(value) or (isinstance(value, str) and is_invisible(value))


def invalid_text_reason(text: object) -> str | None:
    """Why a value cannot be scored, or None when it can."""
    if is_missing(text):
        return "missing value"
    if not isinstance(text, str):
        return f"not a string ({type(text).__name__})"
    if is_invisible(text):
        return "empty text" if not text.strip() else "empty text (only invisible characters such as U+200B)"
    return unencodable_reason(text)


def unencodable_reason(text: str) -> str | None:
    """Why an encoder's tokenizer cannot take ``text`` (a lone surrogate, a NUL), or None when it can."""
    if "\x00" in text:
        return f"contains a NUL character at position {text.index(chr(0))}"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # only lone surrogates fail: valid JSON, but not Unicode text
        return f"contains a lone surrogate U+{ord(text[error.start]):04X} at position {error.start}"
    return None


def normalise(value: str) -> str:
    """Comparison key of a text: whitespace collapsed, case folded."""
    return " ".join(value.split()).casefold()


def text_hash(text: str) -> str:
    """Hex sha256 of the text's UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
