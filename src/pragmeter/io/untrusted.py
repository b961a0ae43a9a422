"""Folders someone else wrote (a shared results folder) are untrusted input: a name read from one of their files
becomes a single safe file-name component before it is part of a path (:func:`safe_name`), a file is read only
when it is a regular file inside the folder (:func:`read_inside`), and a folder made for the outputs is never a
symbolic link that would carry them elsewhere (:func:`folder_inside`)."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from pragmeter.errors import DataError, PragmeterError

MAX_NAME = 100  # characters of a name kept in a file name; file systems allow 255 bytes with the prefixes
# Path separators, control characters, and the characters Windows refuses in a file name.
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]')
# Names Windows gives to devices, whatever the extension.
_DEVICES = re.compile(r"(?i)(con|prn|aux|nul|com\d|lpt\d)(\..*)?")


def safe_name(name: object) -> str:
    """``name`` when it can stand as one file name on every system (no separator, control character or character
    Windows refuses, no leading dot or leading or trailing space, not a device name, at most ``MAX_NAME``
    characters); otherwise those characters replaced by "_", cut, and followed by a short hash of the whole name, so
    that two different names never share a file and no name reaches another folder."""
    text = str(name)
    if (text and len(text) <= MAX_NAME and not _UNSAFE.search(text) and not text.startswith(".")
            and text == text.strip() and not text.endswith(".") and not _DEVICES.fullmatch(text)):
        return text
    reduced = _UNSAFE.sub("_", text).lstrip(". ").rstrip(". ")[:MAX_NAME - 9] or "name"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{reduced}-{digest}"


def is_inside(folder: Path, path: Path) -> bool:
    """Whether ``path`` lies inside ``folder`` once both are resolved (symbolic links and ``..`` followed)."""
    try:
        return Path(folder).resolve() in Path(path).resolve().parents
    except (OSError, RuntimeError, ValueError):  # a link loop; a NUL byte in the name
        return False


def refusal(folder: Path, path: Path) -> str | None:
    """Why ``path`` may not be read as a file of ``folder`` (None when it may): it must be a regular file (not a
    symbolic link, FIFO or device) inside ``folder``."""
    try:
        mode = os.lstat(path).st_mode
    except ValueError:
        return "not a file name (a NUL byte)"
    except OSError as error:
        return "not found" if isinstance(error, FileNotFoundError) else error.strerror or str(error)
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    if not is_inside(folder, path):
        return f"outside {folder}"
    return None


def read_inside(folder: Path, path: Path, limit: int) -> bytes:
    """The bytes of ``path``, a regular file inside ``folder`` (see :func:`refusal`) of at most ``limit`` bytes;
    opened without following a symbolic link or waiting on a FIFO, so a file swapped after the check is refused
    too. Anything else is a DataError naming the file and why."""
    problem = refusal(folder, path)
    if problem is None:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError as error:
            raise DataError(f"{path}: cannot be read ({error.strerror or error})") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                problem = "not a regular file"
            elif info.st_size > limit:
                problem = f"larger than {limit:,} bytes"
            else:
                return handle.read(limit + 1)[:limit]
    raise DataError(f"{path}: {problem}; not read")


def folder_inside(root: Path, relative: Path) -> Path:
    """The folder ``root/relative``, made where missing, each part checked to be a real folder: a part that is a
    symbolic link (or a file) would carry what is written there out of ``root``, so it is refused."""
    folder = Path(root)
    for part in Path(relative).parts:
        if part in ("", ".", "..") or os.sep in part:
            raise PragmeterError(f"{root / relative}: not a folder inside {root}")
        folder = folder / part
        try:
            folder.mkdir()
        except FileExistsError:
            pass
        if folder.is_symlink() or not folder.is_dir():
            raise PragmeterError(f"{folder}: a symbolic link or not a folder; nothing is written through it")
    return folder
