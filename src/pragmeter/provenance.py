"""Where a number came from: the one run record every command that writes results puts in its output.

``{"run": {"version", "commit", "date", "machine", "command", "signature"}}``. :func:`read_run_record` also reads
the shapes written before the record existed (``pragmeter_version``/``git_commit`` at the top of results.json,
``pragmeter``/``date`` in generation reports, an ``environment`` object in analysis outputs).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path


def code_commit() -> str | None:
    """Commit of the pragmeter checkout (with "+dirty" when tracked files have changes), or None outside git."""
    folder = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        # Without the optional index lock (git status otherwise rewrites the index): a run beside the user's own git
        # command never makes it fail on index.lock, and a run whose writes fail leaves no stale lock.
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=folder,
                               capture_output=True, text=True, timeout=10,
                               env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


def machine() -> str:
    """e.g. ``Linux x86_64, 2 CPUs, Python 3.11.9`` (what a timing or a float difference may depend on)."""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


@dataclass(frozen=True)
class RunRecord:
    version: str
    commit: str | None
    date: str  # ISO 8601, UTC, seconds
    machine: str
    command: list[str] | None = None
    signature: str | None = None  # the metric/model signature line of what was written, where there is one
    extra: dict = field(default_factory=dict)  # anything a command adds (e.g. the device)

    @classmethod
    def now(cls, signature: str | None = None, command: list[str] | None = None, **extra) -> "RunRecord":
        from pragmeter.version import __version__

        return cls(version=__version__, commit=code_commit(), date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   machine=machine(), command=list(sys.argv) if command is None else command, signature=signature,
                   extra=extra)

    def to_dict(self) -> dict:
        record = asdict(self)
        record.update(record.pop("extra"))
        return record


def write_results_json(path: str | os.PathLike, payload: dict, signature: str | None = None) -> None:
    """A results JSON with its ``run`` record, written atomically: the one writer of commands whose output is a
    single results file (``classifier drinq-nli``, ``impscore evaluate``)."""
    from pragmeter.io.atomic import write_json_atomic

    write_json_atomic(path, {**payload, "run": RunRecord.now(signature).to_dict()})


def read_run_record(payload: dict) -> RunRecord:
    """The run record of a results payload, from the current ``run`` object or an older shape (read until 2027-03-01:
    CHANGELOG.md)."""
    if isinstance(payload.get("run"), dict):
        run = dict(payload["run"])
    else:
        old = payload.get("environment") if isinstance(payload.get("environment"), dict) else payload
        version = old.get("pragmeter_version") or old.get("version")
        if version is None and isinstance(old.get("pragmeter"), str):
            version = old["pragmeter"]
        run = {"version": version, "commit": old.get("git_commit") or old.get("commit"), "date": old.get("date"),
               "machine": old.get("machine"), "command": payload.get("command"), "signature": payload.get("signature")}
    known = {"version", "commit", "date", "machine", "command", "signature"}
    return RunRecord(version=run.get("version") or "unknown", commit=run.get("commit"), date=run.get("date") or "",
                     machine=run.get("machine") or "", command=run.get("command"), signature=run.get("signature"),
                     extra={k: v for k, v in run.items() if k not in known})
