"""An epoch of hours (a base-size encoder on two CPU cores) must survive an interruption: with ``checkpoint_every``
the work folder holds the weights, AdamW state and dropout state within the epoch, and a run killed between two
checkpoints and started again ends where an uninterrupted run ends, choice items and dropout included."""

from __future__ import annotations

import json

import pytest
import torch

from pragmeter.classify.examples import ChoiceExamples, Examples
from pragmeter.classify.model import ClassifierSettings, TextClassifier
from pragmeter.classify.training import FineTuneConfig, Trainer, fingerprint
from pragmeter.errors import InvalidParameter

SETTINGS = ClassifierSettings(labels=["implied", "explicit", "neutral", "contradiction"],
                              base_encoder="all-MiniLM-L6-v2", max_length=32, input_kind="pair")
ANIMALS = ["cat", "dog", "bird", "fish"]
TRAIN = Examples(["It rains.", "The shop is shut.", "She smiled.", "He left early."] * 3,
                 ["explicit", "implied", "neutral", "contradiction"] * 3,
                 ["It is raining.", "We cannot buy bread.", "She is tall.", "He stayed late."] * 3)
CHOICE = ChoiceExamples([f'Where is the {a}? "Look under the table."' for a in ANIMALS],
                        [(f"The {a} is under the table.", f"The {a} is on the roof.") for a in ANIMALS],
                        [0] * len(ANIMALS))


def train(work, stop_after_steps=None, checkpoint_every=2):
    torch.set_num_threads(1)  # the same arithmetic in both runs
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", SETTINGS, "cpu", seed=0)
    config = FineTuneConfig(epochs=2, batch_size=4, lr=1e-4, max_length=32, select_on="accuracy",
                            checkpoint_every=checkpoint_every)
    result = Trainer(classifier, config, work, progress=False).fit(TRAIN, TRAIN, choice=CHOICE,
                                                                   stop_after_steps=stop_after_steps)
    return classifier, result


def test_a_run_killed_within_an_epoch_resumes_to_the_uninterrupted_end(tmp_path):
    whole, whole_result = train(tmp_path / "whole")
    # 3 pair batches + 2 choice batches an epoch; killed after step 8, i.e. after the checkpoint at step 7 (2 batches
    # into epoch 2): the resumed run replays step 8 from the restored weights, AdamW and dropout state
    _, cut = train(tmp_path / "cut", stop_after_steps=8)
    state = json.loads((tmp_path / "cut" / "state.json").read_text())
    assert len(cut.history) == 1 and state["epochs_done"] == 1
    assert (state["partial"]["epoch"], state["partial"]["batches_done"]) == (2, 2)
    resumed, result = train(tmp_path / "cut", checkpoint_every=3)  # the cadence is not part of the run's identity
    assert [row["epoch"] for row in result.history] == [1, 2]
    assert result.history[1]["train_loss"] == pytest.approx(whole_result.history[1]["train_loss"], abs=1e-6)
    assert result.history[1]["choice_loss"] == pytest.approx(whole_result.history[1]["choice_loss"], abs=1e-6)
    for (name, a), b in zip(whole.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6), name


def test_checkpoints_within_an_epoch_are_named_by_the_state_and_old_ones_go(tmp_path):
    train(tmp_path / "cut", stop_after_steps=5)  # killed on the last batch: the checkpoint at batch 4 stands
    work = tmp_path / "cut"
    state = json.loads((work / "state.json").read_text())
    assert state["partial"] == {**state["partial"], "epoch": 1, "batches_done": 4}
    assert len(state["partial"]["losses"]) + len(state["partial"]["choice_losses"]) == 4
    assert {p.name for p in work.glob("*.safetensors")} == {state["weights"], state["optimizer"]}


def test_checkpoint_every_is_checked_and_left_out_of_the_fingerprint():
    with pytest.raises(InvalidParameter, match="checkpoint_every"):
        FineTuneConfig(checkpoint_every=-1)
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", SETTINGS, "cpu", seed=0)
    assert fingerprint(FineTuneConfig(checkpoint_every=0), classifier, TRAIN, TRAIN) == \
        fingerprint(FineTuneConfig(checkpoint_every=100), classifier, TRAIN, TRAIN)


def _edit_state(work, edit):
    path = work / "state.json"
    state = json.loads(path.read_text())
    edit(state)
    path.write_text(json.dumps(state))


def test_a_checkpoint_that_predates_a_setting_resumes_while_that_setting_is_at_its_default(tmp_path):
    whole, _ = train(tmp_path / "whole")
    train(tmp_path / "cut", stop_after_steps=8)
    _edit_state(tmp_path / "cut", lambda state: state["identity"]["settings"].pop("group_by_length"))
    resumed, result = train(tmp_path / "cut")
    assert [row["epoch"] for row in result.history] == [1, 2]
    for a, b in zip(whole.model.state_dict().values(), resumed.model.state_dict().values()):
        assert torch.allclose(a, b, atol=1e-6)


def test_a_checkpoint_of_other_settings_or_data_is_refused_naming_why(tmp_path):
    train(tmp_path / "cut", stop_after_steps=4)
    work = tmp_path / "cut"
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", SETTINGS, "cpu", seed=0)

    def resume(**changes):
        config = FineTuneConfig(**{"epochs": 2, "batch_size": 4, "lr": 1e-4, "max_length": 32,
                                   "select_on": "accuracy", **changes})
        Trainer(classifier, config, work, progress=False).fit(TRAIN, TRAIN, choice=CHOICE)

    with pytest.raises(InvalidParameter, match="lr was 0.0001, is 0.0002"):
        resume(lr=2e-4)
    _edit_state(work, lambda state: state["identity"]["settings"].pop("head_lr_scale"))
    with pytest.raises(InvalidParameter, match="head_lr_scale is 2.0, a setting the checkpoint predates"):
        resume(head_lr_scale=2.0)
    with pytest.raises(InvalidParameter, match="other training or validation data"):
        Trainer(classifier, FineTuneConfig(epochs=2, batch_size=4, lr=1e-4, max_length=32, select_on="accuracy"),
                work, progress=False).fit(TRAIN.subset(list(range(8))), TRAIN, choice=CHOICE)


def test_a_checkpoint_that_records_only_the_digest_resumes_by_the_digest(tmp_path):
    train(tmp_path / "cut", stop_after_steps=4)
    _edit_state(tmp_path / "cut", lambda state: state.pop("identity"))
    _, result = train(tmp_path / "cut")
    assert [row["epoch"] for row in result.history] == [1, 2]
    _edit_state(tmp_path / "cut", lambda state: state.update(identity=None, fingerprint="0" * 64))
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", SETTINGS, "cpu", seed=0)
    with pytest.raises(InvalidParameter, match="other settings or data"):
        Trainer(classifier, FineTuneConfig(epochs=3, batch_size=4, lr=1e-4, max_length=32, select_on="accuracy"),
                tmp_path / "cut", progress=False).fit(TRAIN, TRAIN, choice=CHOICE)
