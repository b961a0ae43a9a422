"""The interpreter among sentence-transformers and the Hugging Face Hub: any NLI cross-encoder folder opens as an
interpreter (tiny random-weight BERT models written here, with the installed MiniLM tokenizer), training starts from
one, `Interpreter.save` writes a folder `CrossEncoder` opens to the same probabilities, the CrossEncoder-style
`predict` and `rank`, and the cards' front matter as the Hub reads it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from pragmeter.errors import PragmeterError
from pragmeter.interpreter.model import Interpreter, premise
from pragmeter.testing.tiny_nli import tiny_nli_folder as nli_folder

CONTEXT = "Ann offers Bob a coffee at eleven at night."
UTTERANCE = "It would keep me awake."
READINGS = ["Bob does not want a coffee.", "Bob wants a coffee.", "Bob likes tea.", "It is late."]
PAIRS = [(premise(CONTEXT, UTTERANCE), reading) for reading in READINGS] + [
    ("A man is sleeping on a bench in the park.", "A person rests outside."),
    ("Two dogs run across a snowy field, chasing a ball that a child threw.", "The animals are indoors.")]


@pytest.fixture(scope="module")
def three_way(tmp_path_factory):
    """A 3-way NLI folder in the labels' Hub spelling (MNLI cross-encoders: contradiction, entailment, neutral)."""
    return nli_folder(tmp_path_factory.mktemp("nli") / "tiny-nli")


def test_a_plain_3way_nli_folder_is_an_interpreter_scoring_p_entailed(three_way):
    model = Interpreter.load(three_way, device="cpu", backend="torch")
    assert model.labels == ["contradiction", "entailed", "neutral"] and model.meant_labels == ["entailed"]
    assert model.settings.input_kind == "pair" and model.settings.max_length == 128  # its position embeddings
    probabilities = model.predict(PAIRS)
    assert probabilities.shape == (len(PAIRS), 3) and np.allclose(probabilities.sum(1), 1, atol=1e-5)
    assert len({tuple(np.round(row, 6)) for row in probabilities}) == len(PAIRS)  # the pairs are read, not ignored
    scores = model.scores(CONTEXT, UTTERANCE, READINGS)
    assert scores == pytest.approx(probabilities[:len(READINGS), 1].tolist(), abs=1e-6)  # P(entailed)
    assert model.choose(CONTEXT, UTTERANCE, READINGS) == int(np.argmax(scores))


def test_rank_sorts_readings_as_crossencoder_rank_does_and_scores_keep_the_order(three_way):
    model = Interpreter.load(three_way, device="cpu", backend="torch")
    scores = model.scores(CONTEXT, UTTERANCE, READINGS)
    ranked = model.rank(CONTEXT, UTTERANCE, READINGS)
    assert [entry["corpus_id"] for entry in ranked] == sorted(range(len(READINGS)), key=lambda i: -scores[i])
    assert all(entry["text"] == READINGS[entry["corpus_id"]] and entry["score"] == scores[entry["corpus_id"]]
               for entry in ranked)
    assert [entry["score"] for entry in ranked] == sorted(scores, reverse=True)
    assert model.rank(CONTEXT, UTTERANCE, READINGS, top_k=2) == ranked[:2]
    assert ranked[0]["corpus_id"] == model.choose(CONTEXT, UTTERANCE, READINGS)
    with pytest.raises(PragmeterError, match="top_k must be a positive whole number"):
        model.rank(CONTEXT, UTTERANCE, READINGS, top_k=0)
    with pytest.raises(PragmeterError, match="pair 1: not a \\(premise, hypothesis\\) pair"):
        model.predict([("a", "b"), ("c",)])
    with pytest.raises(PragmeterError, match="not one string"):
        model.predict("a premise")
    with pytest.raises(PragmeterError, match="readings must be a list of texts"):
        model.scores(CONTEXT, UTTERANCE, "one reading")


def test_inli_four_labels_in_any_case_read_as_today(tmp_path):
    folder = nli_folder(tmp_path / "inli", ["Implied", "EXPLICIT", "neutral", "contradiction"])
    model = Interpreter.load(folder, device="cpu", backend="torch")
    assert model.meant_labels == ["implied", "explicit"]
    rows = model.predict(PAIRS[:3])
    assert model.scores(CONTEXT, UTTERANCE, READINGS[:3]) == pytest.approx((rows[:, 0] + rows[:, 1]).tolist(), abs=1e-6)


def test_a_4way_folder_without_words_of_its_own_answers_inli_in_the_task_s_words(tmp_path, data_root):
    """A plain folder with INLI's four labels (no answer words recorded) run by `pragmeter eval` on INLI: each answer
    is the word the task parses as the label the model decided, so none is invalid."""
    from pragmeter.cli import main
    from pragmeter.datasets.inli import load_inli

    folder = nli_folder(tmp_path / "inli-4way", ["implied", "explicit", "neutral", "contradiction"])
    assert main(["eval", "--tasks", "inli", "--task-arg", "inli.split=val", "--model", f"local:{folder}",
                 "--model-args", "backend=torch,precision=fp32", "--output", str(tmp_path / "out"), "--limit", "6",
                 "--log-samples", "--no-progress", "--data-root", str(data_root)]) == 0
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples_inli.jsonl").read_text().splitlines()]
    words = {"implied": "Implicature", "explicit": "Explicature", "neutral": "Neutral", "contradiction": "Contradiction"}
    items = {f"val-{i.row}-{i.label}": i for i in load_inli("val", data_root)}
    asked = [items[s["item_id"]] for s in samples]
    rows = Interpreter.load(folder, backend="torch", precision="fp32").predict([(i.premise, i.hypothesis) for i in asked])
    assert len(samples) == 6 and all(s["valid"] for s in samples)
    assert [s["response"] for s in samples] == [words[["implied", "explicit", "neutral", "contradiction"][int(k)]]
                                                for k in rows.argmax(axis=1)]


def test_answers_cached_in_another_form_are_asked_again(tmp_path, data_root, monkeypatch):
    """A response cache written when a 4-way folder answered INLI in its bare labels (all invalid to the task) is not
    replayed: the backend's identity names the form its answers take, so those entries miss and are asked again."""
    from pragmeter.classify.backend import LocalClassifierBackend
    from pragmeter.cli import main
    from pragmeter.eval.classification import ClassificationTask
    from pragmeter.eval.task import Task

    folder = nli_folder(tmp_path / "inli-4way", ["implied", "explicit", "neutral", "contradiction"])
    output = tmp_path / "out"

    def run() -> tuple[list[dict], int]:
        assert main(["eval", "--tasks", "inli", "--task-arg", "inli.split=val", "--model", f"local:{folder}",
                     "--model-args", "backend=torch,precision=fp32", "--output", str(output), "--limit", "6",
                     "--log-samples", "--no-progress", "--overwrite", "--data-root", str(data_root)]) == 0
        samples = [json.loads(line) for line in (output / "samples_inli.jsonl").read_text().splitlines()]
        return samples, json.loads((output / "results.json").read_text())["results"]["inli"]["cache_hits"]

    # the earlier form: no answer text in the request (bare labels), and an identity without the answer form
    identity = LocalClassifierBackend.identity
    with monkeypatch.context() as patch:
        patch.setattr(ClassificationTask, "request", Task.request)
        patch.setattr(LocalClassifierBackend, "identity",
                      lambda self: {k: v for k, v in identity(self).items() if k != "answers"})
        old, _ = run()
    assert {s["response"] for s in old} <= {"implied", "explicit", "neutral", "contradiction"}
    assert not any(s["valid"] for s in old)
    assert (output / "cache" / "responses.jsonl").read_text().count("\n") == 6
    samples, hits = run()
    assert hits == 0 and len(samples) == 6 and all(s["valid"] for s in samples)
    assert run()[1] == 6  # the answers in the current form are cached as usual


@pytest.mark.parametrize("labels, problem", [
    (["LABEL_0", "LABEL_1", "LABEL_2"], "are not NLI's labels"),  # a classifier without label names
    (["positive", "negative"], "are not NLI's labels"),
    (["entailment", "ENTAILED", "neutral"], "are not NLI's labels"),  # two names for one label
])
def test_a_plain_folder_without_nli_labels_is_refused_naming_its_config(tmp_path, labels, problem):
    folder = nli_folder(tmp_path / "other", labels)
    with pytest.raises(PragmeterError, match=f"{folder / 'config.json'}.*{problem}"):
        Interpreter.load(folder, device="cpu", backend="torch")


def test_an_entailment_only_model_is_not_an_interpreter(tmp_path):
    folder = nli_folder(tmp_path / "one", ["entailment", "implied"])  # every label meant: nothing to rank against
    with pytest.raises(PragmeterError, match="is not an interpreter"):
        Interpreter.load(folder, device="cpu", backend="torch")


def test_a_hub_name_without_a_connection_is_one_line(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(PragmeterError, match="no interpreter at 'cross-encoder/nli-none-such'.*Hugging Face Hub"):
        Interpreter.load("cross-encoder/nli-none-such", device="cpu", backend="torch")


def test_saved_folder_opens_in_crossencoder_with_the_same_probabilities(three_way, tmp_path):
    from huggingface_hub import ModelCard
    from sentence_transformers import CrossEncoder

    model = Interpreter.load(three_way, device="cpu", backend="torch")
    model.save(tmp_path / "export")
    expected = model.predict(PAIRS)
    cross = CrossEncoder(str(tmp_path / "export"), device="cpu")
    assert np.abs(cross.predict(PAIRS, apply_softmax=True) - expected).max() <= 1e-5
    assert cross.max_seq_length == 128  # truncated where the interpreter truncates
    again = Interpreter.load(tmp_path / "export", device="cpu", backend="torch")
    assert again.labels == model.labels and np.abs(again.predict(PAIRS) - expected).max() <= 1e-6
    config = json.loads((tmp_path / "export" / "config.json").read_text())
    assert config["id2label"] == {"0": "contradiction", "1": "entailed", "2": "neutral"}
    card = ModelCard.load(tmp_path / "export" / "README.md")
    assert card.data.library_name == "sentence-transformers" and card.data.pipeline_tag == "text-classification"
    assert "CrossEncoder" in card.text and card.text.lstrip().startswith("# tiny-nli")


def test_the_shipped_default_exports_to_a_crossencoder_folder_with_the_same_probabilities(tmp_path):
    """fp32 on the CPU: our probabilities of the packaged interpreter and CrossEncoder's of its export, within
    1e-5; the export's card carries the default's licence, base model and data."""
    from huggingface_hub import ModelCard
    from sentence_transformers import CrossEncoder

    default = Interpreter.load(device="cpu", precision="fp32", backend="torch")
    default.save(tmp_path / "export")
    files = {path.name for path in (tmp_path / "export").iterdir()}
    assert {"model.safetensors", "config.json", "README.md"} <= files and not any(
        name.startswith("encoder-") for name in files)
    cross = CrossEncoder(str(tmp_path / "export"), device="cpu")
    long_pair = [(" ".join(["It would keep me awake all night."] * 40), READINGS[0])]  # past 128 tokens: truncated
    ours = default.predict(PAIRS + long_pair)
    assert np.abs(cross.predict(PAIRS + long_pair, apply_softmax=True) - ours).max() <= 1e-5
    card = ModelCard.load(tmp_path / "export" / "README.md")
    # the default has read sets of several licences: "other", each named in the card's text
    assert card.data.license == "other" and card.data.base_model == f"sentence-transformers/{default.settings.base_encoder}"
    assert {"inli", "circa", "sick", "imppres"} <= set(card.data.datasets) and "Written by an LLM" in card.text
    assert "CC BY-NC" in card.text


def test_training_starts_from_an_nli_cross_encoder_with_its_head(three_way):
    """A 4-way INLI classifier built on a 3-way NLI folder starts from its encoder and its head: implied and explicit
    from the entailment row, neutral and contradiction from theirs."""
    from safetensors.torch import load_file

    from pragmeter.classify.model import ClassifierSettings, TextClassifier

    settings = ClassifierSettings(labels=["implied", "explicit", "neutral", "contradiction"],
                                  base_encoder=str(three_way), max_length=64, input_kind="pair")
    built = TextClassifier.from_encoder(str(three_way), settings, "cpu", seed=1)
    source = load_file(str(three_way / "model.safetensors"))
    for name in ("classifier.weight", "classifier.bias"):
        rows = built.model.state_dict()[name]
        assert [torch.equal(rows[i], source[name][j]) for i, j in enumerate([1, 1, 2, 0])] == [True] * 4
    encoder = {k: v for k, v in built.model.state_dict().items() if k.startswith("bert.")}
    assert all(torch.equal(v, source[k]) for k, v in encoder.items() if k in source)


def test_classifier_train_inli_runs_from_an_nli_folder(three_way, tmp_path, data_root):
    from huggingface_hub import ModelCard

    from pragmeter.classify.job import run_recipe
    from pragmeter.classify.recipes import inli
    from pragmeter.classify.training import FineTuneConfig

    data = inli.build("3way", root=data_root)
    data.train, data.val, data.test = data.train.head(8), data.val.head(8), data.test.head(8)
    run_recipe(data, str(three_way), FineTuneConfig(epochs=1, batch_size=4, max_length=64, eval_batch_size=8),
               tmp_path / "model", tmp_path / "work", "cpu", "test", False)
    trained = Interpreter.load(tmp_path / "model", device="cpu", backend="torch")
    assert trained.labels == ["entailed", "neutral", "contradiction"] and trained.meant_labels == ["entailed"]
    card = ModelCard.load(tmp_path / "model" / "README.md")
    assert card.data.license == "cc-by-sa-4.0" and card.data.datasets == ["inli"]
    assert card.data.library_name == "transformers" and card.data.metrics == ["accuracy", "f1"]


def test_interpret_export_and_ship_commands(three_way, tmp_path, capsys):
    from sentence_transformers import CrossEncoder

    from pragmeter.cli import main

    assert main(["interpret", "export", "--model", str(three_way), "--output", str(tmp_path / "export")]) == 0
    expected = Interpreter.load(three_way, device="cpu", backend="torch").predict(PAIRS)
    assert np.abs(CrossEncoder(str(tmp_path / "export"), device="cpu").predict(PAIRS, apply_softmax=True)
                  - expected).max() <= 1e-5
    capsys.readouterr()
    assert main(["interpret", "export", "--model", str(three_way), "--output", str(tmp_path / "export")]) == 2
    assert "exists; give --overwrite" in capsys.readouterr().err
    # ship takes a trained INLI run: a plain NLI folder has no base encoder to write changes over
    assert main(["interpret", "ship", str(three_way), "--output", str(tmp_path / "shipped")]) == 2
    assert "config.json: not an INLI run" in capsys.readouterr().err and not (tmp_path / "shipped").exists()
    # the utterance form is unchanged beside the actions
    assert main(["interpret", UTTERANCE, "--context", CONTEXT, "--reading", READINGS[0], "--reading", READINGS[1],
                 "--model", str(three_way), "--backend", "torch", "--device", "cpu"]) == 0
    assert READINGS[1] in capsys.readouterr().out


def test_a_plain_nli_folder_runs_through_openvino_as_through_torch(three_way, private_cache, tmp_path):
    """``auto`` on a CPU converts the cross-encoder to an OpenVINO graph, as it does pragmeter's own folders."""
    from pragmeter.encoders.runtime import FP32_MAX_ABS_DIFF

    fast = Interpreter.load(three_way, precision="fp32", progress=False)
    assert fast.runtime.backend == "openvino" and fast.labels == ["contradiction", "entailed", "neutral"]
    plain = Interpreter.load(three_way, device="cpu", precision="fp32", backend="torch")
    assert np.abs(fast.predict(PAIRS) - plain.predict(PAIRS)).max() < FP32_MAX_ABS_DIFF
    fast.save(tmp_path / "export")  # from the torch model of its folder
    assert np.abs(Interpreter.load(tmp_path / "export", device="cpu", backend="torch").predict(PAIRS)
                  - plain.predict(PAIRS)).max() <= 1e-6


def test_a_hub_name_in_the_hugging_face_cache_opens_and_trains_as_its_folder(three_way, tmp_path):
    """Offline, with the model in the Hugging Face cache (laid out as a download leaves it): `Interpreter.load` and
    a classifier built on the Hub name read it, the new head started from its rows (a fresh process, so that the
    cache location is read from the environment as at any start)."""
    import os
    import shutil
    import subprocess
    import sys

    snapshot = tmp_path / "hub" / "models--owner--tiny-nli" / "snapshots" / "0123abcd"
    shutil.copytree(three_way, snapshot)
    (tmp_path / "hub" / "models--owner--tiny-nli" / "refs").mkdir()
    (tmp_path / "hub" / "models--owner--tiny-nli" / "refs" / "main").write_text("0123abcd")
    code = (
        "import torch\n"
        "from safetensors.torch import load_file\n"
        "from pragmeter.interpreter.model import Interpreter\n"
        "from pragmeter.classify.model import ClassifierSettings, TextClassifier\n"
        "m = Interpreter.load('owner/tiny-nli', device='cpu', backend='torch')\n"
        "print(m.labels, round(float(m.predict([('A man sleeps.', 'A person rests.')])[0, 1]), 6))\n"
        "s = ClassifierSettings(labels=['implied', 'explicit', 'neutral', 'contradiction'], base_encoder='x',"
        " max_length=64, input_kind='pair')\n"
        "built = TextClassifier.from_encoder('owner/tiny-nli', s, 'cpu')\n"
        f"source = load_file({str(three_way / 'model.safetensors')!r})['classifier.weight']\n"
        "print(torch.equal(built.model.classifier.weight[0], source[1]))\n")
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2] / "src"),
                                                       os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    expected = Interpreter.load(three_way, device="cpu", backend="torch").predict([("A man sleeps.", "A person rests.")])
    assert run.stdout.splitlines() == [f"['contradiction', 'entailed', 'neutral'] {round(float(expected[0, 1]), 6)}",
                                       "True"]
