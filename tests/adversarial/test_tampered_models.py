"""A model folder or cache that was tampered with, or built by two processes at once, never gives a number that
differs from the untampered one without an error (issue 47, items 6-10 and 13): weight paths that leave the folder,
a FIFO for a weight file, NaN in encoder weights, low-rank factors that broadcast, a fine-tuned encoder cache that is
stale, swapped or damaged, a truncated OpenVINO export, two builders of one cache folder, a damaged embedding-cache
row."""

from __future__ import annotations

import json
import logging
import os
import queue
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from pragmeter.cli import main
from pragmeter.errors import DataError

TEXTS = ["You are talking too loudly.", "I'm finding it a bit hard to concentrate."]
DENSE = "encoder.layer.5.output.dense.weight"  # MiniLM: 384 x 1536


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A cache of this test's own: these tests build and damage fine-tuned encoders in it."""
    folder = tmp_path / "cache"
    folder.mkdir()
    monkeypatch.setenv("PRAGMETER_CACHE", str(folder))
    return folder


def factors(seed: int, rank: int = 4) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {DENSE + ".up": torch.randn(384, rank, generator=generator) * 0.05,
            DENSE + ".down": torch.randn(rank, 1536, generator=generator) * 0.05}


def save_model(path: Path, tensors: dict, base: str = "all-MiniLM-L6-v2") -> Path:
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    torch.manual_seed(0)
    ImpScore(ImpScoreHeads(HeadsConfig(384)), base, {"name": path.name}).save(
        path, encoder_weights=tensors, base_encoder=base)
    return path


def rewrite_shard(folder: Path, tensors: dict) -> None:
    """Replace the folder's one shard and record its new sha256 (a folder edited by hand, consistently)."""
    from safetensors.torch import save_file

    from pragmeter.data.root import sha256_of

    shard = folder / "encoder-1.safetensors"
    save_file({name: tensor.contiguous() for name, tensor in tensors.items()}, str(shard))
    config = json.loads((folder / "config.json").read_text())
    config["encoder_weights"][0]["sha256"] = sha256_of(shard)
    (folder / "config.json").write_text(json.dumps(config))


def scores(folder: Path) -> np.ndarray:
    from pragmeter.impscore.model import ImpScore

    return ImpScore.load(folder, backend="torch", device="cpu").score(TEXTS)


# ---------------------------------------------------------------- item 8: exact shapes
def test_low_rank_factors_that_broadcast_are_refused(tmp_path, cache):
    folder = save_model(tmp_path / "model", factors(0))
    rewrite_shard(folder, {DENSE + ".up": torch.full((1, 32), 0.01), DENSE + ".down": torch.full((32, 1), 0.01)})
    with pytest.raises(DataError, match=r"encoder-1.safetensors: factors of .* have shapes \(1, 32\) and \(32, 1\)"):
        scores(folder)


# ---------------------------------------------------------------- item 7: NaN or infinity in encoder weights
@pytest.mark.parametrize("name", [DENSE + ".up", "encoder.layer.5.output.LayerNorm.weight"])
def test_nan_or_infinity_in_encoder_weights_is_refused_naming_the_file(name, tmp_path, cache, capsys):
    from pragmeter.encoders import load_encoder

    folder = save_model(tmp_path / "model", factors(0))
    tensors = factors(0)
    if name.endswith(".up"):
        tensors[name][3, 1] = float("nan")
    else:
        tensors[name] = load_encoder("all-MiniLM-L6-v2", "cpu")[0].auto_model.state_dict()[name].clone()
        tensors[name][7] = float("inf")
    rewrite_shard(folder, tensors)
    (tmp_path / "in.csv").write_text("text\n" + "\n".join(TEXTS) + "\n")
    code = main(["score", "--impscore", str(folder), "--backend", "torch", "--strict", "--input",
                 str(tmp_path / "in.csv"), "--output", str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert code == 2 and f"encoder-1.safetensors: tensor {name!r} holds NaN or infinite values" in err
    assert "scored" not in err and "Traceback" not in err and not (tmp_path / "out.csv").exists()


def test_an_encoder_that_gives_nan_is_an_error_never_a_score(tmp_path, capsys):
    """A local encoder folder whose own weights hold a NaN (no shard to check): score and distance refuse."""
    from safetensors.torch import load_file, save_file

    from pragmeter.encoders import require_encoder
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    encoder = tmp_path / "encoder"
    shutil.copytree(require_encoder("all-MiniLM-L6-v2"), encoder)
    weights = load_file(str(encoder / "model.safetensors"))
    weights["encoder.layer.5.output.LayerNorm.weight"][0] = float("nan")
    save_file(weights, str(encoder / "model.safetensors"))
    ImpScore(ImpScoreHeads(HeadsConfig(384)), str(encoder), {"name": "nan"}).save(tmp_path / "model")
    for command in (["score", *TEXTS], ["distance", *TEXTS]):
        code = main([command[0], "--impscore", str(tmp_path / "model"), "--backend", "torch", *command[1:]])
        captured = capsys.readouterr()
        assert code == 2 and "gives NaN or infinite values for text 0" in captured.err, command
        assert "nan" not in captured.out.lower()
    from fastapi.testclient import TestClient

    from pragmeter.serve.app import create_app

    with TestClient(create_app(ImpScore.load(tmp_path / "model", backend="torch", device="cpu"))) as client:
        for path, body in (("/score", {"texts": TEXTS}), ("/distance", {"pairs": [TEXTS]})):
            answer = client.post(path, json=body)
            assert answer.status_code == 500 and "NaN or infinite" in answer.json()["detail"], (path, answer.text)


# ---------------------------------------------------------------- item 6: paths and files a config names
@pytest.mark.parametrize("where", ["parent", "absolute", "link"])
def test_weight_paths_that_leave_the_model_folder_are_refused(where, tmp_path, cache):
    folder = save_model(tmp_path / "model", factors(0))
    outside = tmp_path / "outside.safetensors"
    shutil.copy(folder / "encoder-1.safetensors", outside)
    config = json.loads((folder / "config.json").read_text())
    if where == "link":
        (folder / "linked.safetensors").symlink_to(outside)
    config["encoder_weights"][0]["file"] = {"parent": "../outside.safetensors", "absolute": str(outside),
                                            "link": "linked.safetensors"}[where]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(DataError, match="outside the model folder|not a file name inside the model folder"):
        scores(folder)


@pytest.mark.parametrize("name", ["heads.safetensors", "encoder-1.safetensors"])
def test_a_fifo_as_a_weight_file_is_refused_not_read(name, tmp_path, cache):
    folder = save_model(tmp_path / "model", factors(0))
    (folder / name).unlink()
    os.mkfifo(folder / name)
    # in a child process: reading a FIFO that no one writes would block forever (the timeout only ends a hang)
    child = subprocess.run(
        [sys.executable, "-c", "import sys; from pragmeter.cli import main; sys.exit(main())", "score",
         "--impscore", str(folder), "--backend", "torch", "It is cold in here."],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == 2 and f"{name}: not a regular file" in child.stderr, child.stderr


def test_a_relative_encoder_path_is_read_from_the_model_folder(tmp_path, monkeypatch):
    from pragmeter.encoders import load_encoder, require_encoder
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    folder = tmp_path / "model"
    ImpScore(ImpScoreHeads(HeadsConfig(384)), "encoder", {"name": "relative"}).save(folder)
    (folder / "encoder").symlink_to(require_encoder("all-MiniLM-L6-v2"), target_is_directory=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no "encoder" here: found in the model folder
    model = ImpScore.load(folder, backend="torch", device="cpu")
    assert model.encoder_name == str((folder / "encoder").resolve())
    packaged = load_encoder("all-MiniLM-L6-v2", "cpu").encode(TEXTS, convert_to_numpy=True)
    assert np.allclose(model.encode(TEXTS), packaged, atol=1e-6)
    # a folder of that name in the working directory only is never used
    config = json.loads((folder / "config.json").read_text())
    config["encoder"] = "other"
    (folder / "config.json").write_text(json.dumps(config))
    (elsewhere / "other").symlink_to(require_encoder("all-MiniLM-L6-v2"), target_is_directory=True)
    with pytest.raises(DataError, match="'other' is not a folder in the model folder"):
        ImpScore.load(folder, backend="torch")


# ---------------------------------------------------------------- item 9: the fine-tuned encoder cache
def test_a_changed_base_encoder_gets_its_own_fine_tuned_cache(tmp_path, cache):
    from safetensors.torch import load_file, save_file

    from pragmeter.encoders import load_encoder, require_encoder

    base = tmp_path / "base"
    shutil.copytree(require_encoder("all-MiniLM-L6-v2"), base)
    folder = save_model(tmp_path / "model", factors(0), base=str(base))
    before = scores(folder)
    weights = load_file(str(base / "model.safetensors"))
    weights["encoder.layer.4.output.LayerNorm.weight"] *= 1.5  # the base folder changed in place
    save_file(weights, str(base / "model.safetensors"))
    load_encoder.cache_clear()
    after = scores(folder)
    shutil.rmtree(cache)  # what a fresh cache gives
    load_encoder.cache_clear()
    assert np.allclose(after, scores(folder), atol=1e-6) and np.abs(after - before).max() > 1e-3


def test_swapped_or_damaged_fine_tuned_caches_are_rebuilt(tmp_path, cache, caplog):
    from pragmeter.encoders import load_encoder

    first, second = save_model(tmp_path / "first", factors(1)), save_model(tmp_path / "second", factors(2))
    expected = scores(first)
    assert np.abs(expected - scores(second)).max() > 1e-4
    built = sorted(p for p in (cache / "encoders" / "finetuned").iterdir() if not p.name.startswith("."))
    assert len(built) == 2
    # the two models' cache folders swapped
    built[0].rename(built[0].with_name("swap"))
    built[1].rename(built[0])
    built[0].with_name("swap").rename(built[1])
    load_encoder.cache_clear()
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        assert np.allclose(scores(first), expected, atol=1e-6)
    assert "built from something else; built again" in caplog.text
    # bytes flipped in the cached weights (in the tensors, past the header)
    caplog.clear()
    for path in built:
        target = path / "model.safetensors"
        data = bytearray(target.read_bytes())
        data[len(data) // 2: len(data) // 2 + 64] = b"\xff" * 64  # NaN in fp32
        target.write_bytes(bytes(data))
    load_encoder.cache_clear()
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        assert np.allclose(scores(first), expected, atol=1e-6)
    assert "files changed since it was built; built again" in caplog.text


def test_a_truncated_openvino_export_is_set_aside_and_converted_again(cache, session_cache, monkeypatch, caplog):
    from pragmeter.encoders.openvino import OpenVinoEncoder, ir_file
    from pragmeter.encoders.runtime import resolve_runtime

    monkeypatch.setenv("PRAGMETER_CACHE", str(session_cache))  # converted (or found) once in the session's cache
    intact = OpenVinoEncoder("all-MiniLM-L6-v2", resolve_runtime("openvino", "fp32")).encode(TEXTS)
    whole = ir_file("all-MiniLM-L6-v2").parent
    monkeypatch.setenv("PRAGMETER_CACHE", str(cache))
    copy = ir_file("all-MiniLM-L6-v2").parent
    shutil.copytree(whole, copy)
    weights = copy / "model.bin"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])  # a copy cut short
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        again = OpenVinoEncoder("all-MiniLM-L6-v2", resolve_runtime("openvino", "fp32")).encode(TEXTS)
    assert np.allclose(again, intact, atol=1e-6)
    assert "files changed since it was built; set aside and converted again" in caplog.text



def test_a_damaged_onnx_export_is_set_aside_and_exported_again(cache, session_cache, monkeypatch, caplog):
    """Bytes flipped inside the cached ONNX graph's weights (it still opens, and gave other numbers): the seal
    recorded at export no longer matches, so the graph is set aside and exported again."""
    from pragmeter.encoders.onnx import OnnxEncoder, onnx_file

    monkeypatch.setenv("PRAGMETER_CACHE", str(session_cache))
    intact = OnnxEncoder("all-MiniLM-L6-v2").encode(TEXTS)
    whole = onnx_file("all-MiniLM-L6-v2").parent
    monkeypatch.setenv("PRAGMETER_CACHE", str(cache))
    copy = onnx_file("all-MiniLM-L6-v2").parent
    shutil.copytree(whole, copy)
    graph = copy / onnx_file("all-MiniLM-L6-v2").name
    data = bytearray(graph.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 4096] = bytes(255 - b for b in data[middle:middle + 4096])  # inside the weights
    graph.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        again = OnnxEncoder("all-MiniLM-L6-v2").encode(TEXTS)
    assert np.allclose(again, intact, atol=1e-5)
    assert "set aside as" in caplog.text and "and exported again" in caplog.text

# ---------------------------------------------------------------- item 10: two builders at once
BUILDER = """
import json, sys
from pathlib import Path
import safetensors.torch
real = safetensors.torch.save_file
def save_file(*args, **kwargs):  # the builder says it is writing, then waits for the test's go
    print("writing", flush=True)
    sys.stdin.readline()
    return real(*args, **kwargs)
safetensors.torch.save_file = save_file
from pragmeter.encoders.finetuned import finetuned_encoder
folder = Path(sys.argv[1])
config = json.loads((folder / "config.json").read_text())
print("done", finetuned_encoder(config["encoder"], folder, config["encoder_weights"], "config"), flush=True)
"""


def waiting_for_a_lock(pid: int) -> bool:
    """Whether process ``pid`` is blocked waiting for a file lock (a ``->`` line of /proc/locks)."""
    lines = Path("/proc/locks").read_text().splitlines()
    return any(parts[1:2] == ["->"] and str(pid) in parts[2:7] for parts in map(str.split, lines))


def test_two_processes_building_one_fine_tuned_encoder_build_it_once(tmp_path, cache):
    if not Path("/proc/locks").is_file():
        pytest.skip("needs /proc/locks to see a process wait for a lock")
    folder = save_model(tmp_path / "model", factors(3))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"), "OMP_NUM_THREADS": "1"}

    def builder() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", BUILDER, str(folder)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    first = builder()
    assert first.stdout.readline().strip() == "writing"  # the first builder is in the middle of its build
    second = builder()
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line.strip()) for line in second.stdout], daemon=True)
    reader.start()
    # The second either waits for the first one's lock (it must) or, with no lock, starts writing too
    second_wrote = False
    while not waiting_for_a_lock(second.pid) and second.poll() is None:
        try:
            if lines.get(timeout=0.05) == "writing":
                second_wrote = True
                break
        except queue.Empty:
            pass
    for process in (first, second):
        if process is first or second_wrote:
            process.stdin.write("\n")
            process.stdin.flush()
    out_first, err_first = first.communicate(timeout=600)
    err_second = second.stderr.read()  # its standard output is the reader's
    second.wait(timeout=600)
    reader.join()
    said = [lines.get_nowait() for _ in range(lines.qsize())]
    assert not second_wrote and "writing" not in said  # the second used the first one's folder, unbuilt
    assert first.returncode == 0 and second.returncode == 0, err_first + err_second
    built = Path(out_first.split("done ", 1)[1].strip())
    assert said == [f"done {built}"] and built.is_dir()
    assert [p.name for p in built.parent.iterdir() if not p.name.endswith(".build.lock")] == [built.name]
    from pragmeter.encoders.fingerprint import seal_problem

    assert seal_problem(built, json.loads((built / "pragmeter-seal.json").read_text())["built_from"]) is None


# ---------------------------------------------------------------- item 13 (part): the embedding cache
def test_a_damaged_embedding_cache_row_is_computed_again(tmp_path, private_cache, caplog):
    from pragmeter.encoders.embedding_cache import DB_FILE
    from pragmeter.impscore.model import ImpScore

    expected = ImpScore.load(backend="onnx", cache=tmp_path / "emb").score(TEXTS)
    database = next((tmp_path / "emb").rglob(DB_FILE))
    with sqlite3.connect(database) as db:
        keys = [key for (key,) in db.execute("SELECT key FROM embeddings ORDER BY rowid")]
        db.execute("UPDATE embeddings SET vector = ? WHERE key = ?", (np.full(384, np.nan, np.float32).tobytes(),
                                                                       keys[0]))
        db.execute("UPDATE embeddings SET vector = ? WHERE key = ?", (np.ones(100, np.float32).tobytes(), keys[1]))
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        again = ImpScore.load(backend="onnx", cache=tmp_path / "emb").score(TEXTS)
    assert np.allclose(again, expected, atol=1e-6)
    assert "2 damaged row(s)" in caplog.text
    with sqlite3.connect(database) as db:  # stored again, whole
        assert {len(blob) for (blob,) in db.execute("SELECT vector FROM embeddings")} == {384 * 4}
