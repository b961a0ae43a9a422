"""The interpreter's multi-source recipe: how each set's labels meet INLI's four, Circa's development split kept
out of training, and a stage that starts from another run's weights refusing weights that do not fit."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from pragmeter.classify.job import start_from
from pragmeter.classify.model import ClassifierSettings, TextClassifier
from pragmeter.classify.recipes.interpreter import (CIRCA_DEV_ITEMS, YesNoItem, build, circa_examples, circa_items,
                                                    general_examples)
from pragmeter.errors import PragmeterError

INLI_LABELS = {"implied", "explicit", "neutral", "contradiction"}


def test_general_sets_meet_inli_labels(data_root):
    examples = general_examples(cap=40, root=data_root)
    by_source = {}
    for source, label in zip(examples.groups, examples.labels):
        by_source.setdefault(source, Counter())[label] += 1
    assert set(examples.labels) <= INLI_LABELS
    assert set(by_source) == {"taxinli", "esnli", "cad_nli", "sick", "conjnli", "med", "help", "monli", "scone",
                              "imppres_presupposition", "imppres_implicature"}  # DNC's 2-way "no" is not read
    assert by_source["imppres_implicature"]["implied"] > 0 and "explicit" not in by_source["imppres_implicature"]
    assert by_source["taxinli"]["explicit"] > 0 and "implied" not in by_source["taxinli"]
    assert sum(by_source["esnli"].values()) == 80  # the cap is per split: dev and test
    assert general_examples(cap=40, root=data_root).texts == examples.texts  # seeded
    with pytest.raises(PragmeterError, match="unknown family"):
        general_examples(("nli", "sarcasm"), root=data_root)


def test_circa_development_split_never_trains(data_root):
    train, dev = circa_items(data_root)
    assert len({item.premise for item in dev}) == CIRCA_DEV_ITEMS
    assert not {item.premise for item in train} & {item.premise for item in dev}
    assert {item.label for item in train + dev} == {"yes", "no"}
    data = build("pragmatic", sources=("circa",), circa_cap=50, root=data_root)
    assert not set(data.train.texts) & {item.premise for item in dev}
    assert set(data.train.labels) <= INLI_LABELS and data.val.labels and data.arguments["stage"] == "pragmatic"


def test_each_circa_item_gives_its_statement_and_both_bare_answers():
    items = [YesNoItem('Do you like pizza? "I eat it every day."', "You like pizza.", "yes"),
             YesNoItem('Are you free tonight? "I have to work."', "You are free tonight.", "no")]
    examples = circa_examples(items, cap=None)
    assert list(zip(examples.pairs, examples.labels)) == [
        ("You like pizza.", "implied"), ("yes", "implied"), ("no", "contradiction"),
        ("You are free tonight.", "contradiction"), ("no", "implied"), ("yes", "contradiction")]


@pytest.fixture(scope="module")
def classifier():
    settings = ClassifierSettings(labels=["implied", "explicit", "neutral", "contradiction"],
                                  base_encoder="all-MiniLM-L6-v2", max_length=32, input_kind="pair")
    return TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu")


def test_a_stage_starts_from_a_fitting_run_only(classifier, tmp_path):
    source = tmp_path / "run"
    with torch.no_grad():
        classifier.model.classifier.bias.fill_(0.25)
    classifier.save(source, card="test")
    with torch.no_grad():
        classifier.model.classifier.bias.zero_()
    start_from(classifier, source)
    assert torch.allclose(classifier.model.classifier.bias, torch.full((4,), 0.25))

    from safetensors.torch import load_file, save_file

    weights = load_file(source / "model.safetensors")
    weights["classifier.bias"] = torch.tensor([float("nan"), 0.0, 0.0, 0.0])
    save_file(weights, source / "model.safetensors")
    with pytest.raises(PragmeterError, match="NaN or infinity"):
        start_from(classifier, source)
    weights["classifier.bias"] = torch.zeros(3)
    save_file(weights, source / "model.safetensors")
    with pytest.raises(PragmeterError, match="not those of a all-MiniLM-L6-v2 classifier"):
        start_from(classifier, source)
    import json

    config = json.loads((source / "config.json").read_text())
    config["pragmeter"]["labels"] = ["entailed", "neutral", "contradiction", "other"]
    (source / "config.json").write_text(json.dumps(config))
    with pytest.raises(PragmeterError, match="differ from the recipe's"):
        start_from(classifier, source)
