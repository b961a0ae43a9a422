"""Where a number came from: the code commit recorded in results files and model cards."""

from __future__ import annotations

import subprocess
from pathlib import Path


def code_commit() -> str | None:
    """Commit of the pragmeter checkout (with "+dirty" when tracked files have changes), or None outside git."""
    folder = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=folder,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")
