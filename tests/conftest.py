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
