"""Atomic writes: write to a temporary file beside the target, then rename, so readers never see half a file."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
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


@contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; on success it replaces ``target``."""
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
        os.replace(tmp_path, target)
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


def write_json_atomic(target: str | os.PathLike, payload: object) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def replace_folder(folder: Path, write) -> Path:
    """Build a folder atomically: ``write(staging)`` fills a sibling staging folder, which then replaces ``folder``
    (an old one is moved aside first and removed after), so a reader never sees a half-written folder."""
    import shutil

    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    with naming(folder):
        write(staging)
    _normal_permissions(staging)
    if folder.exists():
        old = folder.with_name(f".{folder.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        folder.rename(old)
        staging.rename(folder)
        shutil.rmtree(old, ignore_errors=True)
    else:
        staging.rename(folder)
    return folder


def _normal_permissions(folder: Path) -> None:
    """Give every file the user's umask: libraries that write through a private temporary file (safetensors,
    transformers' save_pretrained) leave 0600, which other users of a shared model folder cannot read."""
    mode = 0o666 & ~current_umask()
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            os.chmod(path, mode)
