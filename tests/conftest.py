"""Shared fixtures: the real data root beside the checkout, and the offline encoder.

Tests that read the upstream data (``needs_data``: every test that takes the ``data_root`` fixture, and those marked
so because only a command they start reads it) run against the data root found as every command finds it
(``$PRAGMETER_DATA``, ``../shared/data``). In a checkout without one they are skipped, with one line at the end naming
``pragmeter data fetch``; so is a test that reaches for the data root while running (the one place the root is
resolved, ``pragmeter.data.root.data_root``), and the data-free tests still run. With a data root nothing is skipped.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import runpy
import sys
from pathlib import Path
from unittest.mock import patch

import pytest

from pragmeter.data import root as data_root_module
from pragmeter.data.root import DATA_ROOT_ENV
from pragmeter.encoders.paths import CACHE_ENV, cache_dir
from pragmeter.errors import DataError
from pragmeter.testing.durations import RECORD_ENV, read_durations, sum_by_file, write_durations

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach the hub
# What the tests build (encoder exports, embeddings, the joined GGUF model) goes to a cache of their own unless
# $PRAGMETER_CACHE names one: never into the user's ~/.cache/pragmeter. Set here, before anything reads the cache, so
# that every process a test starts inherits it.
TEST_CACHE = Path(os.path.expanduser("~")) / ".cache" / "pragmeter-tests"
if not os.environ.get(CACHE_ENV):
    os.environ[CACHE_ENV] = str(TEST_CACHE)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# tools/test.sh runs one pytest-xdist worker per core; a worker whose torch (OpenMP) uses every core spins against the
# other workers (a test runs many times slower beside one busy core). Each worker gets its share of the cores, and the
# processes it starts (CLI runs, llama.cpp) inherit it.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))

CHECKOUT = Path(__file__).resolve().parents[1]

# Each test file's recorded seconds on one worker (pragmeter.testing.durations): the longest files are handed to the
# xdist workers first, so that the workers finish together. tools/test.sh passes --no-loadscope-reorder, as xdist
# otherwise orders files by test count and would leave a file of few long tests (the real model's) to the end.
DURATIONS_FILE = CHECKOUT / "tests" / "durations.json"
DURATIONS = read_durations(DURATIONS_FILE)
# Read once and taken out of the environment: the pytest runs that tests start in subprocesses must not record
# their few files over the suite's record.
RECORDING = os.environ.pop(RECORD_ENV, None) == "1"


def _no_data_root() -> bool:
    """True when no data root is set or found (a $PRAGMETER_DATA that names no folder is an error, not a skip)."""
    if os.environ.get(DATA_ROOT_ENV):
        return False
    try:
        data_root_module.data_root()
    except DataError:
        return True
    return False


NO_DATA = _no_data_root()
NO_DATA_REASON = "needs the upstream data, and no data root was found: get it with `pragmeter data fetch`"


def _skip_without_data_root(resolve):
    @functools.wraps(resolve)  # ``data_root.__wrapped__``: the resolution itself, for tests of its errors
    def data_root(root=None):
        try:
            return resolve(root)
        except DataError:
            if root is None and not os.environ.get(DATA_ROOT_ENV):
                pytest.skip(NO_DATA_REASON)
            raise

    return data_root


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "needs_data: reads the upstream data root (skipped where there is none; given "
                                       "to every test that takes the data_root fixture)")
    if NO_DATA:  # a test that resolves the data root while running is skipped where it would fail
        data_root_module.data_root = _skip_without_data_root(data_root_module.data_root)


REAL_LLM = "qwen2.5-coder-1.5b"  # the packaged model of the real_llm tests (tests/llm/test_real_llm.py)


def real_llm_runs(config) -> bool:
    """The real-model tests are in the run where their model and llama.cpp are installed, or where ``-m`` names their
    marker (then they say what is missing); elsewhere they are deselected, not collected as skips."""
    if "real_llm" in (config.getoption("markexpr", "") or ""):
        return True
    import importlib.util

    from pragmeter.llm.packaged import installed

    return importlib.util.find_spec("xllamacpp") is not None and installed(REAL_LLM)


def pytest_collection_modifyitems(config, items) -> None:
    if not real_llm_runs(config):
        left_out = [item for item in items if item.get_closest_marker("real_llm")]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if not item.get_closest_marker("real_llm")]

    def seconds(item) -> float:
        try:
            return DURATIONS.get(item.path.relative_to(CHECKOUT).as_posix(), 0.0)
        except ValueError:  # a test outside the checkout
            return 0

    for item in items:
        if "data_root" in item.fixturenames:
            item.add_marker(pytest.mark.needs_data)
        if NO_DATA and item.get_closest_marker("needs_data"):
            item.add_marker(pytest.mark.skip(reason=NO_DATA_REASON))
    items.sort(key=lambda item: -seconds(item))  # stable: every file keeps its own order


_REPORTED: list[tuple[str, float]] = []  # (node id, seconds) of every phase, kept when recording


def pytest_runtest_logreport(report) -> None:
    if RECORDING:
        _REPORTED.append((report.nodeid, report.duration))


def pytest_sessionfinish(session) -> None:
    """With $PRAGMETER_RECORD_DURATIONS=1, the controlling process records the seconds of each file that ran into
    tests/durations.json (the files that did not run keep their recorded seconds)."""
    if RECORDING and not hasattr(session.config, "workerinput") and _REPORTED:
        write_durations(DURATIONS_FILE, {**read_durations(DURATIONS_FILE), **sum_by_file(_REPORTED)})


def pytest_terminal_summary(terminalreporter) -> None:
    skipped = [report for report in terminalreporter.stats.get("skipped", []) if NO_DATA_REASON in str(report.longrepr)]
    if skipped:
        terminalreporter.write_line(f"{len(skipped)} tests skipped: they need the upstream data, and no data root was "
                                    "found (get it with `pragmeter data fetch`; docs/data.md)")


# Folders of a pragmeter cache that hold what is derived once from installed weights (ONNX and OpenVINO exports,
# unpacked encoders; keyed by the encoder's content, so sharing them is safe):
# tests that need an empty cache share these with the session's cache, since exporting MiniLM to ONNX takes ~6 s of a
# core each time (it ran once per test before).
SHARED_CACHE_PARTS = ("onnx", "openvino", "encoders")
SESSION_CACHE = cache_dir()  # read before any test changes $PRAGMETER_CACHE


@pytest.fixture(scope="session")
def session_cache() -> Path:
    """The session's cache (``$PRAGMETER_CACHE``, else TEST_CACHE): what is derived from installed weights once and
    shared by the tests (see SHARED_CACHE_PARTS)."""
    return SESSION_CACHE


@pytest.fixture
def private_cache(tmp_path, monkeypatch) -> Path:
    """``$PRAGMETER_CACHE`` set to an empty cache for this test (embeddings, LLM files, everything a job writes),
    whose ONNX exports and unpacked encoders are the session's (``$PRAGMETER_CACHE``, else TEST_CACHE)."""
    folder = tmp_path / "cache"
    folder.mkdir()
    for part in SHARED_CACHE_PARTS:
        (SESSION_CACHE / part).mkdir(parents=True, exist_ok=True)
        (folder / part).symlink_to(SESSION_CACHE / part, target_is_directory=True)
    monkeypatch.setenv("PRAGMETER_CACHE", str(folder))
    return folder


@pytest.fixture
def own_cache(tmp_path, monkeypatch) -> Path:
    """``$PRAGMETER_CACHE`` set to an empty cache of this test's own, sharing no folder with the session's (for
    tests that damage or prune it)."""
    folder = tmp_path / "cache"
    folder.mkdir()
    monkeypatch.setenv("PRAGMETER_CACHE", str(folder))
    return folder


@pytest.fixture(scope="session")
def data_root() -> Path:
    from pragmeter.data.root import data_root as resolve

    return resolve()


@pytest.fixture
def fake_server():
    """Start scripted fake OpenAI-compatible servers on 127.0.0.1 (``start(responder, **options)``); stopped after
    the test."""
    from pragmeter.testing.fake_server import FakeChatServer

    servers = []

    def start(responder, **options) -> FakeChatServer:
        server = FakeChatServer(responder, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def _run_as_main(script: Path, *args) -> str:
    with patch.object(sys, "argv", [str(script), *map(str, args)]), \
            patch.object(sys, "path", [str(Path(script).parent), *sys.path]), \
            contextlib.redirect_stdout(io.StringIO()) as printed:
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as stop:
            assert stop.code in (0, None), f"{script} exited with {stop.code}"
    return printed.getvalue()


@pytest.fixture(scope="session")
def run_as_main():
    """``run_as_main(script, *args)``: what ``python SCRIPT ARGS`` prints, run in this process as ``__main__`` with the
    script's folder first on the path, as Python runs it (a fresh interpreter per script spent seconds importing torch
    and loading the encoder again); a failure raises here."""
    return _run_as_main


# The three host kinds the suite runs on, as OpenVINO's CPU plugin describes them.
# OPTIMIZATION_CAPABILITIES as OpenVINO's CPU plugin reports them: BF16 where its oneDNN may use AVX-512 BF16 (AMX
# hosts have it too), WINOGRAD with AVX-512, FP16 with AVX-512 FP16 (the AMX Xeons). zen4 is what this plugin
# returned on an AMD EPYC (Zen 4); the other two follow the plugin's rule for those CPUs.
HOST_CAPABILITIES = {
    "zen4": frozenset({"BF16", "WINOGRAD", "FP32", "INT8", "BIN", "EXPORT_IMPORT"}),
    "xeon_amx": frozenset({"BF16", "WINOGRAD", "FP32", "FP16", "INT8", "BIN", "EXPORT_IMPORT"}),
    "zen1": frozenset({"FP32", "INT8", "BIN", "EXPORT_IMPORT"}),  # AVX2 only
}


@pytest.fixture
def on_host(monkeypatch):
    """``on_host("zen1")``: from then on this test runs as if on that host kind (no ISA cap set)."""
    import pragmeter.encoders.runtime as runtime

    def become(host: str) -> None:
        monkeypatch.setattr(runtime, "openvino_capabilities", lambda: HOST_CAPABILITIES[host])
        for name in runtime.ISA_ENVS:
            monkeypatch.delenv(name, raising=False)

    return become


@pytest.fixture
def benchmark_script(monkeypatch):
    """``benchmark_script("interpreter_speed")``: that benchmarks/ script as a module, its sibling ``machine``
    importable as the script imports it."""
    import importlib.util

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, CHECKOUT / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    monkeypatch.setitem(sys.modules, "machine", load("machine"))
    return load


# The model, real sentences and loaded backends that the encoder, service and Ray tests compare.
@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> str:
    """The model the suite scores with (the shipped default, a MiniLM model, or $PRAGMETER_IMPSCORE: the backends are
    compared on the same heads), else
    MiniLM with seeded random heads (scores are still a deterministic function of the encoder, which is what these
    tests compare)."""
    from pragmeter.impscore.model import default_model, shipped_models

    if default_model() in shipped_models():
        return default_model()
    import torch

    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("model")
    ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2").save(folder)
    return str(folder)


@pytest.fixture(scope="session")
def posts(data_root: Path) -> list[tuple[str, str]]:
    """(implicit post, its implied statement) pairs from Latent Hatred stage 3, a fixed sample."""
    from pragmeter.datasets.latent_hatred import read_stage

    frame = read_stage(3, data_root, dtype=str, keep_default_na=False, na_values=[""]).dropna(subset=["post", "implied_statement"])
    frame = frame[frame["post"].str.len().between(20, 280)].sample(120, random_state=7)
    return list(zip(frame["post"], frame["implied_statement"]))


@pytest.fixture(scope="session")
def sentences(posts) -> list[str]:
    return [text for pair in posts for text in pair]


@pytest.fixture(scope="session")
def onnx_model(model_dir):
    from pragmeter.impscore.model import ImpScore

    return ImpScore.load(model_dir, backend="onnx")


@pytest.fixture(scope="session")
def torch_model(model_dir):
    from pragmeter.impscore.model import ImpScore

    return ImpScore.load(model_dir, backend="torch")
