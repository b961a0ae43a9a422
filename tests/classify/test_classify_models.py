"""Fine-tuning on small real slices (CPU, seconds): loss falls, labels are valid, saved folders reload to the
same predictions, an interrupted run resumes, and the predict / drinq-nli / local-backend paths work."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from pragmeter.classify.job import run_recipe
from pragmeter.classify.model import TextClassifier, decide
from pragmeter.classify.recipes import inli, ishate
from pragmeter.classify.training import FineTuneConfig
from pragmeter.cli import main

# Few steps on CPU: a faster-learning head so that the loss visibly falls within 16 optimizer steps.
CONFIG = FineTuneConfig(epochs=4, batch_size=8, lr=2e-4, head_lr_scale=10, warmup_ratio=0.0, max_length=64,
                     eval_batch_size=64)


def mean_loss(classifier: TextClassifier, examples) -> float:
    probabilities = classifier.probabilities(examples.texts, examples.pairs)
    index = [classifier.labels.index(label) for label in examples.labels]
    return float(-np.log(probabilities[np.arange(len(index)), index]).mean())


@pytest.fixture(scope="module")
def inli_run(tmp_path_factory, data_root):
    """4-way INLI on 32 training rows, 4 epochs, interrupted after epoch 2 and resumed."""
    torch.set_num_threads(min(2, torch.get_num_threads()))  # at most two threads; one per xdist worker (conftest)
    data = inli.build("4way", root=data_root)
    data.train, data.val, data.test = data.train.head(32), data.val.head(16), data.test.head(32)
    folder = tmp_path_factory.mktemp("inli")
    output, work = folder / "model", folder / "work"
    assert run_recipe(data, "all-MiniLM-L6-v2", CONFIG, output, work, "cpu", "test", False, stop_after=2) is None
    state = json.loads((work / "state.json").read_text())
    info = run_recipe(data, "all-MiniLM-L6-v2", CONFIG, output, work, "cpu", "test", False)
    return data, output, state, info


def test_interrupted_run_resumes_without_losing_the_finished_epoch(inli_run):
    _, _, state, info = inli_run
    assert state["epochs_done"] == 2 and len(state["history"]) == 2
    assert [h["epoch"] for h in info["history"]] == [1, 2, 3, 4]
    assert info["history"][:2] == state["history"]  # the finished epochs were not retrained


def test_loss_falls_and_predictions_are_valid_labels(inli_run, data_root):
    data, output, _, info = inli_run
    losses = [h["train_loss"] for h in info["history"]]
    assert losses[-1] < losses[0] - 0.02, losses
    trained = TextClassifier.load(output, "cpu")
    untrained = TextClassifier.from_encoder("all-MiniLM-L6-v2", trained.settings, "cpu", seed=0)
    assert mean_loss(trained, data.train) < mean_loss(untrained, data.train)
    predictions = trained.predict(data.test.texts, data.test.pairs)
    assert len(predictions) == 32 and set(predictions) <= set(inli.LABELS)
    test = info["test"]
    assert sum(map(sum, test["confusion"]["counts"])) == 32 and test["confusion"]["labels"] == list(inli.LABELS)


def test_saved_model_reloads_to_identical_predictions(inli_run):
    data, output, _, info = inli_run
    files = {p.name for p in output.iterdir()}
    assert "model.safetensors" in files and not files & {"pytorch_model.bin", "training_args.bin"}
    config = json.loads((output / "config.json").read_text())["pragmeter"]
    assert config["labels"] == list(inli.LABELS) and config["base_encoder"] == "all-MiniLM-L6-v2"
    assert config["max_length"] == 64 and config["recipe"]["name"] == "inli"
    card = (output / "README.md").read_text()
    assert info["commit"] in card and "inli/INLI_Data/train.csv" in card and "Test metrics" in card
    from huggingface_hub import ModelCard

    hub = ModelCard.load(output / "README.md").data  # the front matter, as the Hub reads it
    assert (hub.license, hub.base_model, hub.datasets) == ("cc-by-sa-4.0", "sentence-transformers/all-MiniLM-L6-v2",
                                                           ["inli"])
    assert hub.pipeline_tag == "text-classification" and hub.metrics == ["accuracy", "f1"]
    assert hub.library_name == "transformers"
    first = TextClassifier.load(output, "cpu").probabilities(data.test.texts, data.test.pairs)
    second = TextClassifier.load(output, "cpu").probabilities(data.test.texts, data.test.pairs)
    assert np.array_equal(first, second)
    report = json.loads((output / "metrics.json").read_text())["test"]
    assert report["accuracy"] == pytest.approx(info["test"]["accuracy"])


def test_ishate_single_text_recipe_via_cli(tmp_path, data_root):
    output = tmp_path / "ishate"
    code = main(["classifier", "train", "ishate-a", "--output", str(output), "--augment", "local-eda", "--limit-train", "48",
                 "--limit-eval", "24", "--epochs", "1", "--max-length", "48", "--batch-size", "16", "--device", "cpu",
                 "--tune-decision-bias", "--no-progress", "--data-root", str(data_root)])
    assert code == 0
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["arguments"]["augment"] == "local-eda"
    assert set(metrics["test"]["precision_recall_f1"]) == {"non-hateful", "explicit", "implicit"}
    tuned = metrics["decision_bias"]
    assert tuned["val_after"] >= tuned["val_before"] and set(tuned["bias"]) == {"non-hateful", "explicit", "implicit"}
    assert set(tuned["test_without_bias"]["precision_recall_f1"]) == set(tuned["bias"])
    assert "Decision bias" in (output / "README.md").read_text()
    reloaded = TextClassifier.load(output, "cpu")
    assert reloaded.settings.decision_bias == tuned["bias"]  # the folder carries it: predict applies it
    texts = ishate.build("implicit", root=data_root).test.head(8).texts
    predictions = reloaded.predict(texts)
    assert predictions == decide(reloaded.probabilities(texts), reloaded.labels, tuned["bias"])
    assert set(predictions) <= {"non-hateful", "explicit", "implicit"}
    assert main(["classifier", "train", "ishate-a", "--output", str(output), "--limit-train", "8", "--device", "cpu"]) != 0


def test_predict_keeps_every_column(inli_run, tmp_path):
    data, output, _, _ = inli_run
    source = tmp_path / "pairs.csv"
    pd.DataFrame({"id": ["a", "b"], "premise": data.test.texts[:2], "hypothesis": data.test.pairs[:2],
                  "note": ["x", "y"]}).to_csv(source, index=False)
    target = tmp_path / "out.jsonl"
    assert main(["classifier", "predict", "--model", str(output), "--input", str(source), "--output", str(target),
                 "--device", "cpu", "--no-progress"]) == 0
    out = pd.read_json(target, lines=True)
    assert list(out.columns[:4]) == ["id", "premise", "hypothesis", "note"] and list(out["id"]) == ["a", "b"]
    assert set(out["prediction"]) <= set(inli.LABELS)
    assert np.allclose(out[[f"p_{label}" for label in inli.LABELS]].sum(axis=1), 1.0, atol=1e-5)
    assert main(["classifier", "predict", "--model", str(output), "--input", str(source), "--output", str(tmp_path / "o.csv"),
                 "--column", "note", "--premise-column", "nope", "--device", "cpu"]) != 0


def test_predict_notes_rows_longer_than_the_token_limit(inli_run, tmp_path, capsys):
    data, output, _, _ = inli_run  # the folder's limit: 64 tokens (CONFIG)
    source = tmp_path / "pairs.csv"
    pd.DataFrame({"premise": ["It is cold in here.", " ".join(data.test.texts[:20])],
                  "hypothesis": ["The speaker wants the window closed."] * 2}).to_csv(source, index=False)
    assert main(["classifier", "predict", "--model", str(output), "--input", str(source), "--output", str(tmp_path / "o.csv"),
                 "--device", "cpu", "--no-progress"]) == 0
    assert "note: 1 row(s) exceeded the classifier's token limit and were truncated" in capsys.readouterr().err
    assert len(pd.read_csv(tmp_path / "o.csv")["prediction"].dropna()) == 2  # both labelled all the same


def test_drinq_nli_reports_accuracy_with_ci(inli_run, tmp_path, data_root):
    _, output, _, _ = inli_run
    results = tmp_path / "drinq.json"
    assert main(["classifier", "drinq-nli", "--model", str(output), "--limit", "12", "--output", str(results), "--device", "cpu",
                 "--no-progress", "--data-root", str(data_root)]) == 0
    payload = json.loads(results.read_text())
    assert payload["n"] == 12
    for name in ("consensus", "implied_comment"):
        low, high = payload[name]["ci95"]
        assert 0 <= low <= payload[name]["accuracy"] <= high <= 1


def test_local_backend_scores_inli_in_the_harness_format(inli_run, tmp_path, data_root):
    _, output, _, _ = inli_run
    assert main(["eval", "--tasks", "inli", "--model", f"local:{output}", "--model-args", "device=cpu,batch_size=8",
                 "--output", str(tmp_path), "--limit", "8", "--no-progress", "--data-root", str(data_root)]) == 0
    payload = json.loads((tmp_path / "results.json").read_text())
    result = payload["results"]["inli"]
    assert payload["model"]["backend"] == "local" and result["n_items"] == 8
    assert result["invalid"] == 0 and result["errors"] == 0  # every answer parsed as an INLI label
    direct = TextClassifier.load(output, "cpu")
    items = inli.split_examples("test", "4way", None, data_root).head(8)
    expected = direct.predict(items.texts, items.pairs)
    counts = np.array(result["metrics"]["confusion"]["counts"])
    assert counts.sum() == 8
    predicted = {label: int(counts[:, i].sum()) for i, label in enumerate(inli.LABELS)}
    assert predicted == {label: expected.count(label) for label in inli.LABELS}
