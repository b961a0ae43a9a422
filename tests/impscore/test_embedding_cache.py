"""The embedding cache is a real store: reuse across jobs, memory flat in the cache's size, survival of a corrupt
or truncated database and a read-only cache folder."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pragmeter.encoders.embedding_cache import DB_FILE, EmbeddingCache, text_key

SRC = str(Path(__file__).resolve().parents[2] / "src")
DIM = 384


class Encoder:
    """A deterministic stand-in for the sentence encoder that counts the texts it is asked for (the cache is under
    test here, not the encoder; the CLI test below uses the real one)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls += len(texts)
        return np.stack([np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(DIM, dtype=np.float32)
                         for t in texts])


TEXTS = [f"sentence number {i}" for i in range(50)]


def test_reuse_across_instances_and_duplicates(tmp_path):
    encoder = Encoder()
    first = EmbeddingCache(tmp_path, "enc/a").get_or_compute(TEXTS + TEXTS[:5], encoder, chunk_size=16)
    assert encoder.calls == 50 and first.shape == (55, DIM)
    again = EmbeddingCache(tmp_path, "enc/a")
    assert len(again) == 50 and TEXTS[3] in again and "unseen" not in again
    second = again.get_or_compute(TEXTS[::-1], encoder)
    assert encoder.calls == 50  # nothing recomputed
    assert np.array_equal(second, first[:50][::-1])
    assert (tmp_path / "enc_a" / DB_FILE).is_file()


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_database_is_set_aside_and_rebuilt(tmp_path, caplog, damage):
    encoder = Encoder()
    EmbeddingCache(tmp_path, "enc").get_or_compute([f"text {i}" for i in range(3000)], encoder).copy()
    path = tmp_path / "enc" / DB_FILE
    for suffix in ("-wal", "-shm"):  # a closed process leaves a checkpointed file; be sure of it
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    data = path.read_bytes()
    path.write_bytes(b"this is not sqlite" * 100 if damage == "garbage" else data[: len(data) // 3])
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        cache = EmbeddingCache(tmp_path, "enc")
        result = cache.get_or_compute(TEXTS, encoder)
        result = cache.get_or_compute([f"text {i}" for i in range(3000)], encoder)
    assert result.shape == (3000, DIM)
    assert np.array_equal(result[:2], encoder([f"text {i}" for i in range(2)]))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "corrupt" in warnings[0] and "rebuilt" in warnings[0]
    assert list((tmp_path / "enc").glob(f"{DB_FILE}.corrupt-*"))
    before = encoder.calls
    assert EmbeddingCache(tmp_path, "enc").get_or_compute(TEXTS, encoder).shape == (50, DIM)
    assert encoder.calls == before  # the rebuilt cache works


def test_full_disk_lets_the_job_finish(tmp_path, caplog):
    """SQLite's page limit gives the very error a full disk gives ('database or disk is full')."""
    encoder = Encoder()
    cache = EmbeddingCache(tmp_path, "enc")
    cache._db.execute("PRAGMA max_page_count=8")
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        result = cache.get_or_compute(TEXTS * 2 + [f"more {i}" for i in range(500)], encoder, chunk_size=100)
    assert result.shape == (600, DIM) and encoder.calls == 550
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "cannot be written" in warnings[0] and "full" in warnings[0]


def test_cache_root_that_is_a_file_is_warned_about(tmp_path, caplog):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        result = EmbeddingCache(blocker, "enc").get_or_compute(TEXTS, Encoder())
    assert result.shape == (50, DIM) and "going on without the cache" in caplog.text


_RSS_CHILD = textwrap.dedent("""
    import resource, sys, numpy as np
    from pragmeter.encoders.embedding_cache import EmbeddingCache
    cache = EmbeddingCache(sys.argv[1], "enc")
    cache.get_or_compute(["It is cold in here.", "Close the window."],
                         lambda texts: np.ones((len(texts), 384), dtype=np.float32))
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def _peak_rss_kib(root: Path) -> int:
    env = {**os.environ, "PYTHONPATH": SRC}
    out = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(root)], env=env, capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip())


def test_memory_does_not_grow_with_the_cache(tmp_path):
    """Scoring two texts against 50,000 cached embeddings (75 MB of vectors) costs the same memory as against
    an empty cache (the old shard cache loaded all of them)."""
    empty, full = tmp_path / "empty", tmp_path / "full"
    cache = EmbeddingCache(full, "enc")
    rng = np.random.default_rng(0)
    for start in range(0, 50_000, 10_000):
        keys = [text_key(f"cached text {i}") for i in range(start, start + 10_000)]
        cache._store(keys, rng.standard_normal((10_000, DIM), dtype=np.float32))
    assert len(cache) == 50_000
    cache.close()
    growth_mib = (_peak_rss_kib(full) - _peak_rss_kib(empty)) / 1024
    assert growth_mib < 15, f"peak RSS grew by {growth_mib:.0f} MiB with 50k cached embeddings"


@pytest.mark.skipif(not shutil.which("setpriv") and os.geteuid() == 0, reason="root ignores file modes")
def test_score_file_with_read_only_cache_folder(tmp_path, private_cache):
    """The real command: a read-only cache folder is warned about once; every row is still scored."""
    cache_root = private_cache
    (cache_root / "embeddings").mkdir(parents=True)
    source = tmp_path / "in.csv"
    source.write_text("text\nIt is cold in here.\nClose the window.\n")
    env = {**os.environ, "PYTHONPATH": SRC, "PRAGMETER_CACHE": str(cache_root)}
    command = [sys.executable, "-m", "pragmeter", "score", "--input", str(source),
               "--output", str(tmp_path / "out.csv")]
    (cache_root / "embeddings").chmod(0o555)
    if os.geteuid() == 0:  # root writes anywhere: drop the capability that lets it
        command = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps=-all", *command]
    try:
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    finally:
        (cache_root / "embeddings").chmod(0o755)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and run.stderr.count("embedding cache") == 1
    assert "going on without the cache" in run.stderr
    import pandas as pd

    out = pd.read_csv(tmp_path / "out.csv")
    assert out["impscore"].notna().all() and len(out) == 2
