"""Files pragmeter writes in place (an append-only cache, a download's ``.part``, a log) in folders other people may
share (an output folder, a data root): what sits at the name is not trusted.

A symbolic link planted at the name (or on the way to it) would carry the write to someone else's file, a FIFO
would hang the open, and a hard link would let an append reach another name. So every such file is opened here:
without following a link (``O_NOFOLLOW``), without waiting on a FIFO (``O_NONBLOCK``), and kept only when it is a
regular file with one link; anything else is refused in one line naming the path and never written to. Folders on
the way are opened the same way, part by part (:func:`folder_fd`), so that a file can be opened, checked and renamed
relative to a folder that cannot be swapped for a link meanwhile.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePath

from pragmeter.errors import PragmeterError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class PlantedFile(PragmeterError):
    """What sits at a name pragmeter writes (or on the way to it) is a symbolic link, not a regular file or folder,
    or a file with other names (hard links); it is left untouched."""


def _refused(path: str | os.PathLike, what: str) -> PlantedFile:
    return PlantedFile(f"{path}: {what}; nothing is written through it (remove it if it is yours)")


def planted(mode: int, links: int = 1, folder: bool = False) -> str | None:
    """Why an entry of ``mode`` (from ``lstat``) with ``links`` hard links is not one pragmeter writes in place
    (None when it is): a regular file with one link, or with ``folder`` a real folder."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if folder:
        return None if stat.S_ISDIR(mode) else "not a folder"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    if links != 1:
        return f"a file with {links} hard links"
    return None


def open_nofollow(path: str | os.PathLike, append: bool = False, read: bool = False, dir_fd: int | None = None,
                  shown: str | os.PathLike | None = None) -> int:
    """A descriptor of ``path`` open for writing (and reading with ``read``), created when missing (``0o666`` less
    the umask), emptied unless ``append`` (then every write goes to its end). ``path`` is relative to ``dir_fd``
    when one is given; ``shown`` is the name errors give (default ``path``). A symbolic link, FIFO, device, folder
    or hard-linked file at the name is a PlantedFile, and nothing is written to it."""
    shown = path if shown is None else shown
    flags = (os.O_RDWR if read else os.O_WRONLY) | os.O_CREAT | _NOFOLLOW | (os.O_APPEND if append else 0)
    try:
        fd = os.open(path, flags, 0o666, dir_fd=dir_fd)
    except OSError as error:
        try:  # O_NOFOLLOW's ELOOP, a folder's EISDIR, a FIFO's or socket's ENXIO: say what is there
            info = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
            problem = planted(info.st_mode, info.st_nlink)
        except OSError:
            problem = None
        if problem is not None:
            raise _refused(shown, problem) from None
        raise OSError(error.errno, error.strerror or str(error), str(shown)) from None
    info = os.fstat(fd)
    problem = planted(info.st_mode, info.st_nlink)
    if problem is not None:
        os.close(fd)
        raise _refused(shown, problem)
    if not append:  # emptied only now: a file refused above keeps its content
        os.ftruncate(fd, 0)
    return fd


def refuse_planted(*paths: str | os.PathLike) -> None:
    """A PlantedFile naming the first of ``paths`` that is there but is not a regular file with one link: for a file
    a library opens by name and cannot be told not to follow a link (SQLite's database and its journals)."""
    for path in paths:
        try:
            info = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            continue
        problem = planted(info.st_mode, info.st_nlink)
        if problem is not None:
            raise _refused(path, problem)


def folder_fd(root: str | os.PathLike, relative: str | PurePath = ".", make: bool = True) -> int:
    """A descriptor of the folder ``root/relative`` (``os.O_DIRECTORY``; close it), each part of ``relative`` opened
    without following a symbolic link and made where missing (with ``make``): a part that is a link or a file is a
    PlantedFile naming it, so nothing opened relative to the descriptor can land outside ``root``. ``root`` itself is
    the caller's choice and may be reached through links."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(root, flags)
    where = Path(root)
    try:
        for part in PurePath(relative).parts:
            if part in ("", ".", "..") or os.sep in part:
                raise PlantedFile(f"{Path(root) / relative}: not a folder inside {root}")
            where = where / part
            if make:
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                inner = os.open(part, flags | getattr(os, "O_NOFOLLOW", 0), dir_fd=fd)
            except OSError as error:
                try:
                    problem = planted(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode, folder=True)
                except OSError:
                    problem = None
                if problem is not None:
                    raise _refused(where, problem) from None
                raise OSError(error.errno, error.strerror or str(error), str(where)) from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd
