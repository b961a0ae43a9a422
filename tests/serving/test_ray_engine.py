"""``pragmeter score --engine ray`` on a local Ray instance with 2 CPUs: every row comes out once, with its id,
and its score equals the single-process score."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import ray
import torch

from pragmeter.encoders.runtime import score_tolerance

STAGE1 = "implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg1_posts.tsv"


@pytest.fixture(scope="module")
def local_ray():
    # One declared GPU (there is none): lets the GPU-actor path be scheduled here; those tests pass device cpu.
    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def _single_process(model_dir: str, values: list) -> tuple[np.ndarray, list[str], str]:
    from pragmeter.impscore.model import ImpScore
    from pragmeter.impscore.scoring import score_values

    model = ImpScore.load(model_dir)  # the actors' default: this CPU's backend and precision
    return (*score_values(model, values), model.precision)


def _check_against_single_process(output, frame: pd.DataFrame, model_dir: str) -> float:
    scored = pd.read_parquet(output)
    assert len(scored) == len(frame) and scored["id"].is_unique
    scored = scored.set_index("id").loc[frame["id"]]
    assert scored["text"].fillna("<missing>").tolist() == frame["text"].fillna("<missing>").tolist()  # own row
    scores, errors, precision = _single_process(model_dir, frame["text"].tolist())
    assert scored["impscore_error"].tolist() == errors
    assert np.array_equal(np.isnan(scored["impscore"].to_numpy()), np.isnan(scores))
    difference = float(np.nanmax(np.abs(scored["impscore"].to_numpy() - scores)))
    assert difference <= score_tolerance(precision)  # the actors batch other rows together: bf16 moves with that
    return difference


def test_folder_of_files_scored_on_ray(local_ray, model_dir, sentences, tmp_path):
    from pragmeter.cli import main

    folder = tmp_path / "corpus"
    (folder / "part").mkdir(parents=True)
    with_ids = pd.DataFrame({"id": [f"doc-{i}" for i in range(len(sentences))], "text": sentences})
    with_ids.loc[3, "text"] = None
    with_ids.loc[5, "text"] = "   "
    with_ids.to_parquet(folder / "a.parquet", index=False)
    pd.DataFrame({"text": sentences[:30]}).to_csv(folder / "part" / "b.csv", index=False)
    output = tmp_path / "scored"

    import os

    umask = os.umask(0o027)  # the user's umask (not a temporary folder's 0700) decides who may read the output
    try:
        assert main(["score", "--engine", "ray", "--input", str(folder), "--output", str(output),
                     "--impscore", model_dir]) == 0
    finally:
        os.umask(umask)
    assert output.stat().st_mode & 0o777 == 0o750

    scored = pd.read_parquet(output)
    assert len(scored) == len(sentences) + 30
    csv_rows = scored[scored["id"].str.startswith("part/b.csv:")]
    assert csv_rows["id"].tolist() == [f"part/b.csv:{i}" for i in range(1, 31)]  # made from file and row
    frame = pd.concat([with_ids, pd.DataFrame({"id": csv_rows["id"], "text": sentences[:30]})])
    _check_against_single_process(output, frame.reset_index(drop=True), model_dir)
    errors = scored.set_index("id")["impscore_error"]
    assert (errors["doc-3"], errors["doc-5"]) == ("missing value", "empty text")

    before = sorted(p.name for p in output.iterdir())
    again = ["score", "--engine", "ray", "--input", str(folder), "--output", str(output), "--impscore", model_dir]
    assert main(again) == 2  # refuses to replace the output without --overwrite
    assert sorted(p.name for p in output.iterdir()) == before


def test_interrupt_says_nothing_was_written(model_dir, sentences, tmp_path):
    """Ctrl-C during a Ray job: exit 130 and a message that matches what is on disk (no output folder)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    source = tmp_path / "in.csv"
    pd.DataFrame({"text": sentences * 20}).to_csv(source, index=False)
    output = tmp_path / "scored"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    process = subprocess.Popen([sys.executable, "-m", "pragmeter", "score", "--engine", "ray", "--input",
                                str(source), "--output", str(output), "--impscore", model_dir],
                               env=env, stderr=subprocess.PIPE, text=True,
                               # Ctrl-C must reach the job even when the suite runs in the background
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    def staging() -> list:  # the staging folder (the output's lock file, .scored.lock, is not one)
        return [p for p in tmp_path.glob(".scored.*") if p.is_dir()]

    while not staging() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)  # the staging folder appears once Ray is up and the job is under way
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err
    assert f"interrupted; nothing was written to {output}" in err and "finished work is kept" not in err
    assert not output.exists() and not list(tmp_path.glob(".scored.*"))  # nor the lock


def test_a_ctrl_c_that_python_swallows_is_delivered_again():
    """The cause of a lost Ctrl-C (seen once in the test above: the job ran to the end and exited 0): a
    KeyboardInterrupt raised inside a weakref callback goes to sys.unraisablehook ("Exception ignored") and is dropped."""
    import os
    import signal
    import sys
    import threading
    import time
    import weakref

    from pragmeter.scale.ray_engine import _interrupts_kept

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are handled on the main thread only")
    hook = sys.unraisablehook

    class Thing:
        pass

    def press_ctrl_c(_):  # the signal's handler runs here, inside the callback, where its exception is swallowed
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)

    # Python's own handler, as in a terminal (a suite started in the background inherits SIGINT ignored)
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            with _interrupts_kept() as pressed:
                thing = Thing()
                ref = weakref.ref(thing, press_ctrl_c)
                del thing  # pressed here, and swallowed: without the helper nothing is raised and the wait runs on
                time.sleep(5)  # the job, still running although Ctrl-C was pressed
        # two deliveries: the first was swallowed (had it not been, it would have ended the block at once)
        assert ref() is None and len(pressed) == 2 and time.monotonic() - started < 3
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler and sys.unraisablehook is hook  # put back
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # ignored (a background job): left as it is
        with _interrupts_kept() as pressed:
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN and pressed == []
    finally:
        signal.signal(signal.SIGINT, outer)


def test_ctrl_c_the_moment_the_staging_folder_is_made(local_ray, model_dir, sentences, tmp_path, monkeypatch):
    """Seen in CI on a loaded machine: a Ctrl-C landing just after the staging folder was made (before the job's
    try) escaped as a bare KeyboardInterrupt ("finished work is kept") and left the folder behind."""
    import os

    from pragmeter.errors import Interrupted
    from pragmeter.scale.ray_engine import score_with_ray

    pd.DataFrame({"text": sentences}).to_csv(tmp_path / "in.csv", index=False)
    output = tmp_path / "scored"
    real_mkdir = os.mkdir

    def mkdir_then_ctrl_c(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        if os.path.basename(path).startswith(".scored."):
            raise KeyboardInterrupt  # as Python's handler would, at its next check after the folder appeared

    monkeypatch.setattr(os, "mkdir", mkdir_then_ctrl_c)
    try:
        score_with_ray(tmp_path / "in.csv", output, model=model_dir)
    except Interrupted as error:
        assert "nothing was written" in str(error)
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C escaped as a bare KeyboardInterrupt")
    else:
        pytest.fail("the job was not interrupted")
    assert not output.exists() and not list(tmp_path.glob(".scored.*"))


def test_a_swallowed_ctrl_c_in_a_block_that_ends_at_once_still_interrupts(monkeypatch):
    """The re-send is 0.1 s away when the block ends: the block still raises, and no re-send is left that could land
    after it (every timer the block started has ended when the block has)."""
    import os
    import signal
    import threading
    import weakref

    from pragmeter.scale.ray_engine import _interrupts_kept

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are handled on the main thread only")

    class Thing:
        pass

    timers: list[threading.Timer] = []

    class CountedTimer(threading.Timer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            timers.append(self)

    monkeypatch.setattr(threading, "Timer", CountedTimer)
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with _interrupts_kept() as pressed:
                thing = Thing()
                ref = weakref.ref(thing, lambda _: os.kill(os.getpid(), signal.SIGINT))
                del thing  # swallowed; the block ends before the re-send
        assert ref() is None and set(pressed) == {signal.SIGINT}  # twice if the re-send came inside the block
        assert len(timers) == 1  # the swallowed Ctrl-C was to be sent again
        assert not timers[0].is_alive()  # ended with the block: nothing can land in the caller's clean-up
    finally:
        for timer in timers:  # a broken block must not leave a signal to hit the rest of the run
            timer.cancel()
        signal.signal(signal.SIGINT, outer)


@pytest.mark.slow
def test_twenty_thousand_rows_equal_single_process(local_ray, model_dir, data_root, tmp_path):
    from pragmeter.data.root import data_file
    from pragmeter.io import read_table
    from pragmeter.scale.ray_engine import score_with_ray

    posts = read_table(data_file(STAGE1, root=data_root))["post"].head(20_000)
    frame = pd.DataFrame({"id": [f"post-{i}" for i in range(len(posts))], "text": posts.tolist()})
    frame.to_parquet(tmp_path / "posts.parquet", index=False)
    summary = score_with_ray(tmp_path / "posts.parquet", tmp_path / "scored", model=model_dir)
    assert summary["rows"] == 20_000
    difference = _check_against_single_process(tmp_path / "scored", frame, model_dir)
    print(f"20,000 rows, {summary['actors']} actors: max |Ray − single process| = {difference:.2e}")


def test_gpu_actor_path_runs_with_device_cpu(local_ray, model_dir, sentences, tmp_path):
    """The GPU configuration (actors reserving a GPU, torch backend, half precision, device-sized batches) run
    end to end with device cpu: same scores as one process with the same settings."""
    from pragmeter.impscore.model import ImpScore
    from pragmeter.impscore.scoring import score_values
    from pragmeter.scale.ray_engine import score_with_ray

    frame = pd.DataFrame({"id": [f"s-{i}" for i in range(len(sentences))], "text": sentences})
    frame.to_parquet(tmp_path / "s.parquet", index=False)
    summary = score_with_ray(tmp_path / "s.parquet", tmp_path / "scored", model=model_dir, gpus_per_actor=1,
                             device="cpu", dtype="bfloat16")
    assert (summary["backend"], summary["device"], summary["gpus_per_actor"], summary["actors"]) == \
        ("torch", "cpu", 1, 1)  # GPU actors default to torch; one declared GPU, one actor
    scored = pd.read_parquet(tmp_path / "scored").set_index("id").loc[frame["id"]]
    local = ImpScore.load(model_dir, backend="torch", device="cpu", precision="bf16")
    assert local.encoder_dtype == "bfloat16"
    # the actor runs one torch thread (one CPU per actor); bf16 matrix products split over threads round differently
    # (on AMX by a few thousandths), so this process scores with one thread too
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        expected, _ = score_values(local, frame["text"].tolist())
    finally:
        torch.set_num_threads(threads)
    # one actor given the 240 rows as one block (ROWS_PER_BLOCK): the batches of this process, so its bf16 numbers
    assert np.abs(scored["impscore"].to_numpy() - expected).max() < 1e-5
    # and bf16 really ran: the scores differ from the float32 ones, by a little
    float32, _ = score_values(ImpScore.load(model_dir, backend="torch", device="cpu"), frame["text"].tolist())
    assert 0 < np.abs(expected - float32).max() < 0.2


def test_a_ray_run_says_only_its_summary_on_stderr(model_dir, sentences, tmp_path):
    """Its own Ray instance (no fixture's): Ray Data's INFO plan and timings, its "progress bars disabled" warning
    and the deprecation warning of map_batches' ``concurrency`` used to come with every run. (Ray's core worker still
    logs one error line about actor restarts, which Ray Data always allows: ray-project/ray#53727.)"""
    import os
    import subprocess
    import sys

    pd.DataFrame({"id": range(6), "text": sentences[:6]}).to_csv(tmp_path / "posts.csv", index=False)
    run = subprocess.run([sys.executable, "-m", "pragmeter", "score", "--engine", "ray", "--input", "posts.csv",
                          "--output", "scored", "--impscore", model_dir, "--actors", "1"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600, env=os.environ)
    assert run.returncode == 0, run.stderr
    for noise in ("RayDeprecationWarning", "concurrency", "INFO", "WARNING", "Progress bars disabled"):
        assert noise not in run.stderr, run.stderr
    assert "scored 6 of 6 rows from 1 file(s) with 1 actor(s)" in run.stderr
