"""What a generation stage accepts: shape checks raise :class:`Malformed`; refusals are recognised, never kept."""

from __future__ import annotations

import re

# Refusal phrasings of chat models. Anchored to the start of the text (after quotes) or to a sentence start so
# that generated data *about* apologising ("I'm sorry I missed your party") is not taken for a refusal.
_REFUSAL = re.compile(
    r"""(?:^|[.!?]\s+)["'“]?(?:
        (?:I'?m|I\ am)\ (?:sorry|afraid),?\ (?:but\ )?I\ (?:can(?:no|')?t|cannot|won'?t|am\ not\ able|'m\ not\ able|am\ unable|'m\ unable)
      | I\ (?:can(?:no|')?t|cannot|won'?t|will\ not|am\ not\ able\ to|'m\ not\ able\ to|am\ unable\ to|'m\ unable\ to)
          \ (?:(?:help|assist)(?:\ you)?(?:\ with\ (?:that|this|th[ei]se?|the\ request|your\ request)|\s*[.!]|\s*$)
             |comply|fulfil|fulfill|generate|create|produce|engage\ in|provide\ (?:that|this|such|an?\ explicit))
      | As\ an\ AI\b
      | I\ must\ (?:decline|refuse)
      | Sorry,\ (?:but\ )?I\ (?:can(?:no|')?t|cannot|won'?t)
    )""",
    re.IGNORECASE | re.VERBOSE,
)


_LABEL_LINE = re.compile(r"^[\W_]*([A-Za-z][A-Za-z ]{0,40}?)[\W_]*:\s*(.*)$")


class Malformed(ValueError):
    """The answer does not have the shape the stage asked for (retried, then dropped and counted)."""


class Abstained:
    """A valid answer that declines on purpose, as the prompt allows (DRInQ: an empty list); never retried."""

    def __repr__(self) -> str:
        return "ABSTAINED"


ABSTAINED = Abstained()


def is_refusal(text: str | None) -> bool:
    return bool(text) and _REFUSAL.search(text.replace("’", "'")) is not None


def strings_in(value) -> list[str]:
    """Every string inside a parsed answer (nested lists, tuples and dict values)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in strings_in(v)]
    return []


def labelled_lines(text: str, labels: list[str]) -> dict[str, str]:
    """``{"Passage": "..."}`` from lines starting ``Label:`` (case-insensitive, markdown bold tolerated).

    A line that starts with another label (``Justification:``) ends the previous field; other lines continue
    it. Each wanted label must occur with non-empty text, else :class:`Malformed` names the first one missing.
    """
    wanted = {label.lower(): label for label in labels}
    found: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        match = _LABEL_LINE.match(line.strip())
        if match:
            label = wanted.get(" ".join(match.group(1).lower().split()))
            current = label if label is not None and label not in found else None  # first answer only
            if current is not None:
                found[current] = match.group(2).strip()
        elif current is not None and line.strip():
            found[current] = f"{found[current]} {line.strip()}".strip()
    for label in labels:
        value = found.get(label, "").strip().strip('"“”*').strip()
        if not value:
            raise Malformed(f"no {label!r} line")
        found[label] = value
    return {label: found[label] for label in labels}
