"""The suite in a checkout without a data root: the tests that read upstream data are skipped, with one line naming
``pragmeter data fetch``, and the others run; with a data root nothing is skipped. And the tests keep their caches
out of the user's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pragmeter.data.root import manifest

CHECKOUT = Path(__file__).resolve().parents[2]
MODULE = "tests/data/test_data_root.py"  # five tests with the data_root fixture, four without
READS_WHILE_RUNNING = """from pragmeter.data.root import data_file


def test_reads_the_data_root_without_the_fixture():
    assert data_file("r3_sarcasm/data/human-sarcasm.txt").is_file()
"""
# Tests that read the data root only in a process they start, where the skip of a missing data root cannot reach:
# each carries the needs_data mark, and is run here in a checkout without data (skipped at collection, so quickly).
IN_A_CHILD_PROCESS = ["tests/encoders/test_encoders.py::"
                      "test_openvino_encodes_steps_of_mixed_widths_without_corrupting_memory"]
SUMMARY = "tests skipped: they need the upstream data, and no data root was found (get it with `pragmeter data fetch`"


def _checkout_copy(tmp_path: Path) -> Path:
    """The package, the shared test setup, one test module and one test that reaches the data root only while it runs,
    in a folder with no ../shared/data beside it."""
    copy = tmp_path / "clone"
    shutil.copytree(CHECKOUT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "tests" / "data").mkdir(parents=True)
    (copy / "docs").mkdir()
    for relative in ("pyproject.toml", "tests/conftest.py", MODULE, "docs/data.md"):
        shutil.copy(CHECKOUT / relative, copy / relative)
    (copy / "tests" / "data" / "test_while_running.py").write_text(READS_WHILE_RUNNING, encoding="utf-8")
    return copy


def _pytest(copy: Path, *tests: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("PRAGMETER_DATA", "PYTEST_XDIST_WORKER_COUNT")}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(tests or ["tests"])],
                          cwd=copy,
                          env={**environment, "PYTHONPATH": str(copy / "src"), **env}, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("left", ["nothing", "a failed fetch's empty folders"])
def test_without_a_data_root_the_data_tests_are_skipped_in_one_line_and_the_others_run(tmp_path, left):
    copy = _checkout_copy(tmp_path)
    assert not (copy.parent / "shared").exists()
    if left != "nothing":  # what `pragmeter data fetch` left offline before it cleaned up: no data root either
        for relative in manifest():
            (copy.parent / "shared" / "data" / relative).parent.mkdir(parents=True, exist_ok=True)
    run = _pytest(copy)
    assert run.returncode == 0, run.stdout[-3000:]
    lines = run.stdout.splitlines()
    assert [line for line in lines if "pragmeter data fetch" in line] == [f"6 {SUMMARY}; docs/data.md)"]
    assert lines[-1].startswith("4 passed, 6 skipped")  # missing file, root or empty root; data page


def test_the_tests_that_read_data_in_a_child_process_are_skipped_without_a_data_root(tmp_path):
    copy = _checkout_copy(tmp_path)
    for test in IN_A_CHILD_PROCESS:
        module = test.split("::")[0]
        (copy / module).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(CHECKOUT / module, copy / module)
    run = _pytest(copy, *IN_A_CHILD_PROCESS)
    assert run.returncode == 0, run.stdout[-3000:]
    assert run.stdout.splitlines()[-1].startswith(f"{len(IN_A_CHILD_PROCESS)} skipped"), run.stdout[-3000:]


def test_with_a_data_root_nothing_is_skipped(tmp_path, data_root):
    run = _pytest(_checkout_copy(tmp_path), PRAGMETER_DATA=str(data_root))
    assert run.returncode == 0, run.stdout[-3000:]
    assert run.stdout.splitlines()[-1].startswith("10 passed") and "skipped" not in run.stdout


def test_a_data_root_with_a_file_of_the_users_own_fails_nothing_outside_ci(tmp_path, data_root):
    """The default ../shared/data holding every manifest file (links to the real ones) and one more of the user's."""
    copy = _checkout_copy(tmp_path)
    shared = copy.parent / "shared" / "data"
    for relative in manifest():
        (shared / relative).parent.mkdir(parents=True, exist_ok=True)
        (shared / relative).symlink_to(data_root / relative)
    (shared / "r3_sarcasm" / "my-notes.txt").write_text("mine\n", encoding="utf-8")
    run = _pytest(copy, CI="")
    assert run.returncode == 0, run.stdout[-3000:]
    assert run.stdout.splitlines()[-1].startswith("10 passed") and "skipped" not in run.stdout


def test_the_tests_cache_is_their_own_unless_one_is_set(tmp_path):
    read = "import os, runpy; runpy.run_path('tests/conftest.py'); print(os.environ['PRAGMETER_CACHE'])"
    environment = {k: v for k, v in os.environ.items() if k != "PRAGMETER_CACHE"}
    unset = subprocess.run([sys.executable, "-c", read], cwd=CHECKOUT, capture_output=True, text=True, timeout=300,
                           env={**environment, "HOME": str(tmp_path)})
    assert unset.stdout.strip() == str(tmp_path / ".cache" / "pragmeter-tests"), unset.stderr[-2000:]
    chosen = subprocess.run([sys.executable, "-c", read], cwd=CHECKOUT, capture_output=True, text=True, timeout=300,
                            env={**environment, "PRAGMETER_CACHE": str(tmp_path / "mine")})
    assert chosen.stdout.strip() == str(tmp_path / "mine"), chosen.stderr[-2000:]
