"""Atomic writes: every file and folder pragmeter writes, and every damaged one it sets aside, goes through here.

A file is written to a uniquely named temporary file beside its target, flushed to disk (``fsync``), then renamed
over the target, and the folder's entry is flushed too: a reader sees the old file or the new one, whole, and a
crash or power loss never leaves a half-written file under the target's name. A folder is built the same way in a
uniquely named staging folder beside it. A folder derived from other files (a cache: an unpacked or fine-tuned
encoder, an OpenVINO export) may be wanted by several processes at once: :func:`build_folder` lets one build it
under a lock while the others wait and then use the folder it built.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def current_umask() -> int:
    """The process umask, read without changing it where the system allows (setting it races other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def _fsync(path: Path, directory: bool = False) -> None:
    """Flush a file's data, or a folder's entries, to disk. A file system that cannot (some network mounts refuse
    it for folders) is not an error: the rename is still atomic there."""
    try:
        fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; when the block ends without error, the file written there is
    flushed to disk and replaces ``target`` (the folder's entry flushed too). On error nothing of it is left."""
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:  # named after the output, not the hidden temporary file or a parent folder
        raise OSError(error.errno, error.strerror or str(error), str(target)) from error
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        with naming(target):
            yield tmp_path
            os.chmod(tmp_path, 0o666 & ~current_umask())  # mkstemp creates 0600; give the file normal permissions
            _fsync(tmp_path)
            os.replace(tmp_path, target)
        _fsync(target.parent, directory=True)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def naming(target: Path) -> Iterator[None]:
    """An OSError without a file name (a write that found the disk full: ENOSPC, EFBIG, EDQUOT), or a library's
    error that wraps one ("… (os error 28)"), becomes an OSError naming ``target``, so the one-line error says which
    output could not be written."""
    try:
        yield
    except OSError as error:
        if error.filename is not None or error.errno is None:
            raise
        raise OSError(error.errno, error.strerror or str(error), str(target)) from error
    except Exception as error:  # noqa: BLE001 - Rust libraries (safetensors) raise their own type for an OSError
        found = re.search(r"\(os error (\d+)\)", str(error))
        if found is None:
            raise
        number = int(found.group(1))
        raise OSError(number, os.strerror(number), str(target)) from error


def promote(finished: str | os.PathLike, target: str | os.PathLike, dir_fd: int | None = None) -> None:
    """Put a file finished under another name beside ``target`` (a download's resumable ``.part``) in its place in
    one step: the file synced, renamed over ``target``, then its folder synced, as :func:`atomic_path` does. With
    ``dir_fd`` both names are relative to that open folder (see :func:`pragmeter.io.nofollow.folder_fd`), and the
    caller has synced the file."""
    if dir_fd is not None:
        os.replace(finished, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        try:
            os.fsync(dir_fd)
        except OSError:  # a file system that cannot flush a folder: the rename is still atomic there
            pass
        return
    finished, target = Path(finished), Path(target)
    _fsync(finished)
    os.replace(finished, target)
    _fsync(target.parent, directory=True)


def write_json_atomic(target: str | os.PathLike, payload: object) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


@contextmanager
def staged_folder(folder: str | os.PathLike) -> Iterator[Path]:
    """Yield a new, empty staging folder beside ``folder`` (``.NAME.<random>``, the umask's permissions); when the
    block ends without error its files are flushed to disk and it replaces ``folder`` in one step where the system
    can swap two folders (else the old one is moved aside first), so a reader never sees a half-written folder. The
    staging folder is removed however the block ends, a Ctrl-C included."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    # Named before it is made and made inside the try: a Ctrl-C landing just after the folder appears still
    # removes it.
    staging: Path | None = folder.with_name(f".{folder.name}.{secrets.token_hex(8)}")
    try:
        try:
            os.mkdir(staging)
        except FileExistsError:  # another writer's (a name drawn twice): not ours to remove
            staging = None
            raise
        with naming(folder):
            yield staging
            _normal_permissions(staging)
            _swap_in(staging, folder)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def replace_folder(folder: str | os.PathLike, write: Callable[[Path], object]) -> Path:
    """Build ``folder`` atomically: ``write(staging)`` fills a staging folder beside it, which then replaces it
    (:func:`staged_folder`)."""
    folder = Path(folder)
    with staged_folder(folder) as staging:
        write(staging)
    return folder


def build_folder(folder: str | os.PathLike, write: Callable[[Path], object], ready: Callable[[Path], bool]) -> Path:
    """A folder derived from other files, built once however many processes want it at once: ``ready(folder)`` says
    whether it is there and whole; if not, one process builds it (``write(staging)``, as :func:`replace_folder`)
    while holding a lock beside it (``.NAME.build.lock``), and every other one waits for that lock and then uses the
    folder built, checked by ``ready`` again. A folder that is there but not ready (damaged) is replaced."""
    folder = Path(folder)
    if ready(folder):
        return folder
    with _build_lock(folder):
        if ready(folder):  # built by the process that held the lock while this one waited
            return folder
        replace_folder(folder, write)
    return folder


@contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """Wait for and hold the build lock of ``folder``: ``fcntl.flock`` (dropped by the kernel when a process ends,
    however it ends), on a hidden file beside it that is opened without following a link and left in place (a
    process that removed it could let a third one lock a new file while the second still holds the old)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    path = folder.with_name(f".{folder.name}.build.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666 & ~current_umask())
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as error:  # a file system without locks: unique staging still keeps each folder whole
            if error.errno not in (errno.ENOLCK, errno.EOPNOTSUPP):
                raise
        yield
    finally:
        os.close(fd)  # releases the lock


def set_aside(path: str | os.PathLike, remove: bool = False) -> Path | None:
    """Move a damaged file or folder out of the way, to ``NAME.corrupt-<time>-<random>`` beside it (kept for
    inspection, or removed with ``remove``), so it can be built again. The new name; None when ``path`` is gone
    already (another process set it aside first)."""
    path = Path(path)
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return None
    _fsync(path.parent, directory=True)
    if remove:
        _remove(aside)
    return aside


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


_RENAME_EXCHANGE, _AT_FDCWD = 2, -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0


def _swap_in(staging: Path, folder: Path) -> None:
    """Put the whole, flushed ``staging`` at ``folder``'s name; the folder it replaces is removed."""
    for path in staging.rglob("*"):
        if path.is_file() and not path.is_symlink():
            _fsync(path)
    _fsync(staging, directory=True)
    if folder.is_dir() and not folder.is_symlink() and _exchange(staging, folder):
        pass  # ``staging`` now holds the old folder: removed by staged_folder
    elif folder.exists() or folder.is_symlink():
        old = folder.with_name(f".{folder.name}.old-{secrets.token_hex(8)}")
        os.rename(folder, old)
        try:
            os.rename(staging, folder)
        except BaseException:
            os.rename(old, folder)  # the old folder stays where it was
            raise
        _remove(old)
    else:
        os.rename(staging, folder)
    _fsync(folder.parent, directory=True)


def _normal_permissions(folder: Path) -> None:
    """Give every file the user's umask: libraries that write through a private temporary file (safetensors,
    transformers' save_pretrained) leave 0600, which other users of a shared model folder cannot read."""
    mode = 0o666 & ~current_umask()
    for path in folder.rglob("*"):
        # only where it differs: a chmod moves the file's ctime, which file-hash memos key on
        if path.is_file() and not path.is_symlink() and path.stat().st_mode & 0o777 != mode:
            os.chmod(path, mode)


def make_folders(folder: str | os.PathLike, made: list[Path]) -> None:
    """``mkdir -p folder``, appending each folder it made (outermost first) to ``made``: what :func:`remove_made`
    takes away again when the work that needed them got nothing."""
    absent = []
    path = Path(folder).absolute()
    while not path.exists() and path != path.parent:
        absent.append(path)
        path = path.parent
    Path(folder).mkdir(parents=True, exist_ok=True)
    made.extend(reversed(absent))


def remove_made(made: list[Path]) -> None:
    """Remove the folders of ``made`` (all made by this process) that hold nothing: no file but empty ones (a cache
    opened and never written), in folders that hold nothing either; deepest first. A folder with any byte written
    in it, or a link, stays whole."""
    for folder in sorted(made, key=lambda path: len(path.parts), reverse=True):
        try:
            if not _holds_nothing(folder):
                continue
            for parent, folders, files in os.walk(folder, topdown=False):
                for name in files:
                    os.unlink(os.path.join(parent, name))
                for name in folders:
                    os.rmdir(os.path.join(parent, name))
            folder.rmdir()
        except OSError:  # gone, not readable, or written meanwhile: left as it is
            continue


def _holds_nothing(folder: Path) -> bool:
    for entry in folder.iterdir():
        if entry.is_symlink() or not (entry.is_dir() and _holds_nothing(entry)
                                      or entry.is_file() and entry.stat().st_size == 0):
            return False
    return True
