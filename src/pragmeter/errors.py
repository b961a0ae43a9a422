"""User-facing errors: the CLI prints their message on one line and exits non-zero, without a traceback."""

from __future__ import annotations


class PragmeterError(Exception):
    """An error caused by the user's input or environment, with a message that says what to do."""

    exit_code = 2


class DataError(PragmeterError):
    """A data file is missing, corrupt or malformed (the message names the file, row and field)."""


class EncoderNotFound(PragmeterError):
    """A sentence encoder could not be found offline."""


class Interrupted(PragmeterError):
    """The user interrupted a job (Ctrl-C); the message says what was kept."""

    exit_code = 130
