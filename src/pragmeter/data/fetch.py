"""Fill a data root with the upstream files of the manifest: ``pragmeter data fetch``.

Each file is downloaded from its pinned URL into ``NAME.part`` beside its place, resumed from there when a run was
interrupted (an HTTP Range request; a server that ignores it sends the whole file again), checked against the
manifest's size and sha256, and only then renamed into place: a file that does not match is deleted and reported,
never kept. A file the manifest lists as prepared from others (``from``) is built from them by the data sets' code
that :data:`BUILDERS` names for it (imported only when the file is prepared, so ``data/`` imports nothing of
``pragmeter.datasets``), and kept only when it equals the pinned file byte for byte. Files already in place and intact are left alone, so a second run downloads nothing.
"""

from __future__ import annotations

import hashlib
import http.client
import importlib
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pragmeter.data.check import OK, check_data_root, require_known
from pragmeter.data.root import DATA_ROOT_ENV, candidate_roots, manifest, sha256_of
from pragmeter.errors import DataError
from pragmeter.io.atomic import promote

FETCHED, BUILT, FAILED = "fetched", "built", "failed"
BLOCK = 1 << 16
TIMEOUT = 60  # seconds without a byte before a download counts as failed (it resumes on the next run)


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
    """One manifest file after a fetch: ``status`` OK (was intact), FETCHED, BUILT or FAILED (``reason`` says why)."""

    relative: str
    status: str
    reason: str = ""


def fetch_root(root: str | os.PathLike | None = None) -> Path:
    """Where ``fetch`` writes: ``root``, else ``$PRAGMETER_DATA``, else the first ``../shared/data`` found, else
    ``../shared/data`` beside the current folder (made), where every command then finds it."""
    chosen = root if root is not None else os.environ.get(DATA_ROOT_ENV)
    if chosen is None:
        chosen = next((path for path in candidate_roots() if path.is_dir()), candidate_roots()[0])
    path = Path(chosen).expanduser()
    if path.exists() and not path.is_dir():
        raise DataError(f"data root {path} is not a folder")
    path.mkdir(parents=True, exist_ok=True)
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
    data root, then prepare the files made from others with the functions :data:`BUILDERS` names (``builders``:
    relative path -> function of the root returning the file's bytes, in their place). Returns the root and one Outcome per file; a failed file does not stop the others."""
    base = fetch_root(root)
    relatives = selected(only)
    status = {item.relative: item.status for item in check_data_root(base, sorted({r.split("/", 1)[0]
                                                                                   for r in relatives}))}
    missing = [r for r in relatives if status[r] != OK and "from" not in manifest()[r]]
    outcomes = {r: Outcome(r, OK) for r in relatives if status[r] == OK}
    total = sum(manifest()[r]["size"] for r in missing)
    done = sum(_part(base / r).stat().st_size for r in missing if _part(base / r).is_file())
    from tqdm import tqdm

    with tqdm(total=total, initial=min(done, total), unit="B", unit_scale=True, unit_divisor=1024,
              desc=f"{len(missing)} file(s)", disable=not progress or not missing, leave=False) as bar:
        for relative in missing:
            bar.set_postfix_str(relative, refresh=False)
            outcomes[relative] = _download(base, relative, bar.update)
    for relative in relatives:
        if relative not in outcomes:
            build = builders[relative] if builders is not None and relative in builders else builder(relative)
            outcomes[relative] = _prepare(base, relative, build, outcomes)
    return base, [outcomes[r] for r in relatives]


def _part(path: Path) -> Path:
    return path.with_name(path.name + ".part")


def _download(base: Path, relative: str, advance: Callable[[int], object]) -> Outcome:
    entry = manifest()[relative]
    target = base / relative
    part = _part(target)
    target.parent.mkdir(parents=True, exist_ok=True)
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
    lacking = [source for source in entry["from"] if outcomes[source].status == FAILED]
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
