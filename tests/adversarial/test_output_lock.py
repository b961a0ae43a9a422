"""Two runs into one output at once: the second refuses in one line naming the output and the holder's pid, so
nothing is lost and nothing is silently replaced (issue 36, item 1). A lock left by a killed run never blocks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from pragmeter.cli import main
from pragmeter.io import OutputBusy, output_lock
from pragmeter.io.lock import lock_path

CLI = [sys.executable, "-c", "import sys; from pragmeter.cli import main; sys.exit(main())"]
HOLD = ("import sys, time; from pragmeter.io import output_lock\n"
        "with output_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)\n")


def environment() -> dict:
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
            "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def hold(target: Path) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(target)], env=environment(), stdout=subprocess.PIPE,
                               text=True)
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_held_output_is_refused_with_the_holders_pid(tmp_path):
    target = tmp_path / "out"
    holder = hold(target)
    try:
        with pytest.raises(OutputBusy, match=rf"{target} is being written by another pragmeter run \(pid {holder.pid}"):
            with output_lock(target):
                pass
    finally:
        holder.kill()
        holder.wait()
    with output_lock(target) as path:  # the kernel released the killed holder's lock: a stale file never blocks
        assert path == lock_path(target) and path.read_text().strip() == str(os.getpid())
    assert not lock_path(target).exists()  # released and removed: nothing left beside the output


def test_a_stale_lock_file_does_not_block(tmp_path):
    """A lock file a dead run left (its pid, no holder) is taken over: it then names this process, and goes with it."""
    target = tmp_path / "out.csv"
    lock_path(target).write_text("999999\n")  # written by a run that died
    with output_lock(target) as held:
        assert held == lock_path(target) and held.read_text() == f"{os.getpid()}\n"
    assert not lock_path(target).exists()


def eval_command(server, output: Path, task: str) -> list[str]:
    return [*CLI, "eval", "--tasks", task, "--limit", "20", "--output", str(output), "--no-progress",
            "--model-args", f"base_url={server.url},model=fake-model,concurrency=1"]


def start_both(first: list[str], second: list[str], first_started,
               second_done) -> tuple[subprocess.CompletedProcess, ...]:
    """Start ``first``; once ``first_started()`` holds, start ``second``; wait for the second, call
    ``second_done()``, then wait for the first."""
    env = environment()
    a = subprocess.Popen(first, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not first_started() and a.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    b = subprocess.Popen(second, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        second_out, second_err = b.communicate(timeout=600)
    finally:
        second_done()  # also when the wait failed: the first run must not be left waiting
    first_out, first_err = a.communicate(timeout=600)
    return (subprocess.CompletedProcess(a.args, a.returncode, first_out, first_err),
            subprocess.CompletedProcess(b.args, b.returncode, second_out, second_err))


@pytest.mark.needs_data  # only the commands it starts read the data root
def test_two_evals_into_one_folder_at_once(tmp_path, fake_server):
    # The first request (the first run's) is answered once the second run has ended: the second is sure to meet a
    # running first run, without slowing every answer down (0.5 s each took 10 s). Only the first waits, so that a
    # second run that is wrongly let in fails the test instead of hanging it.
    second_ended, first_request = threading.Event(), threading.Lock()

    def neutral_once_the_second_ended(request: dict) -> str:
        if first_request.acquire(blocking=False):
            second_ended.wait(600)
        return "Neutral"

    server = fake_server(neutral_once_the_second_ended)
    first, second = start_both(eval_command(server, tmp_path, "inli"), eval_command(server, tmp_path, "drinq_vanilla"),
                               lambda: server.total_calls > 0, second_ended.set)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 2, second.stderr
    assert "is being written by another pragmeter run (pid" in second.stderr and "Traceback" not in second.stderr
    assert len(second.stderr.strip().splitlines()) == 1
    results = json.loads((tmp_path / "results.json").read_text())["results"]
    assert set(results) == {"inli"}  # the finished run's results, whole; the refused run asked nothing
    assert server.total_calls == 20


def test_two_trainings_into_one_folder_at_once(tmp_path, private_cache, data_root, monkeypatch):
    """The first training runs in this process; the second, a fresh process, is started by the first one's lock as
    soon as it is held (before the training begins), so it always meets a running first training."""
    output = tmp_path / "model"

    def train(c: str) -> list[str]:
        return ["classifier", "train", "ishate-a", "--head", "svm", "--svm-c", c, "--limit-train", "32",
                "--limit-eval", "16", "--output", str(output), "--device", "cpu", "--no-progress",
                "--data-root", str(data_root)]

    from pragmeter.io import lock as lock_module

    real_lock, second = lock_module.output_lock, {}

    @contextmanager
    def lock_then_start_the_second(target):
        with real_lock(target) as path:
            second["run"] = subprocess.run([*CLI, *train("4")], env=environment(), capture_output=True, text=True,
                                           timeout=600)
            yield path

    monkeypatch.setattr(lock_module, "output_lock", lock_then_start_the_second)
    assert main(train("1")) == 0
    loser = second["run"]
    assert loser.returncode == 2, loser.stderr
    assert "Traceback" not in loser.stderr and len(loser.stderr.strip().splitlines()) == 1
    assert f"{output} is being written by another pragmeter run (pid {os.getpid()}" in loser.stderr
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["train_config"]["C_grid"] == [1.0]  # the finished model, not replaced by the other run's
    from pragmeter.classify.loading import load_classifier

    assert load_classifier(output, "cpu").labels == metrics["settings"]["labels"]


# --- what sits at the lock's name is not trusted (issue 47, item 4) ------------------------------------------------

PRECIOUS = "my notes, not a lock\n"


def _symlink(lock: Path, precious: Path) -> None:
    lock.symlink_to(precious)


def _hard_link(lock: Path, precious: Path) -> None:
    os.link(precious, lock)


def _foreign_file(lock: Path, precious: Path) -> None:
    lock.write_text(PRECIOUS)


def _fifo(lock: Path, precious: Path) -> None:
    os.mkfifo(lock)


def _folder(lock: Path, precious: Path) -> None:
    lock.mkdir()


@pytest.mark.parametrize("plant, what", [(_symlink, "a symbolic link"), (_hard_link, "a file with 2 hard links"),
                                         (_foreign_file, "a file that does not hold a pid"),
                                         (_fifo, "not a regular file"), (_folder, "not a regular file")],
                         ids=["symlink", "hard-link", "foreign-file", "fifo", "folder"])
def test_what_is_not_our_lock_is_refused_and_left_untouched(tmp_path, capsys, plant, what):
    """``ln -s ~/precious.txt .o.csv.lock; pragmeter score --input two.csv --output o.csv`` wrote a pid into
    precious.txt: the lock's name is opened without following links and only a regular file holding a pid is
    taken as a lock; anything else refuses the run in one line and is not written to."""
    home = tmp_path / "home"
    home.mkdir()
    precious = home / "precious.txt"
    precious.write_text(PRECIOUS)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "two.csv").write_text("text\nCan you pass the salt?\nPass the salt.\n")
    lock = lock_path(runs / "o.csv")
    plant(lock, precious)
    code = main(["score", "--input", str(runs / "two.csv"), "--output", str(runs / "o.csv")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"{lock} is {what}, not a pragmeter lock; it was left untouched" in err
    assert precious.read_text() == PRECIOUS
    assert os.path.lexists(lock) and not (runs / "o.csv").exists()


def test_an_alias_and_the_real_path_are_one_lock(tmp_path, capsys):
    """``runs/real`` and a symbolic link ``runs/alias`` to it were two locks (two evals both exited 0 and one
    model's results were lost): the lock is keyed by the resolved path, so a run through either name meets the
    other's lock, whichever took it first."""
    real = tmp_path / "runs" / "real"
    real.mkdir(parents=True)
    (tmp_path / "runs" / "alias").symlink_to(real)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "link").symlink_to(tmp_path / "runs")  # a link to a parent folder resolves the same way
    alias, deep = tmp_path / "runs" / "alias", elsewhere / "link" / "alias"
    for held, contender in ((real, alias), (alias, real), (deep, real)):
        holder = hold(held)  # another process holds the lock
        try:
            with pytest.raises(OutputBusy, match=rf"pid {holder.pid}"):
                with output_lock(contender):
                    pass
            code = main(["eval", "--tasks", "inli", "--output", str(contender), "--model-args",
                         "base_url=http://127.0.0.1:9/v1,model=m"])
            err = capsys.readouterr().err
            assert code == 2 and f"is being written by another pragmeter run (pid {holder.pid}" in err
        finally:
            holder.kill()
            holder.wait()
    assert not any(real.iterdir())  # no run wrote anything
    assert lock_path(alias) == lock_path(real) == lock_path(deep)
