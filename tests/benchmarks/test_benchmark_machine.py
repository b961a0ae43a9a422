"""benchmarks/machine.py: every benchmark records the CPU, threads and load, and flags a machine that was not quiet."""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("machine", Path(__file__).parents[2] / "benchmarks" / "machine.py")
machine = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(machine)


def test_cpu_flags_are_read_from_proc_cpuinfo():
    cpu = machine.cpu_description()
    assert sorted(cpu["simd"] + cpu["simd_absent"]) == sorted(machine.SIMD_FLAGS) or not Path("/proc/cpuinfo").exists()
    flags = next((line.split(":", 1)[1].split() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("flags")), [])
    assert cpu["simd"] == [f for f in machine.SIMD_FLAGS if f in flags]
    assert cpu["usable_cpus"] >= 1 and cpu["model"]


def test_another_busy_process_makes_the_run_not_quiet():
    if machine.busy_cpu_seconds() is None:
        pytest.skip("needs /proc/stat")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    stream = io.StringIO()
    try:
        with machine.MachineWatch(stream=stream) as watch:
            time.sleep(1.5)
    finally:
        spinner.kill()
        spinner.wait()
    # The spinner is not this process's work: it shows up as other processes' CPU, loudly.
    assert watch.record["others_cpu_cores"] > 0.5
    assert watch.record["quiet"] is False
    assert "MACHINE NOT QUIET" in stream.getvalue() and "other processes used" in stream.getvalue()
    assert "NOT QUIET" in watch.summary()


def test_own_work_is_counted_as_own(monkeypatch):
    monkeypatch.setattr(machine, "busy_cpu_seconds", lambda: None)  # machine-wide counter off: own work only
    with machine.MachineWatch(stream=io.StringIO()) as watch:
        start = machine.own_cpu_seconds()
        while machine.own_cpu_seconds() - start < 0.3:
            pass
    assert watch.record["own_cpu_cores"] > 0
    assert watch.record["others_cpu_cores"] is None


def test_load_before_the_run_decides_quiet(monkeypatch):
    busy = iter([100.0, 100.0])
    monkeypatch.setattr(machine, "busy_cpu_seconds", lambda: next(busy))
    monkeypatch.setattr(machine, "own_cpu_seconds", lambda: 5.0)
    monkeypatch.setattr(machine.os, "getloadavg", lambda: (3.0, 2.0, 1.0))
    stream = io.StringIO()
    with machine.MachineWatch(stream=stream) as loaded:
        pass
    assert loaded.record["load_before"] == [3.0, 2.0, 1.0] and loaded.record["quiet"] is False
    assert "load average 3.0 before the run" in stream.getvalue()

    busy = iter([100.0, 100.0])
    monkeypatch.setattr(machine.os, "getloadavg", lambda: (0.1, 0.2, 0.3))
    stream = io.StringIO()
    with machine.MachineWatch(stream=stream) as quiet:
        pass
    assert quiet.record["quiet"] is True and quiet.record["others_cpu_cores"] == 0
    assert stream.getvalue() == "" and "QUIET" in quiet.summary() and "NOT QUIET" not in quiet.summary()


def test_embedding_cache_benchmark_runs_against_this_checkout(tmp_path):
    # The benchmark reads the cache module by path: a move of that file must break a test, not the next figure.
    out = tmp_path / "cache.json"
    done = subprocess.run([sys.executable, str(Path(__file__).parents[2] / "benchmarks" / "embedding_cache.py"),
                           "--entries", "300", "--lookups", "50", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    assert set(results) == {"old-npz-shards", "sqlite-wal"}
    assert all(r["lookups_per_s"] > 0 for r in results.values())


def test_cpu_batch_size_benchmark_times_every_size_on_both_text_sets(tmp_path, run_as_main):
    out = tmp_path / "batch.json"
    printed = run_as_main(Path(__file__).parents[2] / "benchmarks" / "cpu_batch_size.py", "--model",
                          "impscore-minilm", "--sizes", "2,8", "--n", "12", "--repeats", "1", "--out", out)
    results = json.loads(out.read_text())["results"]
    assert [(r["texts"], r["n"]) for r in results] == [("ishate", 12), ("latent_hatred", 12)]
    for r in results:
        assert set(r["sizes"]) == {"2", "8"} and all(v["texts_per_s"] > 0 for v in r["sizes"].values())
        assert r["sizes"]["8"]["max_abs_diff"] < 1e-4  # batching changes float rounding only
    assert "| impscore-minilm | ishate (12) |" in printed
