"""One writer per output: an advisory lock held for the whole run of a command that writes a folder or file.

Two runs given the same ``--output`` at once would each pass the "exists?" check and then replace each other's
results. A run takes the lock ``.NAME.lock`` beside its output first (``fcntl.flock``, so the kernel drops it
when the process ends, however it ends: a lock left by a killed run never blocks) and holds it to the end; a second
run refuses at once in one line naming the output and the pid of the run that holds it. Refusing, not waiting: a
second run into the same output is almost always a mistake (a copied command line), and waiting hours for a long
training to end would hide it.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pragmeter.errors import PragmeterError

log = logging.getLogger("pragmeter")


class OutputBusy(PragmeterError):
    """Another run holds the output's lock."""


def lock_path(output: str | os.PathLike) -> Path:
    """The lock file of ``output`` (a folder or a file): a hidden sibling, so it survives the output folder being
    replaced (an atomic folder write renames the folder) and never appears inside it."""
    target = Path(os.path.abspath(Path(output).expanduser()))
    return target.with_name(f".{target.name}.lock")


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        text = ""
    return text if text.isdigit() else "unknown"


@contextmanager
def output_lock(output: str | os.PathLike) -> Iterator[Path]:
    """Hold ``output``'s lock for the ``with`` block; OutputBusy (exit 2) when another live process holds it."""
    path = lock_path(output)
    while True:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as error:  # e.g. a writable output folder in a read-only parent: the run is not refused
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
            current = os.stat(path)
            opened = os.fstat(fd)
            if (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino):
                break
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
