"""The library's errors, typed so that a Python caller catches them as it would the built-in kind
(``except ValueError`` catches a bad parameter or a malformed data file, ``except ImportError`` a missing extra), and
the command layer says each in its own terms (one line, no traceback; a parameter as the flag that sets it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


class PragmeterError(Exception):
    """An error caused by the user's input or environment, with a message that says what to do."""


class InvalidParameter(PragmeterError, ValueError):
    """A value of parameter ``name`` the library cannot take: ``value`` as given, ``reason`` what is wrong with it or
    what to give instead, ``choices`` the values it takes when it is a choice; ``also``: the other parameters (name ->
    value) whose values together with this one are the problem. ``value`` :data:`ALONE` names the parameter without a
    value (it was not given, or its value is beside the point)."""

    ALONE: Any = object()

    def __init__(self, name: str, value: Any = ALONE, reason: str = "", *, choices: Sequence[Any] = (),
                 also: Mapping[str, Any] | None = None):
        self.name, self.value, self.choices = name, value, tuple(choices)
        self.also = dict(also or {})
        self.reason = reason or (f"must be one of {', '.join(map(str, self.choices))}" if self.choices else "")
        super().__init__(self.said(spelled))

    def said(self, spell: Callable[[str, Any], str]) -> str:
        """The message with each parameter as ``spell(name, value)`` says it (``value`` may be :data:`ALONE`)."""
        named = ", ".join(spell(name, value) for name, value in [(self.name, self.value), *self.also.items()])
        return f"{named}: {self.reason}" if self.reason else named


def spelled(name: str, value: Any) -> str:
    """A parameter as the library says it: ``name=value`` (``precision='bf16'``), or ``name`` alone."""
    return name if value is InvalidParameter.ALONE else f"{name}={value!r}"


class OutputExists(PragmeterError, FileExistsError):
    """``path`` holds a finished output (``what``: "exists", "already holds a model", …) that is replaced only when
    the caller asks for it (``overwrite``)."""

    def __init__(self, path: str | Path, what: str = "exists"):
        self.path, self.what = Path(path), what
        super().__init__(f"{path} {what}; pass overwrite=True to replace it")


class MissingExtra(PragmeterError, ImportError):
    """A feature needs the optional dependencies of pip extra ``extra`` (``what``: the feature)."""

    def __init__(self, extra: str, what: str, detail: str = ""):
        self.extra, self.what = extra, what
        super().__init__(f"{what} needs the '{extra}' extra: pip install 'pragmeter[{extra}]'"
                         + (f" ({detail})" if detail else ""), name=None)


class DataError(PragmeterError, ValueError):
    """A data file is missing, corrupt or malformed (the message names the file, row and field)."""


class EncoderNotFound(PragmeterError):
    """A sentence encoder could not be found offline."""


class Interrupted(PragmeterError):
    """The user interrupted a job (Ctrl-C); the message says what was kept."""
