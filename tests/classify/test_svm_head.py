"""The frozen-encoder SVM head (`classifier train ishate-a|b --head svm`): its numpy prediction is scikit-learn's,
and on a real ISHate slice the folder reloads to its own test report and serves `classifier predict` and the local
backend; bad settings and folders fail in one line."""

from __future__ import annotations

import json
import uuid

import numpy as np
import pandas as pd
import pytest
from sklearn.svm import SVC

from pragmeter.classify.loading import load_classifier
from pragmeter.classify.model import ClassifierSettings
from pragmeter.classify.recipes import ishate
from pragmeter.classify.svm import EmbeddingSVMClassifier, _arrays_of
from pragmeter.cli import main
from pragmeter.errors import PragmeterError
from pragmeter.metrics.classification import classification_report

LABELS = ["non-hateful", "non-subtle", "subtle"]


def overlapping_blobs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Three overlapping classes of unit vectors (so that the machines disagree and votes tie now and then)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(3, 8))
    y = rng.integers(0, 3, n)
    x = centres[y] + 1.5 * rng.normal(size=(n, 8))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32), y


def test_numpy_prediction_is_scikit_learns():
    x, y = overlapping_blobs(400, 0)
    x_new, _ = overlapping_blobs(300, 1)
    fitted = SVC(C=2.0, kernel="rbf", gamma="scale").fit(x, y)
    model = EmbeddingSVMClassifier(ClassifierSettings(LABELS, "all-MiniLM-L6-v2", 256, "single"),
                                   _arrays_of(fitted, 3), fitted._gamma, 2.0, "cpu")
    ovo = SVC(C=2.0, kernel="rbf", gamma="scale", decision_function_shape="ovo").fit(x, y)
    assert np.allclose(model.decision_values(x_new), ovo.decision_function(x_new), atol=1e-8)
    assert np.allclose(model.vote_scores(x_new), fitted.decision_function(x_new), atol=1e-8)
    probabilities = model.probabilities_of(x_new)
    assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)
    assert model.decide(probabilities) == [LABELS[i] for i in fitted.decision_function(x_new).argmax(axis=1)]


@pytest.fixture(scope="module")
def svm_folder(tmp_path_factory, data_root):
    folder = tmp_path_factory.mktemp("svm") / "ishate-b-svm"
    code = main(["classifier", "train", "ishate-b", "--head", "svm", "--svm-c", "0.5,8", "--limit-train", "1500",
                 "--limit-eval", "300", "--output", str(folder), "--device", "cpu", "--no-progress",
                 "--data-root", str(data_root)])
    assert code == 0
    return folder, json.loads((folder / "metrics.json").read_text())


def test_c_is_chosen_on_validation_and_the_folder_holds_no_pickle(svm_folder):
    folder, metrics = svm_folder
    history = metrics["history"]
    assert metrics["head"] == "svm" and [row["C"] for row in history] == [0.5, 8.0]
    best = max(history, key=lambda row: row["val_macro_f1"])  # first among ties, as the fit keeps it
    assert history[metrics["best_epoch"] - 1]["C"] == best["C"]
    config = json.loads((folder / "config.json").read_text())
    assert config["svm"]["C"] == best["C"] and config["svm"]["gamma"] > 0
    assert config["pragmeter"]["max_length"] > 0 and config["pragmeter"]["base_encoder"] == "all-MiniLM-L6-v2"
    names = {p.name for p in folder.iterdir()}
    assert names == {"svm.safetensors", "config.json", "README.md", "metrics.json"}
    card = (folder / "README.md").read_text()
    assert "support-vector machine" in card and "| C | support vectors |" in card
    from huggingface_hub import ModelCard

    hub = ModelCard.load(folder / "README.md").data  # the front matter, as the Hub reads it
    assert hub.license == "bsl-1.0" and hub.datasets == ["ishate"] and hub.pipeline_tag == "text-classification"
    assert hub.library_name is None  # an SVM on embeddings: not a transformers classifier


def test_reloaded_folder_reproduces_its_test_report(svm_folder, data_root):
    folder, metrics = svm_folder
    test = ishate.build("subtle", root=data_root).test.head(300)
    reloaded = load_classifier(folder, "cpu")
    assert isinstance(reloaded, EmbeddingSVMClassifier)
    report = classification_report(test.labels, reloaded.predict(test.texts), reloaded.labels)
    assert json.dumps(report, sort_keys=True) == json.dumps(metrics["test"], sort_keys=True)
    assert metrics["test"]["accuracy"] > 0.6  # far above chance: the embeddings carry the task


def test_predict_and_the_local_backend_read_an_svm_folder(svm_folder, tmp_path, data_root, capsys):
    folder, _ = svm_folder
    texts = ishate.build("subtle", root=data_root).test.head(6).texts
    source = tmp_path / "posts.csv"
    pd.DataFrame({"id": range(6), "text": texts}).to_csv(source, index=False)
    target = tmp_path / "labelled.csv"
    assert main(["classifier", "predict", "--model", str(folder), "--input", str(source), "--output", str(target),
                 "--device", "cpu", "--no-progress"]) == 0
    out = pd.read_csv(target)
    assert list(out["prediction"]) == load_classifier(folder, "cpu").predict(texts)
    assert "exceeded the classifier's token limit" not in capsys.readouterr().err  # none of these posts is long
    assert np.allclose(out[[f"p_{label}" for label in LABELS]].sum(axis=1), 1.0, atol=1e-5)
    assert main(["eval", "--tasks", "ishate_subtle", "--model", f"local:{folder}", "--model-args", "device=cpu",
                 "--output", str(tmp_path / "eval"), "--limit", "6", "--no-progress", "--data-root",
                 str(data_root)]) == 0
    payload = json.loads((tmp_path / "eval" / "results.json").read_text())
    assert payload["results"]["ishate_subtle"]["invalid"] == 0
    assert len(payload["model"]["weights_sha256"]) == 64
    long = " ".join(texts * 40) + f" {uuid.uuid4().hex}"  # > 256 tokens, and new: encoded, not read from the cache
    pd.DataFrame({"text": [texts[0], long]}).to_csv(source, index=False)
    assert main(["classifier", "predict", "--model", str(folder), "--input", str(source), "--output", str(target),
                 "--overwrite", "--device", "cpu", "--no-progress"]) == 0
    assert "note: 1 row(s) exceeded the classifier's token limit and were truncated" in capsys.readouterr().err


def test_an_item_with_an_empty_text_is_an_invalid_answer_and_the_eval_completes(svm_folder, tmp_path, data_root,
                                                                                capsys):
    """ISHate's cleaning left 8 test messages empty (a post that was only a link or a number; item 369 is the first):
    the classifier cannot be asked them, so each is an invalid answer, listed with the reason, and the run is
    complete (it used to fail them as requests on every rerun and exit 3)."""
    folder, _ = svm_folder
    output = tmp_path / "eval"
    assert main(["eval", "--tasks", "ishate_subtle", "--model", f"local:{folder}", "--model-args", "device=cpu",
                 "--output", str(output), "--limit", "370", "--no-progress", "--log-samples",
                 "--data-root", str(data_root)]) == 0
    result = json.loads((output / "results.json").read_text())["results"]["ishate_subtle"]
    assert result["complete"] and result["errors"] == 0 and result["n_items"] == 370
    assert result["unaskable"] == {"subtle-test-369": "local classifier: the item's text is empty (no text to "
                                                      "classify)"}
    assert result["invalid"] >= 1 and result["metrics"]["invalid"] == result["invalid"]
    rows = {row["item_id"]: row for row in map(json.loads, (output / "samples_ishate_subtle.jsonl").open())}
    assert rows["subtle-test-369"]["text"] == "" and rows["subtle-test-369"]["valid"] is False
    assert "unaskable" not in rows["subtle-test-368"] and rows["subtle-test-368"]["valid"]
    assert "1 invalid as the model cannot be asked them: subtle-test-369" in capsys.readouterr().out


def test_the_svm_head_embeds_on_scorings_fast_path_with_bars_for_embedding_and_fitting(tmp_path, data_root,
                                                                                       private_cache, monkeypatch,
                                                                                       capsys):
    """The encoder runs as `score` runs it (OpenVINO on a CPU, its precision as scoring's), recorded in the folder
    that predicts the same way; each embedding bar is drawn (0 of N texts) before the encoder sees a text and moves
    every step of scoring's chunk size, and the C values have their own bar (counts and ETA)."""
    from encoder_watch import watch_openvino_encoder

    from pragmeter import ImpScore

    calls, err = watch_openvino_encoder(monkeypatch, capsys, step=16)
    folder = tmp_path / "svm"
    assert main(["classifier", "train", "ishate-b", "--head", "svm", "--svm-c", "0.5,8", "--limit-train", "300",
                 "--limit-eval", "40", "--output", str(folder), "--device", "cpu", "--data-root", str(data_root)]) == 0
    err.append(capsys.readouterr().err)
    train_texts = len(set(ishate.build("subtle", root=data_root).train.head(300).texts))
    assert "embedding training (all-MiniLM-L6-v2, openvino " in err[0] and f"0/{train_texts}" in err[0]
    assert max(calls) <= 16 and len(calls) >= train_texts // 16
    whole = "".join(err)
    assert f"{train_texts}/{train_texts}" in whole and "embedding validation" in whole
    assert "fitting the svm (300 texts)" in whole and "2/2" in whole and "svm C=8: validation" in whole
    scoring = ImpScore.load("impscore-minilm")  # all-MiniLM-L6-v2 as `score` runs it here
    config = json.loads((folder / "config.json").read_text())
    assert (config["svm"]["backend"], config["svm"]["precision"]) == (scoring.backend, scoring.precision)
    reloaded = load_classifier(folder, "cpu")
    assert (reloaded.backend, reloaded.precision) == (scoring.backend, scoring.precision)


def test_bad_settings_and_folders_fail_in_one_line(tmp_path, capsys, svm_folder):
    assert main(["classifier", "train", "ishate-a", "--head", "svm", "--svm-c", "4,-1",
                 "--output", str(tmp_path / "x")]) != 0
    assert "--svm-c" in capsys.readouterr().err
    with pytest.raises(PragmeterError, match="single texts"):
        EmbeddingSVMClassifier(ClassifierSettings(LABELS, "all-MiniLM-L6-v2", 256, "pair"),
                               {}, 1.0, 1.0, "cpu")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text((svm_folder[0] / "config.json").read_text())
    (broken / "svm.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(PragmeterError, match="svm.safetensors: not readable safetensors"):
        load_classifier(broken)


def test_an_interrupted_fit_resumes_without_refitting_its_finished_c_values(tmp_path, capsys, data_root, monkeypatch):
    """A run stopped after C=0.5 (here: a run asked only for it, whose checkpoints are kept as an interrupted run's
    are; a finished run removes them) leaves a checkpoint; the full run in the same work folder reads C=0.5 from it,
    fits only C=8, and ends as a run from scratch does; other data are refused."""
    monkeypatch.setattr("pragmeter.classify.job.remove_checkpoints", lambda work_dir: None)
    def train(output: str, c_values: str, limit: str = "600", work: str = "work") -> int:
        return main(["classifier", "train", "ishate-b", "--head", "svm", "--svm-c", c_values, "--limit-train", limit,
                     "--limit-eval", "200", "--output", str(tmp_path / output), "--work-dir", str(tmp_path / work),
                     "--device", "cpu", "--no-progress", "--data-root", str(data_root)])

    assert train("first", "0.5") == 0
    first = json.loads((tmp_path / "first" / "metrics.json").read_text())
    capsys.readouterr()
    assert train("resumed", "0.5,8") == 0
    err = capsys.readouterr().err
    assert "svm C=0.5: fitted before" in err and "svm C=8: fitted before" not in err
    resumed = json.loads((tmp_path / "resumed" / "metrics.json").read_text())
    assert resumed["history"][0] == first["history"][0]  # train_seconds included: read, not refitted
    assert train("scratch", "0.5,8", work="fresh") == 0
    scratch = json.loads((tmp_path / "scratch" / "metrics.json").read_text())
    strip = lambda rows: [{k: v for k, v in row.items() if k != "train_seconds"} for row in rows]  # noqa: E731
    assert strip(resumed["history"]) == strip(scratch["history"]) and resumed["test"] == scratch["test"]
    assert (tmp_path / "resumed" / "svm.safetensors").read_bytes() == (tmp_path / "scratch" / "svm.safetensors").read_bytes()
    capsys.readouterr()
    assert train("other", "0.5", limit="500") == 2
    err = capsys.readouterr().err
    assert "holds checkpoints of a different run" in err and len(err.strip().splitlines()) == 1
