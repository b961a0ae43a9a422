"""Weight averaging of two classifier runs (``classify/average.py``, ``experiments/interpreter_average.py``): each
tensor is the weighted mean, the average is recorded in the recipe and on the shipped card, and folders that do not
fit are refused with a message naming them."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from pragmeter.classify.average import average_weights
from pragmeter.classify.model import ClassifierSettings, TextClassifier
from pragmeter.errors import PragmeterError

LABELS = ["implied", "explicit", "neutral", "contradiction"]


def _run(folder, bias: float, labels=LABELS, command="python experiments/interpreter_multisource.py --variant x"):
    settings = ClassifierSettings(labels=list(labels), base_encoder="all-MiniLM-L6-v2", max_length=32,
                                  input_kind="pair", recipe={"name": "interpreter", "stage": "pragmatic"})
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu", seed=0)
    with torch.no_grad():
        classifier.model.classifier.bias.fill_(bias)
        for parameter in classifier.model.parameters():
            parameter.add_(bias / 100)
    # as a training run writes its metrics: the command and the settings (with the recipe) a shipped card reads
    classifier.save(folder, f"card of {folder.name}", {"command": command, "settings": {"recipe": dict(settings.recipe)}})
    return folder


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return _run(root / "first", 0.0), _run(root / "second", 1.0)


def test_each_weight_is_the_weighted_mean_and_the_average_is_recorded(runs, tmp_path):
    first, second = runs
    record = average_weights(first, second, tmp_path / "avg", share=0.25, command="python average.py")
    a, b, mixed = (load_file(f / "model.safetensors") for f in (first, second, tmp_path / "avg"))
    assert set(mixed) == set(a)
    for name in a:
        if torch.is_floating_point(a[name]):
            torch.testing.assert_close(mixed[name], 0.75 * a[name] + 0.25 * b[name])
    assert any(not torch.equal(a[name], b[name]) for name in a)  # the two runs differ: the mean is not a copy
    recipe = json.loads((tmp_path / "avg" / "config.json").read_text())["pragmeter"]["recipe"]
    assert recipe["average"] == record and record["folder"] == "first" and record["share"] == 0.75
    assert len(record["sha256"]) == 64
    metrics = json.loads((tmp_path / "avg" / "metrics.json").read_text())
    assert metrics["command"].splitlines() == ["python experiments/interpreter_multisource.py --variant x",
                                               "python average.py"]
    assert metrics["settings"]["recipe"]["average"] == record  # what a shipped card is written from
    assert not (tmp_path / "avg" / "README.md").exists()  # the second run's card describes another folder
    loaded = TextClassifier.load(tmp_path / "avg", "cpu", "fp32")  # a classifier folder like any other
    assert loaded.labels == LABELS


def test_the_shipped_card_says_the_weights_are_an_average():
    from pragmeter.classify.card import multi_source_data

    text = multi_source_data({"stage": "pragmatic", "sources": [], "init_from": {"folder": "base"},
                              "average": {"folder": "base", "sha256": "0" * 64, "share": 0.5}})
    assert "then averaged with those of `base` (`classify/average.py`: each weight 50% theirs" in text
    assert "averaged" not in multi_source_data({"stage": "pragmatic", "sources": []})


def test_folders_that_do_not_fit_are_refused_by_name(runs, tmp_path):
    first, second = runs
    other = _run(tmp_path / "other-labels", 0.5, labels=["entailed", "neutral", "contradiction", "x"])
    with pytest.raises(PragmeterError, match="different labels"):
        average_weights(first, other, tmp_path / "out")
    with pytest.raises(PragmeterError, match="share must be between 0 and 1"):
        average_weights(first, second, tmp_path / "out", share=1.0)
    with pytest.raises(PragmeterError, match=f"{tmp_path / 'missing'}: not a classifier folder"):
        average_weights(tmp_path / "missing", second, tmp_path / "out")
    head = load_file(second / "model.safetensors")
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "config.json").write_text((second / "config.json").read_text())
    from safetensors.torch import save_file
    save_file({k: v for k, v in list(head.items())[1:]}, str(cut / "model.safetensors"))
    with pytest.raises(PragmeterError, match="hold different tensors"):
        average_weights(first, cut, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written when refused


def test_the_script_writes_the_average_and_answers_a_bad_folder_in_one_line(runs, tmp_path, run_as_main):
    """The smoke test of experiments/interpreter_average.py."""
    from pathlib import Path

    script = Path(__file__).parents[2] / "experiments" / "interpreter_average.py"
    first, second = runs
    out = run_as_main(script, str(first), str(second), "--output", str(tmp_path / "avg"))
    assert json.loads(out.strip().splitlines()[-1])["average"]["share"] == 0.5
    assert "interpreter_average.py" in json.loads((tmp_path / "avg" / "metrics.json").read_text())["command"]
    import runpy

    main = runpy.run_path(str(script))["main"]
    with pytest.raises(SystemExit, match="interpreter_average: error: .*nothing: not a classifier folder"):
        main([str(tmp_path / "nothing"), str(second), "--output", str(tmp_path / "x")])
