"""Shared fixtures: the real data root beside the checkout, and the offline encoder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach the hub
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# tools/test.sh runs one pytest-xdist worker per core; a worker whose torch (OpenMP) uses every core spins against the
# other workers (measured: a test 10x slower beside one busy core). Each worker gets its share of the cores, and the
# processes it starts (CLI runs, llama.cpp) inherit it.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))
# Tests of the machinery (files, interrupts, services) score with the fast MiniLM model; tests of the shipped default's
# figures name it (pragmeter.impscore.model.DEFAULT_MODEL, all-mpnet-base-v2).
os.environ.setdefault("PRAGMETER_IMPSCORE", "impscore-minilm-paper-conversation")

CHECKOUT = Path(__file__).resolve().parents[1]

# Test files that take ten seconds or more of one worker (seconds measured 2026-11-25 from an empty cache,
# docs/results.md): handed to the xdist workers first, longest first, so that both finish together. tools/test.sh
# passes --no-loadscope-reorder, as xdist otherwise orders files by test count and left the 87 s real-model file
# (two tests) to the end of one worker.
HEAVY_FILES = {"tests/llm/test_real_llm.py": 87, "tests/adversarial/test_interrupts.py": 73,
               "tests/analysis/test_validity.py": 43, "tests/serving/test_ray_engine.py": 40,
               "tests/classify/test_classify_models.py": 36, "tests/impscore/test_model.py": 36,
               "tests/impscore/test_training.py": 20, "tests/eval/test_eval_end_to_end.py": 18,
               "tests/impscore/test_corpus.py": 18, "tests/llm/test_gguf_backend.py": 14,
               "tests/serving/test_serve_isolation.py": 14, "tests/adversarial/test_table_readers.py": 13,
               "tests/impscore/test_ood_dev_sets.py": 12, "tests/impscore/test_embedding_cache.py": 12}


def pytest_collection_modifyitems(config, items) -> None:
    def seconds(item) -> int:
        try:
            return HEAVY_FILES.get(item.path.relative_to(CHECKOUT).as_posix(), 0)
        except ValueError:  # a test outside the checkout
            return 0

    items.sort(key=lambda item: -seconds(item))  # stable: every file keeps its own order


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
