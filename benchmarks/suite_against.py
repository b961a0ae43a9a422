"""The test suite of another checkout and of this one, side by side in one run, each as the README's test command runs
it (pytest-xdist, one worker per core and one more, each file on one worker): the other checkout's whole suite, this
checkout's tests that the other one has too, and this checkout's whole suite. Whether the tests that were there got
slower (the second figure against the first), apart from what the new tests cost (the third).

    git worktree add /tmp/before b762a4b
    python benchmarks/suite_against.py --against /tmp/before

A test of the other checkout is matched by its id, or by its name (``test_x[param]``) where exactly one test of this
checkout has it (a file moved); the ones without a match are counted and named. Both suites read this checkout's data
root (``$PRAGMETER_DATA`` set for both). ``--pytest-args`` narrows all three runs (e.g. ``tests/metrics``). Prints one
JSON document: seconds, the counts pytest printed and the machine state (``machine.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from machine import MachineWatch

THIS_CHECKOUT = Path(__file__).resolve().parents[1]
# A pytest plugin (written to a temporary folder on the workers' path): keeps the tests named in $SUITE_SELECTION.
SELECTION_PLUGIN = '''import os

def pytest_collection_modifyitems(config, items):
    keep = set(open(os.environ["SUITE_SELECTION"], encoding="utf-8").read().splitlines())
    config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in keep])
    items[:] = [item for item in items if item.nodeid in keep]
'''


def environment(checkout: Path, extra_path: str = "") -> dict:
    from pragmeter.data.root import DATA_ROOT_ENV, data_root

    path = os.pathsep.join(p for p in (str(checkout / "src"), extra_path) if p)
    return {**os.environ, "PYTHONPATH": path, DATA_ROOT_ENV: str(data_root())}


def collect(checkout: Path, pytest_args: list[str]) -> list[str]:
    """The test ids of ``checkout``'s suite (pytest --collect-only)."""
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          *pytest_args], cwd=checkout, env=environment(checkout), capture_output=True, text=True)
    ids = [line.strip() for line in run.stdout.splitlines() if "::" in line]
    if run.returncode or not ids:
        raise SystemExit(f"{checkout}: pytest --collect-only exited {run.returncode}: {run.stdout[-1000:]}")
    return ids


def matched(theirs: list[str], ours: list[str]) -> tuple[list[str], list[str]]:
    """(our ids of their tests, their ids without a match)."""
    by_name = defaultdict(list)
    for test in ours:
        by_name[test.split("::", 1)[1]].append(test)
    found, missing, ours_set = [], [], set(ours)
    for test in theirs:
        same_name = by_name[test.split("::", 1)[1]]
        if test in ours_set:
            found.append(test)
        elif len(same_name) == 1:
            found.append(same_name[0])
        else:
            missing.append(test)
    return found, missing


def run_suite(checkout: Path, pytest_args: list[str], workers: int, selection: Path | None = None) -> dict:
    """The suite of ``checkout`` (or the tests in ``selection``): wall seconds and pytest's last line."""
    with tempfile.TemporaryDirectory() as plugin_dir:
        args, extra = [], ""
        if selection is not None:
            (Path(plugin_dir) / "suite_selection.py").write_text(SELECTION_PLUGIN, encoding="utf-8")
            args, extra = ["-p", "suite_selection"], plugin_dir
        env = {**environment(checkout, extra), **({"SUITE_SELECTION": str(selection)} if selection else {})}
        command = [sys.executable, "-m", "pytest", "-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder",
                   "-q", "-p", "no:cacheprovider", *args, *pytest_args]
        started = time.perf_counter()
        run = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - started
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    return {"checkout": str(checkout), "seconds": round(seconds, 1), "exit": run.returncode,
            "pytest": lines[-1].strip("= ") if lines else ""}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, type=Path, help="the other checkout (a git worktree)")
    parser.add_argument("--pytest-args", default="", help="passed to every pytest run, e.g. a folder of tests")
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)) + 1)
    args = parser.parse_args(argv)
    pytest_args = shlex.split(args.pytest_args)
    # watched from the start: the load before is the machine's, not that of the collection runs
    with tempfile.TemporaryDirectory() as work, MachineWatch() as watch:
        theirs, ours = collect(args.against, pytest_args), collect(THIS_CHECKOUT, pytest_args)
        common, missing = matched(theirs, ours)
        report = {"tests": {"theirs": len(theirs), "ours": len(ours), "ours_of_theirs": len(common),
                            "theirs_without_a_match": missing}}
        selection = Path(work) / "selection.txt"
        selection.write_text("\n".join(common) + "\n", encoding="utf-8")
        report["theirs"] = run_suite(args.against, pytest_args, args.workers)
        report["ours_of_theirs"] = run_suite(THIS_CHECKOUT, pytest_args, args.workers, selection)
        report["ours"] = run_suite(THIS_CHECKOUT, pytest_args, args.workers)
    report["machine"] = watch.record
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
