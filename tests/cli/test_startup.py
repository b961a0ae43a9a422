"""Start-up: scoring on the default path (OpenVINO) and on the ONNX path imports neither torch, transformers,
sentence-transformers nor scikit-learn, prints no third-party progress bar, and gives the torch path's scores; so does
ImpScore.load() in Python; --help and --version import no pandas."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
HEAVY = ("torch", "transformers", "sentence_transformers", "sklearn", "pandas", "scipy")
PROBE = """
import sys
from pragmeter.cli import main
code = main(sys.argv[1:])
print("HEAVY", sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)
sys.exit(code)
"""


def _run(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv], env=env, capture_output=True,
                          text=True, timeout=600)


def test_default_scoring_imports_no_torch():
    _run("score", "It is cold in here.")  # may convert the encoder once (a child process, which uses torch)
    run = _run("score", "It is cold in here.")
    assert run.returncode == 0, run.stderr
    assert "HEAVY []" in run.stderr and "it/s" not in run.stderr and "preparing encoder" not in run.stderr
    assert 0 <= float(run.stdout.split("\t")[0]) <= 2


def test_impscore_load_in_python_takes_the_fast_path():
    code = ("import sys\nfrom pragmeter import ImpScore\nmodel = ImpScore.load()\nmodel.score(['It is cold in here.'])\n"
            f"print(model.backend, model.precision, sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    run = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC}, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    backend, precision, heavy = run.stdout.strip().split(" ", 2)
    assert backend == "openvino" and precision in ("fp32", "bf16") and heavy == "[]"


def test_onnx_scoring_imports_no_torch_and_matches_torch():
    first = _run("score", "--backend", "onnx", "It is cold in here.")  # may export the graph once (uses torch)
    assert first.returncode == 0, first.stderr
    run = _run("score", "--backend", "onnx", "It is cold in here.")
    assert run.returncode == 0, run.stderr
    assert "HEAVY []" in run.stderr and "Loading weights" not in run.stderr and "it/s" not in run.stderr
    torch_run = _run("score", "--backend", "torch", "It is cold in here.")
    assert torch_run.returncode == 0 and "Loading weights" not in torch_run.stderr
    onnx_score, torch_score = (float(r.stdout.split("\t")[0]) for r in (run, torch_run))
    assert abs(onnx_score - torch_score) < 1e-3  # printed to 4 decimals


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["score", "--help"]])
def test_help_and_version_import_nothing_heavy(argv):
    env = {**os.environ, "PYTHONPATH": SRC}
    code = f"import sys, runpy\nsys.argv = ['pragmeter', *{argv!r}]\ntry:\n    runpy.run_module('pragmeter', run_name='__main__')\nexcept SystemExit:\n    pass\nprint('HEAVY', sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert "HEAVY []" in run.stderr, run.stderr
