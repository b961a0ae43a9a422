"""Fill a data root with the upstream files of the manifest: ``pragmeter data fetch``.

Each file is downloaded from its pinned URL into ``NAME.part`` beside its place, resumed from there when a run was
interrupted (an HTTP Range request; a server that ignores it sends the whole file again), checked against the
manifest's size and sha256, and only then renamed into place: a file that does not match is deleted and reported,
never kept. A file the manifest lists as prepared from others (``from``) is built from them by the function given
for it in ``builders`` (the data sets' code: ``pragmeter.datasets``), and kept only when it equals the pinned file
byte for byte. Files already in place and intact are left alone, so a second run downloads nothing.

A host that cannot be reached (no network, no name resolution, a refused connection) is tried once: the files it
serves are reported together as UNREACHABLE, not one failure each. The folders a fetch makes and leaves empty are
removed when it ends, so a fetch that got nothing leaves nothing that could pass for a data root.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from pragmeter.data.check import OK, check_data_root, require_known
from pragmeter.data.root import DATA_ROOT_ENV, candidate_roots, manifest, sha256_of
from pragmeter.errors import DataError
from pragmeter.io.atomic import make_folders, promote, remove_made

FETCHED, BUILT, FAILED, UNREACHABLE = "fetched", "built", "failed", "unreachable"
BLOCK = 1 << 16
TIMEOUT = 60  # seconds without a byte before a download counts as failed (it resumes on the next run)


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
    data root, then prepare the files made from others with ``builders`` (relative path -> function of the root
    returning the file's bytes). Returns the root and one Outcome per file; a failed file does not stop the others,
    a host that cannot be reached is not asked again for its other files. The folders it made and left empty are
    removed (the root too: a fetch that got nothing leaves nothing)."""
    relatives = selected(only)
    made: list[Path] = []
    base = fetch_root(root, made)
    try:
        status = {item.relative: item.status for item in check_data_root(base, sorted({r.split("/", 1)[0]
                                                                                       for r in relatives}))}
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
                outcomes[relative] = _prepare(base, relative, (builders or {}).get(relative), outcomes)
        return base, [outcomes[r] for r in relatives]
    finally:
        remove_made(made)


def _part(path: Path) -> Path:
    return path.with_name(path.name + ".part")


def _unreachable(error: Exception) -> bool:
    """Whether a download failed before any answer came: the host's name did not resolve, the connection was refused
    or timed out (urllib wraps these in a URLError whose reason is the OSError; an HTTP error answer is not)."""
    return (isinstance(error, urllib.error.URLError) and not isinstance(error, urllib.error.HTTPError)
            and isinstance(error.reason, OSError))


def _download(base: Path, relative: str, advance: Callable[[int], object], made: list[Path]) -> Outcome:
    entry = manifest()[relative]
    target = base / relative
    part = _part(target)
    make_folders(target.parent, made)
    have = part.stat().st_size if part.is_file() else 0
    if have > entry["size"]:  # not a prefix of this file: start again
        part.unlink()
        have = 0
    try:
        if have < entry["size"]:
            request = urllib.request.Request(entry["url"], headers={"Range": f"bytes={have}-"} if have else {})
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                if have and response.status != 206:  # the whole file again: count what was resumed as undone
                    advance(-have)
                    have = 0
                with open(part, "ab" if have else "wb") as handle:
                    _copy(response, handle, advance)
    except (urllib.error.URLError, http.client.HTTPException, OSError) as error:  # the .part stays for a resume
        reason = getattr(error, "reason", None) or error
        if _unreachable(error):
            return Outcome(relative, UNREACHABLE, f"{urlparse(entry['url']).netloc} cannot be reached ({reason})")
        return Outcome(relative, FAILED, f"download from {entry['url']} failed ({reason}); run again to resume")
    size = part.stat().st_size
    if size < entry["size"]:  # the connection ended early: what came is kept for the next run
        return Outcome(relative, FAILED, f"download from {entry['url']} stopped after {size} of {entry['size']} "
                                         "bytes; run again to resume")
    digest = sha256_of(part)
    if size != entry["size"] or digest != entry["sha256"]:
        part.unlink()
        return Outcome(relative, FAILED, f"checksum mismatch: {entry['url']} gave {size} bytes with sha256 "
                                         f"{digest[:12]}…, the manifest pins {entry['size']} bytes with sha256 "
                                         f"{entry['sha256'][:12]}…; not kept")
    promote(part, target)
    return Outcome(relative, FETCHED)


def _copy(response, handle, advance: Callable[[int], object]) -> None:
    """Append the response's bytes to ``handle`` as they come, keeping those that came before a dropped connection."""
    while True:
        try:
            block = response.read(BLOCK)
        except http.client.IncompleteRead as error:
            handle.write(error.partial)
            advance(len(error.partial))
            return
        if not block:
            return
        handle.write(block)
        advance(len(block))


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
    from pragmeter.io.atomic import atomic_path

    with atomic_path(base / relative) as tmp:
        tmp.write_bytes(content)
    return Outcome(relative, BUILT)
