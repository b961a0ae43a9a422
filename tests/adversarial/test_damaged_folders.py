"""Damaged model folders are refused in one line naming the file, exit 2 — never a traceback, and never a silently
different model (issue 36, items 3, 4 and 11): classifier folders (a missing tokenizer, labels that disagree with the
model's id2label, a config that drops half the layers, broken JSON and weights) and ImpScore folders (missing or
mistyped config keys, truncated, empty or pickled heads, heads of another shape than the config says, an encoder
of another width), with the torch and ONNX backends."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import transformers  # noqa: F401 - imported at collection, so its log handler writes to the session's stderr, not
#                      to the captured stream of the first test that loads a model (closed after that test)

from pragmeter.cli import main
from pragmeter.impscore.model import MODELS_DIR

LABELS = ["explicit", "implicit", "non-hateful"]


def one_line_naming(capsys, name: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.strip().splitlines() if line.startswith("pragmeter")]
    assert len(lines) == 1 and name in lines[0], err
    return lines[0]


# ---------------------------------------------------------------------------------------------- classifier folders
@pytest.fixture(scope="module")
def classifier_folder(tmp_path_factory) -> Path:
    """A fine-tuned-classifier folder as `classifier train` writes it (an untrained head: these tests read folders)."""
    from pragmeter.classify.model import ClassifierSettings, TextClassifier

    folder = tmp_path_factory.mktemp("clf") / "model"
    settings = ClassifierSettings(labels=LABELS, base_encoder="all-MiniLM-L6-v2", max_length=64, input_kind="single")
    TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu").save(folder, "card", {})
    return folder


@pytest.fixture(scope="module")
def svm_folder(tmp_path_factory) -> Path:
    from pragmeter.classify.model import ClassifierSettings
    from pragmeter.classify.svm import EmbeddingSVMClassifier

    folder = tmp_path_factory.mktemp("svm") / "model"
    settings = ClassifierSettings(labels=LABELS, base_encoder="all-MiniLM-L6-v2", max_length=256, input_kind="single")
    rng = np.random.default_rng(0)
    arrays = {"support_vectors": rng.normal(size=(6, 384)).astype(np.float32), "dual_coef": rng.normal(size=(2, 6)),
              "intercept": rng.normal(size=3), "n_support": np.array([2, 2, 2])}
    EmbeddingSVMClassifier(settings, arrays, 0.5, 1.0, "cpu").save(folder, "card", {})
    return folder


def edit_json(path: Path, change) -> None:
    config = json.loads(path.read_text())
    change(config)
    path.write_text(json.dumps(config))


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def pickled(path: Path) -> None:
    path.write_bytes(pickle.dumps({"weights": [1.0, 2.0]}))


CLASSIFIER_DAMAGE = {
    "no tokenizer files": ("tokenizer.json", lambda f: (f / "tokenizer.json").unlink()),
    "labels reversed against id2label": ("config.json", lambda f: edit_json(
        f / "config.json", lambda c: c["pragmeter"].update(labels=LABELS[::-1]))),
    "config with half the layers": ("model.safetensors", lambda f: edit_json(
        f / "config.json", lambda c: c.update(num_hidden_layers=3))),
    "config with more layers than the weights": ("model.safetensors", lambda f: edit_json(
        f / "config.json", lambda c: c.update(num_hidden_layers=12))),
    "config not JSON": ("config.json", lambda f: (f / "config.json").write_text("{not json")),
    "config a list": ("config.json", lambda f: (f / "config.json").write_text("[1, 2]")),
    "labels not a list": ("config.json", lambda f: edit_json(
        f / "config.json", lambda c: c["pragmeter"].update(labels="explicit"))),
    "unknown settings key": ("config.json", lambda f: edit_json(
        f / "config.json", lambda c: c["pragmeter"].update(colour="blue"))),
    "truncated weights": ("model.safetensors", lambda f: truncate(f / "model.safetensors")),
    "empty weights": ("model.safetensors", lambda f: (f / "model.safetensors").write_bytes(b"")),
    "pickled weights": ("model.safetensors", lambda f: pickled(f / "model.safetensors")),
}
SVM_DAMAGE = {
    "truncated svm weights": ("svm.safetensors", lambda f: truncate(f / "svm.safetensors")),
    "pickled svm weights": ("svm.safetensors", lambda f: pickled(f / "svm.safetensors")),
    "svm config without svm": ("config.json", lambda f: edit_json(f / "config.json", lambda c: c.pop("svm"))),
    "svm config not JSON": ("config.json", lambda f: (f / "config.json").write_text("")),
    "svm labels against the weights": ("svm.safetensors", lambda f: edit_json(
        f / "config.json", lambda c: c["pragmeter"].update(labels=LABELS[:2]))),
}


def predict(folder: Path, tmp_path: Path) -> int:
    source = tmp_path / "in.csv"
    source.write_text("text\nIt is cold in here.\n", encoding="utf-8")
    return main(["classifier", "predict", "--model", str(folder), "--input", str(source),
                 "--output", str(tmp_path / "out.csv"), "--device", "cpu", "--no-progress"])


@pytest.mark.parametrize("kind, case", [("fine-tuned", c) for c in sorted(CLASSIFIER_DAMAGE)]
                         + [("svm", c) for c in sorted(SVM_DAMAGE)])
def test_a_damaged_classifier_folder_is_refused_naming_the_file(kind, case, request, tmp_path, capsys):
    name, damage = (CLASSIFIER_DAMAGE if kind == "fine-tuned" else SVM_DAMAGE)[case]
    original = request.getfixturevalue("classifier_folder" if kind == "fine-tuned" else "svm_folder")
    folder = shutil.copytree(original, tmp_path / "model")
    damage(folder)
    assert predict(folder, tmp_path) == 2
    one_line_naming(capsys, str(folder / name))
    assert not (tmp_path / "out.csv").exists()


def test_an_intact_classifier_folder_still_loads(classifier_folder, svm_folder, tmp_path):
    assert predict(classifier_folder, tmp_path) == 0
    (tmp_path / "svm").mkdir()
    assert predict(svm_folder, tmp_path / "svm") == 0


# ---------------------------------------------------------------------------------------------- ImpScore folders
MINILM = MODELS_DIR / "impscore-minilm"  # heads only: the fine-tuned layers have their own tests


def heads_of_dim(folder: Path, dim: int) -> None:
    """Heads of another projection size than config.json says (an interrupted `impscore train --overwrite`)."""
    from safetensors.numpy import save_file

    width = json.loads((folder / "config.json").read_text())["heads"]["embedding_dim"]
    rng = np.random.default_rng(0)
    save_file({"W_p": rng.normal(size=(width, dim)).astype(np.float32),
               "W_s": rng.normal(size=(width, dim)).astype(np.float32),
               "W_t": rng.normal(size=(dim, dim)).astype(np.float32)}, str(folder / "heads.safetensors"))


def without_head(folder: Path, name: str) -> None:
    from safetensors.numpy import load_file, save_file

    weights = load_file(str(folder / "heads.safetensors"))
    weights.pop(name)
    save_file(weights, str(folder / "heads.safetensors"))


def nan_in_head(folder: Path) -> None:
    """One NaN weight (a diverged training): every score would be NaN, reported per row as a missing score."""
    from safetensors.numpy import load_file, save_file

    weights = load_file(str(folder / "heads.safetensors"))
    weights["W_p"][0, 0] = np.nan
    save_file(weights, str(folder / "heads.safetensors"))


IMPSCORE_DAMAGE = {
    "config not JSON": ("config.json", lambda f: (f / "config.json").write_text('{"format": ')),
    "config a list": ("config.json", lambda f: (f / "config.json").write_text("[]")),
    "no encoder": ("config.json", lambda f: edit_json(f / "config.json", lambda c: c.pop("encoder"))),
    "no heads": ("config.json", lambda f: edit_json(f / "config.json", lambda c: c.pop("heads"))),
    "heads a list": ("config.json", lambda f: edit_json(f / "config.json", lambda c: c.update(heads=[64]))),
    "encoder a number": ("config.json", lambda f: edit_json(f / "config.json", lambda c: c.update(encoder=7))),
    "dim a string": ("config.json", lambda f: edit_json(f / "config.json", lambda c: c["heads"].update(dim="64"))),
    "unknown transform": ("config.json", lambda f: edit_json(
        f / "config.json", lambda c: c["heads"].update(transform="sideways"))),
    "truncated heads": ("heads.safetensors", lambda f: truncate(f / "heads.safetensors")),
    "empty heads": ("heads.safetensors", lambda f: (f / "heads.safetensors").write_bytes(b"")),
    "pickled heads": ("heads.safetensors", lambda f: pickled(f / "heads.safetensors")),
    "heads of another dim": ("heads.safetensors", lambda f: heads_of_dim(f, 32)),
    "a head missing": ("heads.safetensors", lambda f: without_head(f, "W_t")),
    "a NaN weight": ("heads.safetensors", nan_in_head),
    "encoder of another width": ("config.json", lambda f: edit_json(
        f / "config.json", lambda c: c.update(encoder="all-mpnet-base-v2"))),
}


@pytest.mark.parametrize("backend", ["torch", "onnx"])
@pytest.mark.parametrize("case", sorted(IMPSCORE_DAMAGE))
def test_a_damaged_impscore_folder_is_refused_naming_the_file(case, backend, tmp_path, capsys):
    name, damage = IMPSCORE_DAMAGE[case]
    folder = shutil.copytree(MINILM, tmp_path / "model")
    damage(folder)
    assert main(["score", "--impscore", str(folder), "--backend", backend, "--device", "cpu",
                 "It is cold in here."]) == 2
    one_line_naming(capsys, str(folder / name))


@pytest.mark.parametrize("backend", ["torch", "onnx"])
def test_an_encoder_of_another_width_is_refused_before_it_is_loaded(backend, tmp_path):
    """Read from the encoder folder's files at load: not after loading (torch) or exporting (ONNX) 420 MB."""
    from pragmeter.errors import DataError
    from pragmeter.impscore.model import ImpScore

    folder = shutil.copytree(MINILM, tmp_path / "model")
    IMPSCORE_DAMAGE["encoder of another width"][1](folder)
    with pytest.raises(DataError, match=r"config.json: encoder 'all-mpnet-base-v2' gives 768-wide embeddings; the "
                                        r"heads take 384"):
        ImpScore.load(folder, backend=backend, device="cpu")


def test_impscore_train_overwrite_that_dies_while_saving_keeps_the_old_model(tmp_path, monkeypatch):
    """The folder is written atomically: a save that dies half-way (here: after the heads and config, at the
    per-source table) leaves the old model whole, not new dim-32 heads beside the old config."""
    import pandas as pd

    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.training import TrainConfig, TrainResult, save_trained

    folder = shutil.copytree(MINILM, tmp_path / "model")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    result = TrainResult(ImpScoreHeads(HeadsConfig(embedding_dim=384, dim=32)), TrainConfig(dim=32), best_epoch=1,
                         test_per_source=pd.DataFrame({"source": ["x"], "pairs": [3], "implicitness_accuracy": [1.0],
                                                         "pragmatics_accuracy": [0.5]}))

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", disk_full)
    with pytest.raises(OSError):
        save_trained(result, folder, "new", {"sources": ["test"]})
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    monkeypatch.undo()
    save_trained(result, folder, "new", {"sources": ["test"]})  # and a save that ends replaces it whole
    config = json.loads((folder / "config.json").read_text())
    assert config["heads"]["dim"] == 32 and (folder / "test_per_source.csv").is_file()
    assert sorted(p.name for p in folder.parent.iterdir()) == ["model"]  # no staging folder left behind
    assert oct((folder / "heads.safetensors").stat().st_mode & 0o777) == oct(0o666 & ~current_umask())


def current_umask() -> int:
    from pragmeter.io.atomic import current_umask as umask

    return umask()
