"""One model folder runs one way whichever command opens it: `interpret`, `classifier predict`, the `local:` backend of
`eval` and the service's `/interpret` resolve its runtime once, the same way (classify.opening.open_classifier), say
the same runtime signature and give the same probabilities. A tiny NLI cross-encoder written here is the folder."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pragmeter.cli import main
from pragmeter.testing.tiny_nli import tiny_nli_folder

PAIRS = [('Ann offers Bob a coffee at eleven at night. "It would keep me awake."', "Bob does not want a coffee."),
         ('Ann offers Bob a coffee at eleven at night. "It would keep me awake."', "Bob wants a coffee."),
         ("A man sleeps on a bench.", "A person rests."),
         ("Two dogs run in the snow.", "The animals are inside."),
         ("Is it cold in here?", "Please close the window.")]
LABELS = ["contradiction", "entailed", "neutral"]  # the tiny folder's MNLI labels by pragmeter's names


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_nli_folder(tmp_path_factory.mktemp("nli") / "tiny-nli")


@pytest.fixture(scope="module")
def pairs_table(tmp_path_factory):
    path = tmp_path_factory.mktemp("table") / "pairs.csv"
    pd.DataFrame({"premise": [p for p, _ in PAIRS], "hypothesis": [h for _, h in PAIRS]}).to_csv(path, index=False)
    return path


def said_signature(stderr: str, prefix: str) -> str:
    """The runtime signature a command said on stderr (``PREFIX NAME: backend=…``)."""
    lines = [line for line in stderr.splitlines() if line.startswith(prefix) and "backend=" in line]
    assert len(lines) == 1, stderr
    return lines[0][lines[0].index("backend="):]


def probabilities_of(path) -> np.ndarray:
    return pd.read_csv(path)[[f"p_{label}" for label in LABELS]].to_numpy(dtype=np.float64)


def test_interpret_predict_local_and_the_service_run_one_folder_one_way(folder, pairs_table, onnx_model, tmp_path,
                                                                       capsys):
    from fastapi.testclient import TestClient

    from pragmeter.interpreter.model import Interpreter
    from pragmeter.llm.backends import load_backend
    from pragmeter.serve.app import create_app
    from pragmeter.serve.limits import Limits
    from pragmeter.serve.server import service_interpreter

    # how the library resolves it, the reference every command must say
    expected = Interpreter.load(folder, progress=False).runtime.signature()

    capsys.readouterr()
    assert main(["interpret", "--input", str(pairs_table), "--output", str(tmp_path / "interpret.csv"), "--model",
                 str(folder), "--no-progress"]) == 0
    interpret = said_signature(capsys.readouterr().err, "interpreter ")
    assert main(["classifier", "predict", "--model", str(folder), "--input", str(pairs_table), "--output",
                 str(tmp_path / "predict.csv"), "--no-progress"]) == 0
    predict = said_signature(capsys.readouterr().err, "classifier ")
    assert interpret == predict == expected
    by_interpret, by_predict = probabilities_of(tmp_path / "interpret.csv"), probabilities_of(tmp_path / "predict.csv")
    assert np.abs(by_interpret - by_predict).max() <= 1e-5
    assert (pd.read_csv(tmp_path / "interpret.csv")["prediction"] == pd.read_csv(tmp_path / "predict.csv")
            ["prediction"]).all()

    local = load_backend(f"local:{folder}", {})  # eval --model local:FOLDER, no model arguments
    assert local.runtime.signature() == local.settings()["runtime_signature"] == expected
    by_local = local.classifier.probabilities([p for p, _ in PAIRS], [h for _, h in PAIRS])
    assert np.abs(by_local - by_interpret).max() <= 1e-5

    reader = service_interpreter(str(folder))  # as `pragmeter serve --interpreter FOLDER` loads it
    limits = Limits(max_texts=16, max_chars=300, max_body_bytes=8000)
    with TestClient(create_app(onnx_model, limits, max_wait_ms=50, interpreter=reader)) as client:
        assert client.get("/version").json()["interpreter"]["runtime"] == expected
        body = client.post("/interpret", json={"pairs": [list(pair) for pair in PAIRS]}).json()
    assert body["labels"] == LABELS
    assert np.abs(np.asarray(body["probabilities"]) - by_interpret).max() <= 1e-5


def test_eval_local_records_the_runtime_interpret_says(folder, tmp_path, data_root):
    from pragmeter.interpreter.model import Interpreter

    assert main(["eval", "--tasks", "inli", "--model", f"local:{folder}", "--output", str(tmp_path), "--limit", "3",
                 "--no-progress", "--data-root", str(data_root)]) == 0
    model = json.loads((tmp_path / "results.json").read_text())["model"]
    runtime = Interpreter.load(folder, progress=False).runtime
    assert model["runtime_signature"] == runtime.signature()
    assert model["runtime"] == f"{runtime.backend} {runtime.precision}"  # what keys its answers in the cache


def test_a_classifier_that_is_not_an_interpreter_runs_through_torch_and_says_so(tmp_path, capsys):
    """A single-text classifier: torch on the device asked for, in the precision resolve_runtime gives torch there,
    said as the interpreter's runtime is; OpenVINO is refused naming the parameter."""
    from pragmeter.classify.opening import open_classifier
    from pragmeter.classify.model import ClassifierSettings, TextClassifier
    from pragmeter.errors import InvalidParameter

    settings = ClassifierSettings(["no", "yes"], "all-MiniLM-L6-v2", 32, "single")
    TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu").save(tmp_path / "model", "card")
    table = tmp_path / "texts.csv"
    pd.DataFrame({"text": ["It would keep me awake.", "Yes."]}).to_csv(table, index=False)
    classifier, runtime = open_classifier(tmp_path / "model", device="cpu")
    assert (runtime.backend, runtime.precision, runtime.device) == ("torch", "fp32", "cpu")
    assert classifier.runtime == runtime and classifier.precision == "fp32"
    capsys.readouterr()
    assert main(["classifier", "predict", "--model", str(tmp_path / "model"), "--input", str(table), "--output",
                 str(tmp_path / "out.csv"), "--device", "cpu", "--no-progress"]) == 0
    assert said_signature(capsys.readouterr().err, "classifier ") == runtime.signature()
    with pytest.raises(InvalidParameter, match="backend='openvino': only an interpreter runs through OpenVINO"):
        open_classifier(tmp_path / "model", backend="openvino", device="cpu")
