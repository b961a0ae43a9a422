"""One writer per output: an advisory lock held for the whole run of a command that writes a folder or file.

Two runs given the same ``--output`` at once would each pass the "exists?" check and then replace each other's
results. A run takes the lock ``.NAME.lock`` beside its output first (``fcntl.flock``, so the kernel drops it
when the process ends, however it ends: a lock left by a killed run never blocks) and holds it to the end; a second
run refuses at once in one line naming the output and the pid of the run that holds it. Refusing, not waiting: a
second run into the same output is almost always a mistake (a copied command line), and waiting hours for a long
training to end would hide it.

The lock is keyed by the output's resolved path, so ``runs/real`` and a symbolic link ``runs/alias`` to it share one
lock. The lock file's folder may be shared with other people, so what sits at the lock's name is not trusted: it is
opened without following a symbolic link, and a file that is not a regular file holding a pid (our format) is
refused in one line and never written to.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pragmeter.errors import PragmeterError

log = logging.getLogger("pragmeter")

_PID = re.compile(rb"[0-9]{1,20}\n?")  # what a lock file holds: the holder's pid
_MAX_LOCK_BYTES = 21
# O_NOFOLLOW: a symbolic link at the lock's name is refused (ELOOP), not followed to someone's file;
# O_NONBLOCK: a FIFO there does not hang the open (it is refused once open)
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class OutputBusy(PragmeterError):
    """Another run holds the output's lock."""


class NotALock(PragmeterError):
    """What sits at the lock's name is not a lock file this package wrote (a symbolic link, a folder, a FIFO, a file
    with other content); it is left untouched."""


def lock_path(output: str | os.PathLike) -> Path:
    """The lock file of ``output`` (a folder or a file): a hidden sibling, so it survives the output folder being
    replaced (an atomic folder write renames the folder) and never appears inside it."""
    target = Path(os.path.realpath(Path(output).expanduser()))
    return target.with_name(f".{target.name}.lock")


def _refusal(output, path: Path, what: str) -> NotALock:
    return NotALock(f"cannot lock {output}: {path} is {what}, not a pragmeter lock; it was left untouched "
                    "(remove it if it is yours, or give another output)")


def _not_a_lock(output, path: Path, fd: int) -> NotALock | None:
    """Why the open file ``fd`` at ``path`` is not a lock this package wrote (None when it is one): it must be a
    regular file with one link, empty or holding a pid."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return _refusal(output, path, "not a regular file")
    if info.st_nlink != 1:
        return _refusal(output, path, f"a file with {info.st_nlink} hard links")
    content = os.pread(fd, _MAX_LOCK_BYTES + 1, 0)
    if content and not _PID.fullmatch(content):
        return _refusal(output, path, "a file that does not hold a pid")
    return None


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        text = ""
    return text if text.isdigit() else "unknown"


@contextmanager
def output_lock(output: str | os.PathLike) -> Iterator[Path]:
    """Hold ``output``'s lock for the ``with`` block; OutputBusy (exit 2) when another live process holds it,
    NotALock (exit 2) when something else sits at the lock's name."""
    path = lock_path(output)
    while True:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, _OPEN_FLAGS, 0o666)
        except OSError as error:
            if path.is_symlink():  # O_NOFOLLOW refused it (ELOOP)
                raise _refusal(output, path, "a symbolic link") from None
            if error.errno in (errno.EISDIR, errno.ENXIO):  # a folder, a socket
                raise _refusal(output, path, "not a regular file") from None
            # e.g. a writable output folder in a read-only parent: the run is not refused
            log.warning("cannot lock %s (%s: %s); going on without the lock", output, path,
                        error.strerror or error)
            yield path
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise OutputBusy(f"{output} is being written by another pragmeter run (pid {holder}, lock {path}); "
                             "wait for it to end or give another output") from None
        except OSError as error:  # a file system without locks (some network mounts)
            os.close(fd)
            log.warning("cannot lock %s (%s); going on without the lock", output, error.strerror or error)
            yield path
            return
        # The previous holder removes the file as it releases it: a lock taken on a file that is no longer the one
        # at ``path`` locks nothing, so take it again on the current file.
        try:
            current = os.stat(path, follow_symlinks=False)
            opened = os.fstat(fd)
            if (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino):
                refusal = _not_a_lock(output, path, fd)
                if refusal is None:
                    break
                os.close(fd)
                raise refusal
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:  # a full disk: the lock holds without the pid (a second run says "pid unknown")
            pass
        yield path
    finally:
        try:
            os.unlink(path)  # removed while still held, so no other run can lock this file meanwhile
        except OSError:
            pass
        os.close(fd)
