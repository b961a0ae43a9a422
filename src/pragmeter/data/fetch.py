"""Fill a data root with the upstream files of the manifest: ``pragmeter data fetch``.

Each file is downloaded from its pinned URL into ``NAME.part`` beside its place, resumed from there when a run was
interrupted (an HTTP Range request; a server that ignores it sends the whole file again), checked against the
manifest's size and sha256, and only then renamed into place: a file that does not match is deleted and reported,
never kept. A file the manifest lists as prepared from others (``from``) is built from them by the data sets' code
that :data:`BUILDERS` names for it (imported only when the file is prepared, so ``data/`` imports nothing of
``pragmeter.datasets``), and kept only when it equals the pinned file byte for byte. Files already in place and
intact are left alone, so a second run downloads nothing.

A data root may be shared, so what is in it is not trusted: a symbolic link, FIFO or other non-regular file under a
data set's folder (or the folder itself as a link) stops the run in one line naming it before anything is read or
written; files are opened without following links, relative to folders opened the same way, and only the regular
file this run wrote is renamed into place. A download is bounded: it stops with an error at the pinned size plus
one byte, and after ``DEADLINE`` seconds in all (``TIMEOUT`` without a byte); a resume answered for other bytes
than asked (``Content-Range``) is refused, a gzip-encoded answer is decoded (any other encoding refused). One run
at a time fills a data root: a second one refuses at once (the lock ``--output`` uses).

A host that cannot be reached (no network, no name resolution, a refused connection) is tried once: the files it
serves are reported together as UNREACHABLE, not one failure each. The folders a fetch makes and leaves empty are
removed when it ends, so a fetch that got nothing leaves nothing that could pass for a data root.
"""

from __future__ import annotations

import hashlib
import http.client
import importlib
import os
import re
import stat
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from pragmeter.data.check import OK, check_data_root, require_known
from pragmeter.data.root import DATA_ROOT_ENV, candidate_roots, check_paths, manifest
from pragmeter.errors import DataError
from pragmeter.io.atomic import make_folders, promote, remove_made
from pragmeter.io.lock import output_lock
from pragmeter.io.nofollow import PlantedFile, folder_fd, open_nofollow, planted

FETCHED, BUILT, FAILED, UNREACHABLE = "fetched", "built", "failed", "unreachable"
BLOCK = 1 << 16
TIMEOUT = 60  # seconds without a byte before a download counts as failed (it resumes on the next run)
DEADLINE = 30 * 60  # seconds one file's download may take in all (it resumes on the next run)


# Files prepared from others: data-root relative path -> "module:function" returning the file's bytes from a data root.
BUILDERS: dict[str, str] = {"floyd_dev/floyd_dev_battery.json": "pragmeter.datasets.floyd:build_battery"}


def builder(relative: str) -> Callable[[Path], bytes] | None:
    """The function :data:`BUILDERS` names for ``relative``, imported now; None for a file nothing prepares."""
    if relative not in BUILDERS:
        return None
    module, _, function = BUILDERS[relative].partition(":")
    return getattr(importlib.import_module(module), function)


@dataclass(frozen=True)
class Outcome:
    """One manifest file after a fetch: ``status`` OK (was intact), FETCHED, BUILT, FAILED or UNREACHABLE (its host
    could not be reached; ``reason`` says why, naming the host)."""

    relative: str
    status: str
    reason: str = ""


def fetch_root(root: str | os.PathLike | None = None, made: list[Path] | None = None) -> Path:
    """Where ``fetch`` writes: ``root``, else ``$PRAGMETER_DATA``, else the first ``../shared/data`` found, else
    ``../shared/data`` beside the current folder (made), where every command then finds it. The folders made are
    appended to ``made``."""
    chosen = root if root is not None else os.environ.get(DATA_ROOT_ENV)
    if chosen is None:
        chosen = next((path for path in candidate_roots() if path.is_dir()), candidate_roots()[0])
    path = Path(chosen).expanduser()
    if path.exists() and not path.is_dir():
        raise DataError(f"data root {path} is not a folder")
    make_folders(path, [] if made is None else made)
    return path.resolve()


def selected(only: Sequence[str] = ()) -> list[str]:
    """The manifest files of the data sets in ``only`` (all when empty), with every file a prepared one is made from;
    an unknown data set is a DataError naming the known ones."""
    require_known(only)
    check_paths(manifest(), "the manifest")
    chosen = {relative for relative in manifest() if not only or relative.split("/", 1)[0] in only}
    chosen |= {source for relative in chosen for source in manifest()[relative].get("from", ())}
    return sorted(chosen)


def licences(relatives: Sequence[str]) -> list[tuple[str, str, list[str]]]:
    """(data set, licence, upstream repositories at their pinned commits) for the data sets of ``relatives``."""
    found: dict[tuple[str, str], set[str]] = {}
    for relative in relatives:
        entry = manifest()[relative]
        repository, _, commit = entry["source"].partition("@")
        key = (relative.split("/", 1)[0], entry["licence"])
        found.setdefault(key, set()).add(f"github.com/{repository}@{commit[:12]}")
    return [(name, licence, sorted(repositories)) for (name, licence), repositories in sorted(found.items())]


def fetch_data(root: str | os.PathLike | None = None, only: Sequence[str] = (),
               builders: Mapping[str, Callable[[Path], bytes]] | None = None, progress: bool = True,
               ) -> tuple[Path, list[Outcome]]:
    """Download (or resume) every missing or damaged file of the data sets in ``only`` (all when empty) into the
    data root, then prepare the files made from others with the functions :data:`BUILDERS` names (``builders``:
    relative path -> function of the root returning the file's bytes, in their place). Returns the root and one Outcome per file; a failed file does not stop the others,
    a host that cannot be reached is not asked again for its other files. The folders it made and left empty are
    removed (the root too: a fetch that got nothing leaves nothing). A symbolic link or non-regular file under a data
    set's folder is a PlantedFile naming it; another run filling the same root is an OutputBusy
    (pragmeter.io.lock)."""
    relatives = selected(only)
    made: list[Path] = []
    base = fetch_root(root, made)
    holding = False
    try:
        with output_lock(base):
            holding = True
            names = sorted({r.split("/", 1)[0] for r in relatives})
            scan_root(base, names)
            status = {item.relative: item.status for item in check_data_root(base, names)}
            missing = [r for r in relatives if status[r] != OK and "from" not in manifest()[r]]
            outcomes = {r: Outcome(r, OK) for r in relatives if status[r] == OK}
            total = sum(manifest()[r]["size"] for r in missing)
            done = sum(_part(base / r).stat().st_size for r in missing if _part(base / r).is_file())
            unreachable: dict[str, str] = {}  # host -> why it could not be reached
            from tqdm import tqdm

            with tqdm(total=total, initial=min(done, total), unit="B", unit_scale=True, unit_divisor=1024,
                      desc=f"{len(missing)} file(s)", disable=not progress or not missing, leave=False) as bar:
                for relative in missing:
                    host = urlparse(manifest()[relative]["url"]).netloc
                    if host in unreachable:
                        outcomes[relative] = Outcome(relative, UNREACHABLE, unreachable[host])
                        continue
                    bar.set_postfix_str(relative, refresh=False)
                    outcomes[relative] = _download(base, relative, bar.update, made)
                    if outcomes[relative].status == UNREACHABLE:
                        unreachable[host] = outcomes[relative].reason
            for relative in relatives:
                if relative not in outcomes:
                    build = builders[relative] if builders is not None and relative in builders else builder(relative)
                    outcomes[relative] = _prepare(base, relative, build, outcomes)
        return base, [outcomes[r] for r in relatives]
    finally:
        if holding:  # a run that found the root busy leaves alone the folders the run holding it now fills
            remove_made(made)


def scan_root(base: Path, names: Sequence[str]) -> None:
    """A PlantedFile naming the first symbolic link, FIFO, socket or device found in the folders ``names`` of the
    data root ``base`` (or such a folder that is itself a link or a file): nothing of a root holding one is read or
    written, since it may carry a write to someone else's file."""
    for name in names:
        try:
            mode = os.lstat(base / name).st_mode
        except FileNotFoundError:
            continue
        problem = planted(mode, folder=True)
        if problem is not None:
            raise PlantedFile(f"{base / name}: {problem} in the data root; nothing is written through it "
                              "(remove it, or use another data root)")
        for folder, subfolders, files in os.walk(base / name, onerror=_raise):
            for entry in (*subfolders, *files):
                path = Path(folder) / entry
                mode = os.lstat(path).st_mode
                problem = planted(mode, folder=entry in subfolders and stat.S_ISDIR(mode))
                if problem is not None:
                    raise PlantedFile(f"{path}: {problem} in the data root; nothing is written through it "
                                      "(remove it, or use another data root)")


def _raise(error: OSError) -> None:
    raise error


def _part(path: Path) -> Path:
    return path.with_name(path.name + ".part")


class _Refused(Exception):
    """A download that must not be kept: the ``.part`` is removed (its bytes cannot be trusted) and the run reports
    why."""


class _Stopped(Exception):
    """A download that stopped before its end (too slow): what came is kept in the ``.part`` for the next run."""


def _unreachable(error: Exception) -> bool:
    """Whether a download failed before any answer came: the host's name did not resolve, the connection was refused
    or timed out (urllib wraps these in a URLError whose reason is the OSError; an HTTP error answer is not)."""
    return (isinstance(error, urllib.error.URLError) and not isinstance(error, urllib.error.HTTPError)
            and isinstance(error.reason, OSError))


def _download(base: Path, relative: str, advance: Callable[[int], object], made: list[Path]) -> Outcome:
    entry = manifest()[relative]
    url, size = entry["url"], entry["size"]
    folder, name = os.path.split(relative)
    part = name + ".part"
    shown = _part(base / relative)
    absent = [base.joinpath(*Path(folder).parts[:depth]) for depth in range(1, len(Path(folder).parts) + 1)]
    absent = [path for path in absent if not os.path.lexists(path)]
    directory = folder_fd(base, folder)  # makes the missing folders, never through a link
    made.extend(absent)
    try:
        have = _size(directory, part, shown)
        if have > size:  # not a prefix of this file: start again
            os.unlink(part, dir_fd=directory)
            have = 0
        fd = None
        try:
            if have < size:
                fd, have = _receive(url, size, have, directory, part, shown, advance)
            else:
                fd = open_nofollow(part, append=True, read=True, dir_fd=directory, shown=shown)
            written = os.fstat(fd)
            got = written.st_size
            if got < size:  # the connection ended early: what came is kept for the next run
                return Outcome(relative, FAILED, f"download from {url} stopped after {got} of {size} bytes; run "
                                                 "again to resume")
            digest = _sha256(fd)
            if got != size or digest != entry["sha256"]:
                os.unlink(part, dir_fd=directory)
                return Outcome(relative, FAILED, f"checksum mismatch: {url} gave {got} bytes with sha256 "
                                                 f"{digest[:12]}…, the manifest pins {size} bytes with sha256 "
                                                 f"{entry['sha256'][:12]}…; not kept")
            os.fsync(fd)
            _promote_own(directory, part, name, written, shown)
            return Outcome(relative, FETCHED)
        except _Refused as refusal:
            _unlink(directory, part)
            return Outcome(relative, FAILED, f"{refusal}; not kept")
        except _Stopped as stop:
            return Outcome(relative, FAILED, f"{stop}; run again to resume")
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:  # the .part stays to resume
            reason = getattr(error, "reason", None) or error
            if _unreachable(error):
                return Outcome(relative, UNREACHABLE, f"{urlparse(url).netloc} cannot be reached ({reason})")
            return Outcome(relative, FAILED, f"download from {url} failed ({reason}); run again to resume")
        finally:
            if fd is not None:
                os.close(fd)
    finally:
        os.close(directory)


def _size(directory: int, name: str, shown: Path) -> int:
    """The size of the regular file ``name`` in ``directory`` (0 when missing); a PlantedFile when it is not one."""
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return 0
    problem = planted(info.st_mode, info.st_nlink)
    if problem is not None:
        raise PlantedFile(f"{shown}: {problem}; nothing is written through it (remove it if it is yours)")
    return info.st_size


def _unlink(directory: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=directory)
    except FileNotFoundError:
        pass


def _receive(url: str, size: int, have: int, directory: int, part: str, shown: Path,
             advance: Callable[[int], object]) -> tuple[int, int]:
    """Ask ``url`` for the bytes from ``have`` on and append them to ``part`` (emptied first when the answer is the
    whole file): the open descriptor of ``part`` and the bytes resumed. _Refused when the answer is not the file's
    bytes (more than ``size``, a lying Content-Range, an unknown encoding), _Stopped past the deadline."""
    headers = {"Accept-Encoding": "identity", **({"Range": f"bytes={have}-"} if have else {})}
    deadline = time.monotonic() + DEADLINE
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT) as response:
        if response.status == 206:
            claimed = response.headers.get("Content-Range", "")
            found = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", claimed.strip())
            if (found is None or int(found[1]) != have or int(found[2]) != size - 1
                    or found[3] not in ("*", str(size))):
                raise _Refused(f"{url} answered the request for bytes {have}- of {size} with Content-Range "
                               f"{claimed!r}")
        elif response.status == 200:
            if have:  # the whole file again: count what was resumed as undone
                advance(-have)
                have = 0
        else:
            raise _Refused(f"{url} answered HTTP {response.status}, not the file")
        encoding = response.headers.get("Content-Encoding", "").strip().lower() or "identity"
        if encoding not in ("identity", "gzip", "x-gzip") or (encoding != "identity" and response.status == 206):
            raise _Refused(f"{url} sent its bytes with Content-Encoding {encoding!r}, which was not asked for")
        room = size - have
        announced = response.headers.get("Content-Length")
        if encoding == "identity" and announced and announced.strip().isdigit() and int(announced) > room:
            raise _Refused(f"{url} announced {int(announced)} bytes where the manifest pins {size} "
                           f"({room} still to come)")
        fd = open_nofollow(part, append=bool(have), read=True, dir_fd=directory, shown=shown)
        try:
            _copy(response, fd, have, size, advance, deadline, url,
                  zlib.decompressobj(wbits=31) if encoding != "identity" else None)
        except BaseException:
            os.close(fd)
            raise
        return fd, have


def _copy(response, fd: int, have: int, size: int, advance: Callable[[int], object], deadline: float, url: str,
          gzip: zlib._Decompress | None) -> None:
    """Append the response's bytes (decoded when ``gzip``) to ``fd``, which holds ``have`` of the file's ``size``,
    as they come, keeping those that came before a dropped connection; _Refused at the first byte past ``size``,
    _Stopped past ``deadline``."""
    written, room = 0, size - have
    while True:
        if time.monotonic() > deadline:
            raise _Stopped(f"download from {url} took more than {DEADLINE} s (stopped after {written} bytes)")
        ended = False
        try:
            block = response.read1(BLOCK)
        except http.client.IncompleteRead as error:
            block, ended = error.partial, True
        if not block:
            return
        if gzip is not None:
            try:  # decoded no further than one byte past the pin: a small answer cannot fill the disk
                block = gzip.decompress(block, room - written + 1)
            except zlib.error as error:
                raise _Refused(f"{url} sent gzip-encoded bytes that do not decode ({error})") from None
        if written + len(block) > room:
            raise _Refused(f"{url} sent more than the pinned {size} bytes (stopped at {size + 1})")
        _write_all(fd, block)
        written += len(block)
        advance(len(block))
        if ended:
            return


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _sha256(fd: int) -> str:
    digest, offset = hashlib.sha256(), 0
    while block := os.pread(fd, 1 << 20, offset):
        digest.update(block)
        offset += len(block)
    return digest.hexdigest()


def _promote_own(directory: int, part: str, name: str, written: os.stat_result, shown: Path) -> None:
    """Rename ``part`` over ``name`` in ``directory`` only when ``part`` is still the regular file this run wrote
    (``written``: its descriptor's stat), not one swapped in meanwhile."""
    current = os.stat(part, dir_fd=directory, follow_symlinks=False)
    if (current.st_dev, current.st_ino) != (written.st_dev, written.st_ino) or not stat.S_ISREG(current.st_mode):
        raise PlantedFile(f"{shown}: replaced while it was written; nothing is moved into place")
    promote(part, name, dir_fd=directory)


def _prepare(base: Path, relative: str, build: Callable[[Path], bytes] | None,
             outcomes: Mapping[str, Outcome]) -> Outcome:
    entry = manifest()[relative]
    lacking = [source for source in entry["from"] if outcomes[source].status in (FAILED, UNREACHABLE)]
    unreachable = [outcomes[source].reason for source in lacking if outcomes[source].status == UNREACHABLE]
    if unreachable:
        return Outcome(relative, UNREACHABLE, unreachable[0])
    if lacking:
        return Outcome(relative, FAILED, f"not prepared: {', '.join(lacking)} could not be fetched")
    if build is None:
        return Outcome(relative, FAILED, "nothing prepares this file here")
    try:
        content = build(base)
    except DataError as error:
        return Outcome(relative, FAILED, f"not prepared: {error}")
    digest = hashlib.sha256(content).hexdigest()
    if len(content) != entry["size"] or digest != entry["sha256"]:
        return Outcome(relative, FAILED, f"prepared, it has {len(content)} bytes with sha256 {digest[:12]}…, the "
                                         f"manifest pins {entry['size']} bytes with sha256 {entry['sha256'][:12]}…; "
                                         "not kept")
    folder, name = os.path.split(relative)
    shown = _part(base / relative)
    directory = folder_fd(base, folder)
    try:
        fd = open_nofollow(name + ".part", dir_fd=directory, shown=shown)
        try:
            _write_all(fd, content)
            os.fsync(fd)
            _promote_own(directory, name + ".part", name, os.fstat(fd), shown)
        finally:
            os.close(fd)
    finally:
        os.close(directory)
    return Outcome(relative, BUILT)
