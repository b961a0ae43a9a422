"""Small text helpers shared by every layer: whether a value can be encoded, a comparison key, a content hash."""

from __future__ import annotations

import hashlib
import math


def is_missing(value: object) -> bool:
    """A table cell with no value: None or NaN (what pandas gives for an empty cell)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def is_blank(value: object) -> bool:
    """A table cell with nothing in it: missing (:func:`is_missing`) or a string of spaces."""
    return is_missing(value) or (isinstance(value, str) and not value.strip())


def invalid_text_reason(text: object) -> str | None:
    """Why a value cannot be scored, or None when it can."""
    if is_missing(text):
        return "missing value"
    if not isinstance(text, str):
        return f"not a string ({type(text).__name__})"
    if not text.strip():
        return "empty text"
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
