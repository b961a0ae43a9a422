"""What pragmeter derives once and keeps in its cache is rebuilt when it is found damaged, never a traceback on
every later run (issue 36, items 11 and 12): a truncated ONNX export, a truncated unpacked all-mpnet-base-v2, an
embedding cache that cannot be written; and a bad PRAGMETER_ONNX_THREADS is one line."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from pragmeter.cli import main
from pragmeter.encoders.paths import cache_dir

TEXTS = ["It is cold in here.", "Close the window."]


def fresh_onnx_encoders():
    from pragmeter.encoders.shared import clear_shared_encoders

    clear_shared_encoders()  # one encoder per process and runtime: drop what earlier tests opened


@pytest.mark.parametrize("value", ["abc", "0", "-2", "1.5"])
def test_a_bad_onnx_thread_count_is_one_line(value, monkeypatch, capsys):
    fresh_onnx_encoders()
    monkeypatch.setenv("PRAGMETER_ONNX_THREADS", value)
    assert main(["score", "--backend", "onnx", *TEXTS]) == 2
    err = capsys.readouterr().err
    assert "PRAGMETER_ONNX_THREADS" in err and repr(value) in err and "Traceback" not in err
    fresh_onnx_encoders()


def test_a_truncated_onnx_export_is_set_aside_and_rebuilt(own_cache, session_cache, monkeypatch, caplog):
    from pragmeter.encoders.shared import load_graph_encoder
    from pragmeter.encoders.onnx import onnx_file
    from pragmeter.encoders.runtime import Runtime

    # The damaged copy is cut from the session's export (exported once, shared with the other ONNX tests) instead of
    # an export of this test's own: exporting takes the time.
    monkeypatch.setenv("PRAGMETER_CACHE", str(session_cache))
    intact = load_graph_encoder("all-MiniLM-L6-v2", Runtime("onnx", "fp32")).encode(TEXTS)  # exported (or found) in the session's cache
    whole = onnx_file("all-MiniLM-L6-v2")
    fresh_onnx_encoders()
    monkeypatch.setenv("PRAGMETER_CACHE", str(own_cache))
    session = onnx_file("all-MiniLM-L6-v2")
    assert session.is_relative_to(own_cache)
    session.parent.mkdir(parents=True)
    session.write_bytes(whole.read_bytes()[:100_000])  # a copy cut short (a full disk, a killed copy)
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        rebuilt = load_graph_encoder("all-MiniLM-L6-v2", Runtime("onnx", "fp32")).encode(TEXTS)
    fresh_onnx_encoders()
    assert np.allclose(rebuilt, intact, atol=1e-6)
    assert list(session.parent.parent.glob(f"{session.parent.name}.corrupt-*"))  # kept for inspection
    assert "set aside" in caplog.text and str(session.name) in caplog.text


def test_a_truncated_unpacked_mpnet_is_set_aside_and_unpacked_again(own_cache, session_cache, monkeypatch, caplog):
    from pragmeter.encoders import resolve_encoder

    # The damaged copy is made from the session's unpacked encoder (unpacked once, shared with the other tests that
    # use all-mpnet-base-v2) instead of an unpack of this test's own: unpacking 420 MB is what takes the time.
    monkeypatch.setenv("PRAGMETER_CACHE", str(session_cache))
    whole = Path(resolve_encoder("all-mpnet-base-v2"))
    monkeypatch.setenv("PRAGMETER_CACHE", str(own_cache))
    folder = cache_dir() / "encoders" / "all-mpnet-base-v2"
    shutil.copytree(whole, folder, ignore=shutil.ignore_patterns("model.safetensors"))
    weights, size = folder / "model.safetensors", (whole / "model.safetensors").stat().st_size
    with open(whole / "model.safetensors", "rb") as handle:
        weights.write_bytes(handle.read(size // 3))  # a copy cut short (a full disk, a killed unpack)
    assert str(weights).startswith(str(own_cache))
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        assert resolve_encoder("all-mpnet-base-v2") == str(folder)
    assert weights.stat().st_size == size
    assert "set aside" in caplog.text
    shutil.rmtree(own_cache / "encoders")  # 420 MB


def test_an_embedding_cache_that_fills_up_says_so(tmp_path, caplog):
    from pragmeter.encoders.embedding_cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path / "embeddings", "test-encoder")
    cache._db.execute("PRAGMA max_page_count = 8")  # a database that cannot grow: as a full disk

    def encode(texts):
        return np.ones((len(texts), 384), dtype=np.float32)

    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        out = cache.get_or_compute([f"text {i}" for i in range(500)], encode)
    assert out.shape == (500, 384)  # the job goes on without the cache
    assert "full" in caplog.text and "cannot rollback" not in caplog.text
    cache.close()
    assert sqlite3.sqlite_version
