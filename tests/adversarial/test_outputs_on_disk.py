"""What commands leave on disk (issue 36, item 12): a write that fails for lack of space names the file, model
files get the user's umask like every other output, a finished training leaves no checkpoints behind, and the run
record's commit is read without touching the checkout's git index."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pragmeter.cli import main
from pragmeter.io.atomic import current_umask
from pragmeter.testing.fake_server import constant

CLI = [sys.executable, "-c", "import sys; from pragmeter.cli import main; sys.exit(main())"]


def environment() -> dict:
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def small_files(limit: int):
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.needs_data  # only the commands it starts read the data root
def test_a_write_that_does_not_fit_names_the_file(tmp_path, fake_server):
    server = fake_server(constant("Neutral"))
    done = subprocess.run([*CLI, "eval", "--tasks", "inli", "--limit", "4", "--output", str(tmp_path / "out"),
                           "--no-progress", "--no-response-cache", "--model-args", f"base_url={server.url},model=m"],
                          env=environment(), capture_output=True, text=True, timeout=300,
                          preexec_fn=small_files(2000))  # results.json is larger than 2 kB
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{tmp_path / 'out' / 'results.json'}: File too large" in done.stderr
    assert not (tmp_path / "out" / "results.json").exists()


def test_model_files_get_the_users_umask(tmp_path):
    from pragmeter.classify.model import ClassifierSettings, TextClassifier

    settings = ClassifierSettings(labels=["a", "b"], base_encoder="all-MiniLM-L6-v2", max_length=32, input_kind="single")
    folder = TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu").save(tmp_path / "model", "card")
    expected = 0o666 & ~current_umask()
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in folder.iterdir()}
    assert modes == {name: oct(expected) for name in modes}  # model.safetensors was 0600


def test_a_finished_training_leaves_no_checkpoints(tmp_path, private_cache, data_root):
    output = tmp_path / "model"
    own = tmp_path / "own-work"
    own.mkdir()
    (own / "notes.txt").write_text("kept")
    for work in (None, own):
        argv = ["classifier", "train", "ishate-a", "--head", "svm", "--svm-c", "1,4", "--limit-train", "32",
                "--limit-eval", "16", "--output", str(output), "--device", "cpu", "--no-progress", "--overwrite",
                "--data-root", str(data_root)] + (["--work-dir", str(work)] if work else [])
        assert main(argv) == 0
        assert (output / "svm.safetensors").is_file()
    assert not output.with_name("model.work").exists()  # the default work folder is gone
    assert sorted(p.name for p in own.iterdir()) == ["notes.txt"]  # a given one keeps what is not ours


@contextlib.contextmanager
def files_limited_to(limit: int):
    """In this process, a write that makes a file larger than ``limit`` bytes fails (EFBIG, as on a full disk) until
    the block ends."""
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    before = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, before[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, before)
        signal.signal(signal.SIGXFSZ, handler)


def test_a_model_that_does_not_fit_names_the_file(tmp_path, private_cache, data_root, capsys):
    """safetensors raises its own error type for a full disk: still one line naming the file, not a traceback. In
    this process (a fresh one spent ~10 s on imports and the encoder)."""
    output = tmp_path / "model"
    with files_limited_to(20_000):  # the svm checkpoint (32 x 384 floats) is larger
        code = main(["classifier", "train", "ishate-a", "--head", "svm", "--svm-c", "1", "--limit-train", "32",
                     "--limit-eval", "16", "--output", str(output), "--device", "cpu", "--no-progress",
                     "--data-root", str(data_root)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert "File too large" in err and str(output) in err.strip().splitlines()[-1]
    assert not (output / "svm.safetensors").exists()


def test_the_run_record_leaves_the_checkouts_git_index_alone():
    """The commit in a run record is read without git's optional index lock: a run beside the user's own git command
    never makes that fail on index.lock, and a run whose writes fail (a full disk, the tests above) leaves no stale
    lock behind (seen: a 2000-byte index.lock left by the write-limit test)."""
    from pragmeter import provenance

    tracked = Path(provenance.__file__).resolve()
    found = subprocess.run(["git", "rev-parse", "--git-path", "index"], cwd=tracked.parent, capture_output=True,
                           text=True)
    if found.returncode != 0:
        pytest.skip("pragmeter is not run from a git checkout")
    index = tracked.parent / found.stdout.strip()  # relative to the folder, or absolute
    stat = tracked.stat()
    # A tracked file whose time no longer matches the index: a plain `git status` rewrites the index to record it.
    os.utime(tracked, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    try:
        before = index.stat().st_mtime_ns
        assert provenance.code_commit()
        assert index.stat().st_mtime_ns == before
    finally:
        os.utime(tracked, ns=(stat.st_atime_ns, stat.st_mtime_ns))
