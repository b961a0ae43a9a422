"""Distillation: a teacher's probabilities on real INLI training pairs, reordered to the student's labels and kept in
the work folder chunk by chunk (an interrupted labelling continues, a damaged file is made again), become soft
targets that pull the student towards the teacher; the command line trains with --teacher and --soft-weight and
refuses either without the other; a run's digest records the teacher's answers but stays as it was without one; the
card of a distilled interpreter names its teacher and the teacher's share; the teacher labels choice items' readings
too, an anchor that keeps them near its probabilities while their order is learnt; groups of pairs can keep their own
labels alone while the others learn the teacher."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from pragmeter.classify import distillation
from pragmeter.classify.distillation import teacher_probabilities, with_teacher
from pragmeter.classify.examples import ChoiceExamples, Examples
from pragmeter.classify.job import run_recipe
from pragmeter.classify.opening import open_classifier
from pragmeter.classify.recipes import inli
from pragmeter.classify.training import FineTuneConfig, pair_targets, run_identity
from pragmeter.cli import main
from pragmeter.errors import InvalidParameter, PragmeterError
from pragmeter.testing.tiny_nli import tiny_nli_folder

TEACHER_LABELS = ("neutral", "implied", "contradiction", "explicit")  # INLI's four in another order


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    return tiny_nli_folder(tmp_path_factory.mktemp("teacher") / "model", labels=TEACHER_LABELS, seed=5)


@pytest.fixture()
def data(data_root):
    data = inli.build("4way", root=data_root)
    data.train, data.val, data.test = data.train.head(24), data.val.head(8), data.test.head(8)
    return data


def test_the_teacher_s_probabilities_come_in_the_student_s_label_order(teacher, data, tmp_path):
    rows = teacher_probabilities(teacher, data.train, list(data.labels), tmp_path, progress=False)
    classifier, _ = open_classifier(teacher, precision="fp32", progress=False)
    direct = classifier.probabilities(data.train.texts, data.train.pairs)
    for column, label in enumerate(data.labels):
        np.testing.assert_allclose(rows[:, column], direct[:, TEACHER_LABELS.index(label)], atol=1e-6)
    assert rows.shape == (len(data.train), 4) and np.allclose(rows.sum(1), 1, atol=1e-5)


def test_a_labelling_is_shared_by_runs_that_label_the_same_pairs_otherwise_but_not_across_column_orders(
        teacher, data, tmp_path, monkeypatch):
    calls = []
    real = open_classifier

    def counting(*args, **kwargs):
        classifier, runtime = real(*args, **kwargs)
        inner = classifier.probabilities
        classifier.probabilities = lambda texts, *rest: calls.append(len(texts)) or inner(texts, *rest)
        return classifier, runtime

    monkeypatch.setattr("pragmeter.classify.opening.open_classifier", counting)
    labels = list(data.labels)
    first = teacher_probabilities(teacher, data.train, labels, tmp_path, progress=False)
    relabelled = Examples(data.train.texts, ["neutral"] * len(data.train), data.train.pairs)
    again = teacher_probabilities(teacher, relabelled, labels, tmp_path, progress=False)
    assert calls == [len(data.train)] and np.array_equal(first, again)  # read from the kept file, not labelled again
    reordered = teacher_probabilities(teacher, data.train, labels[::-1], tmp_path, progress=False)
    assert calls == [len(data.train)] * 2 and len(list(tmp_path.glob("teacher-*.npy"))) == 2
    np.testing.assert_allclose(reordered, first[:, ::-1], atol=1e-6)
    other = data.train.subset(range(1, len(data.train)))
    teacher_probabilities(teacher, other, labels, tmp_path, progress=False)
    assert calls[-1] == len(other) and len(list(tmp_path.glob("teacher-*.npy"))) == 3


def test_labelling_continues_after_an_interruption_and_remakes_a_damaged_file(teacher, data, tmp_path, monkeypatch):
    monkeypatch.setattr(distillation, "CHUNK", 8)
    calls = []
    real = open_classifier

    def counting(*args, **kwargs):
        classifier, runtime = real(*args, **kwargs)
        inner = classifier.probabilities

        def probabilities(texts, pairs=None, batch_size=64, progress=False):
            calls.append(len(texts))
            if len(calls) == 2 and not hasattr(counting, "resumed"):
                raise KeyboardInterrupt  # the labelling is stopped after its first chunk
            return inner(texts, pairs, batch_size, progress)

        classifier.probabilities = probabilities
        return classifier, runtime

    monkeypatch.setattr("pragmeter.classify.opening.open_classifier", counting)
    with pytest.raises(KeyboardInterrupt):
        teacher_probabilities(teacher, data.train, list(data.labels), tmp_path, progress=False)
    kept = list(tmp_path.glob("teacher-*.npy"))
    assert len(kept) == 1 and np.load(kept[0]).shape == (8, 4)  # the first chunk is kept, whole
    counting.resumed = True
    calls.clear()
    rows = teacher_probabilities(teacher, data.train, list(data.labels), tmp_path, progress=False)
    assert calls == [8, 8]  # only the two chunks not yet made
    full = teacher_probabilities(teacher, data.train, list(data.labels), tmp_path / "fresh", progress=False)
    np.testing.assert_allclose(rows, full, atol=1e-6)
    kept[0].write_bytes(b"not an array")
    calls.clear()
    again = teacher_probabilities(teacher, data.train, list(data.labels), tmp_path, progress=False)
    np.testing.assert_allclose(again, full, atol=1e-6)
    assert calls == [8, 8, 8] and kept[0].with_suffix(".damaged").is_file()


def test_a_teacher_with_other_labels_is_refused(data, tmp_path):
    three = tiny_nli_folder(tmp_path / "mnli")  # entailment / neutral / contradiction
    with pytest.raises(PragmeterError, match="are not the student's"):
        teacher_probabilities(three, data.train, list(data.labels), tmp_path, progress=False)


def test_targets_mix_the_label_and_the_teacher_s_probabilities():
    labels = ["a", "b", "c"]
    examples = Examples(["x", "y"], ["a", "c"], soft=[(0.2, 0.5, 0.3), (0.1, 0.1, 0.8)])
    assert pair_targets(examples, labels).tolist() == [0, 2]
    mixed = pair_targets(examples, labels, 0.25)
    np.testing.assert_allclose(mixed.numpy(), [[0.8, 0.125, 0.075], [0.025, 0.025, 0.95]], atol=1e-6)
    with pytest.raises(InvalidParameter, match="teacher"):
        pair_targets(Examples(["x"], ["a"]), labels, 0.5)
    with pytest.raises(InvalidParameter):
        FineTuneConfig(soft_weight=1.5)
    # the teacher's rows travel with the examples they belong to
    assert examples.subset([1]).soft == [(0.1, 0.1, 0.8)]
    assert len(examples.extend(examples).soft) == 4
    with pytest.raises(ValueError, match="teacher"):
        examples.extend(Examples(["z"], ["b"]))


def test_label_only_groups_keep_their_labels_while_the_other_pairs_mix_the_teacher():
    labels = ["a", "b", "c"]
    teacher_rows = [(0.2, 0.5, 0.3), (0.1, 0.1, 0.8), (0.6, 0.2, 0.2)]
    examples = Examples(["x", "y", "z"], ["a", "c", "b"], groups=["inli", "esnli", "sick"], soft=teacher_rows)
    mixed = pair_targets(examples, labels, 0.25, ("esnli", "sick"))
    np.testing.assert_allclose(mixed.numpy(), [[0.8, 0.125, 0.075], [0, 0, 1], [0, 1, 0]], atol=1e-6)
    # without them the same rows are mixed as before
    np.testing.assert_allclose(pair_targets(examples, labels, 0.25)[1:].numpy(),
                               [[0.025, 0.025, 0.95], [0.15, 0.8, 0.05]], atol=1e-6)
    with pytest.raises(InvalidParameter, match="snli.*names no group.*esnli, inli, sick"):
        pair_targets(examples, labels, 0.25, ("snli",))
    with pytest.raises(InvalidParameter, match="a teacher and a soft weight above 0"):
        FineTuneConfig(label_only_groups=("esnli",))
    assert FineTuneConfig(soft_weight=0.5, label_only_groups=["esnli"]).label_only_groups == ("esnli",)


def test_label_only_pairs_learn_their_labels_where_the_others_learn_the_teacher(teacher, data, tmp_path):
    """soft_weight 1, the same run twice: every pair learns the teacher alone, or half of them (a group labelled with
    the label the teacher gives least) keep their labels alone. Only the second run learns that label."""
    torch.set_num_threads(min(2, torch.get_num_threads()))
    with_teacher(data, teacher, tmp_path / "work", progress=False)
    own = np.array([i % 2 == 0 for i in range(len(data.train))])
    data.train.groups = ["own" if o else "taught" for o in own]
    teacher_rows = np.array(data.train.soft)
    rarest = data.labels[int(teacher_rows.mean(0).argmin())]  # the label the teacher gives least
    data.train.labels = [rarest if o else label for o, label in zip(own, data.train.labels)]
    repeated = data.train
    for _ in range(5):  # one epoch of six passes: the run keeps its best epoch, and there is only the last
        repeated = repeated.extend(data.train)
    data.train, pairs = repeated, data.train
    runs = {}
    for name, groups in (("teacher", ()), ("labels", ("own",))):
        config = FineTuneConfig(epochs=1, batch_size=8, lr=3e-4, head_lr_scale=10, warmup_ratio=0.0, max_length=64,
                                soft_weight=1.0, label_only_groups=groups, select_on="accuracy")
        run_recipe(data, "all-MiniLM-L6-v2", config, tmp_path / name, tmp_path / f"{name}.work", "cpu", "test",
                   False)
        student = open_classifier(tmp_path / name, backend="torch", precision="fp32", device="cpu",
                                  progress=False)[0]
        runs[name] = np.asarray(student.probabilities(pairs.texts, pairs.pairs))
    labels = list(student.labels)
    one_hot = np.eye(len(labels))[[labels.index(label) for label in pairs.labels]]
    taken = {name: (probs * one_hot).sum(1) for name, probs in runs.items()}
    # the label-only pairs: their label, which the teacher all but rules out, is learnt only when they keep it
    assert taken["teacher"][own].mean() < 0.05 and taken["labels"][own].mean() > 0.3
    metrics = json.loads((tmp_path / "labels" / "metrics.json").read_text())
    assert metrics["train_config"]["label_only_groups"] == ["own"]


def _kl(teacher_rows: np.ndarray, student_rows: np.ndarray) -> float:
    return float((teacher_rows * (np.log(teacher_rows + 1e-9) - np.log(student_rows + 1e-9))).sum(1).mean())


def test_soft_targets_pull_the_student_towards_the_teacher(teacher, data, tmp_path):
    torch.set_num_threads(min(2, torch.get_num_threads()))
    with_teacher(data, teacher, tmp_path / "work", progress=False)
    assert data.arguments["teacher"]["folder"] == teacher.name
    target = np.array(data.train.soft)
    config = FineTuneConfig(epochs=3, batch_size=8, lr=3e-4, head_lr_scale=10, warmup_ratio=0.0, max_length=64,
                            soft_weight=1.0, select_on="accuracy")
    start = open_classifier(_untrained(data, tmp_path), precision="fp32", progress=False)[0]
    before = _kl(target, start.probabilities(data.train.texts, data.train.pairs))
    run_recipe(data, "all-MiniLM-L6-v2", config, tmp_path / "student", tmp_path / "student.work", "cpu", "test",
               False)
    student = open_classifier(tmp_path / "student", backend="torch", precision="fp32", device="cpu",
                              progress=False)[0]
    after = _kl(target, student.probabilities(data.train.texts, data.train.pairs))
    assert after < 0.5 * before
    recorded = json.loads((tmp_path / "student" / "config.json").read_text())
    assert "teacher" in json.dumps(recorded)


def _untrained(data, tmp_path):
    """The student before training: the recipe's classifier at its seeded start, saved."""
    from pragmeter.classify.job import recipe_settings
    from pragmeter.classify.model import TextClassifier

    torch.manual_seed(0)
    classifier = TextClassifier.from_encoder("all-MiniLM-L6-v2", recipe_settings(data, "all-MiniLM-L6-v2", 64), "cpu",
                                             seed=0, precision="fp32")
    classifier.save(tmp_path / "start", card="# start\n")
    return tmp_path / "start"


def test_the_digest_records_the_teacher_s_answers_and_is_unchanged_without_one(data):
    from types import SimpleNamespace

    from pragmeter.classify.job import recipe_settings
    from pragmeter.classify.training import fingerprint

    classifier = SimpleNamespace(settings=recipe_settings(data, "all-MiniLM-L6-v2", 64))
    plain = FineTuneConfig(max_length=64)
    identity = run_identity(plain, classifier, data.train, data.val)
    assert "soft_weight" not in identity["settings"]  # a run written before the setting existed still resumes
    distilled = FineTuneConfig(max_length=64, soft_weight=0.5)
    assert run_identity(distilled, classifier, data.train, data.val)["settings"]["soft_weight"] == 0.5
    soft = data.train.subset(range(len(data.train)))
    soft.soft = [(0.25, 0.25, 0.25, 0.25)] * len(soft)
    other = data.train.subset(range(len(data.train)))
    other.soft = [(0.7, 0.1, 0.1, 0.1)] * len(other)
    digests = {fingerprint(distilled, classifier, train, data.val) for train in (data.train, soft, other)}
    assert len(digests) == 3


def test_the_command_distils_with_teacher_and_soft_weight_and_refuses_one_without_the_other(teacher, tmp_path,
                                                                                           capsys):
    common = ["classifier", "train", "inli", "--limit-train", "16", "--limit-eval", "8", "--epochs", "1",
              "--batch-size", "8", "--max-length", "64", "--no-progress", "--device", "cpu"]
    assert main(common + ["--output", str(tmp_path / "bad"), "--soft-weight", "0.3"]) != 0
    assert "--teacher" in capsys.readouterr().err
    assert main(common + ["--output", str(tmp_path / "student"), "--teacher", str(teacher)]) == 0
    config = json.loads((tmp_path / "student" / "config.json").read_text())
    assert config["pragmeter"]["recipe"]["teacher"]["folder"] == teacher.name
    metrics = json.loads((tmp_path / "student" / "metrics.json").read_text())
    assert metrics["train_config"]["soft_weight"] == 0.5
    # --label-only-groups: refused in a line without a teacher or for a group the pairs lack, recorded with one
    assert main(common + ["--output", str(tmp_path / "bad"), "--label-only-groups", "circa"]) != 0
    assert "--label-only-groups ['circa']: keeps some pairs off a teacher's probabilities" in capsys.readouterr().err
    assert main(common + ["--output", str(tmp_path / "bad"), "--teacher", str(teacher), "--label-only-groups",
                          "normbank"]) != 0
    assert ("--label-only-groups normbank: names no group of the training pairs (they are circa, socialchem)"
            in capsys.readouterr().err) and not (tmp_path / "bad").exists()
    assert main(common + ["--output", str(tmp_path / "own"), "--teacher", str(teacher), "--label-only-groups",
                          "circa, socialchem"]) == 0
    metrics = json.loads((tmp_path / "own" / "metrics.json").read_text())
    assert metrics["train_config"]["label_only_groups"] == ["circa", "socialchem"]
    # the run's own card names the teacher, its share and the groups kept off it; an undistilled run's card does not
    assert (f"Each training pair's target is 50% the probabilities `{teacher.name}` gives it and the rest its label "
            "(distillation, `classify/distillation.py`), except the pairs of `circa` and `socialchem`, which train on "
            "their labels alone.") in (tmp_path / "own" / "README.md").read_text()
    assert f"the probabilities `{teacher.name}` gives it" in (tmp_path / "student" / "README.md").read_text()
    assert main(common + ["--output", str(tmp_path / "plain")]) == 0
    assert "(distillation, `classify/distillation.py`)" not in (tmp_path / "plain" / "README.md").read_text()


def test_the_card_of_a_distilled_interpreter_names_its_teacher_and_share(tmp_path):
    from pragmeter.classify.card import interpreter_card

    recipe = {"name": "interpreter", "stage": "pragmatic", "sources": [], "init_from": {"folder": "start"},
              "teacher": {"model": "interpreter-x", "folder": "interpreter-x", "content_sha256": "0" * 64}}
    scores = {"accuracy": 0.5, "macro_f1": 0.5}
    metrics = {"rank": 64, "val_whole": scores, "val_compressed": scores,
               "bf16_check": {"pairs": 0},  # not checked: the card says so
               "training": {"settings": {"base_encoder": "all-mpnet-base-v2", "recipe": recipe},
                            "train_config": {"soft_weight": 0.3}}}
    card = interpreter_card(metrics)
    assert "Each training pair's target is 30% the probabilities `interpreter-x` gives it" in card
    assert "the choice items keep their own loss." in card
    metrics["training"]["train_config"]["choice_anchor"] = 1.0
    assert ("the choice items keep their own loss, beside a cross-entropy (weight 1) towards the teacher's "
            "probabilities on their readings." in interpreter_card(metrics))
    metrics["training"]["train_config"]["label_only_groups"] = ["esnli", "sick", "bad`name"]
    assert ("gives it and the rest its label (distillation, `classify/distillation.py`), except the pairs of "
            "`esnli` and `sick`, which train on their labels alone;" in interpreter_card(metrics))
    del metrics["training"]["train_config"]["choice_anchor"], metrics["training"]["train_config"]["label_only_groups"]
    inli_recipe = {"name": "inli", "labels": "4way", "teacher": recipe["teacher"]}
    metrics["training"]["settings"]["recipe"] = inli_recipe  # the INLI recipe's card names its teacher too
    card = interpreter_card(metrics)
    assert "Each training pair's target is 30% the probabilities `interpreter-x` gives it" in card
    assert "choice items" not in card
    del recipe["teacher"], inli_recipe["teacher"]
    assert "distillation" not in interpreter_card(metrics)
    metrics["training"]["settings"]["recipe"] = recipe
    assert "distillation" not in interpreter_card(metrics)


def _animal_items():
    animals = ["cat", "dog", "bird", "fish", "horse", "cow", "sheep", "goat"]
    return ChoiceExamples([f'Where is the {a}? "Look under the table."' for a in animals],
                          [(f"The {a} is under the table.", f"The {a} is on the roof.")
                           + ((f"The {a} is asleep.",) if i % 2 else ()) for i, a in enumerate(animals)],
                          [0] * len(animals))


def _reading_kl(classifier, choice) -> float:
    pairs = choice.reading_pairs()
    return _kl(np.array(pairs.soft), classifier.probabilities(pairs.texts, pairs.pairs))


def test_the_teacher_labels_each_choice_reading_and_the_anchor_keeps_the_readings_near_it(teacher, data, tmp_path):
    from pragmeter.classify.training import Trainer, fingerprint

    torch.set_num_threads(min(2, torch.get_num_threads()))
    data.choice = _animal_items()
    with_teacher(data, teacher, tmp_path / "work", progress=False, choice=True)
    choice = data.choice
    assert [len(rows) for rows in choice.soft] == [len(options) for options in choice.readings]  # 2 or 3 readings
    direct = open_classifier(teacher, precision="fp32", progress=False)[0]
    pairs = choice.reading_pairs()
    raw = direct.probabilities(pairs.texts, pairs.pairs)
    for column, label in enumerate(data.labels):  # the student's label order, as the pairs' targets
        np.testing.assert_allclose(np.array(pairs.soft)[:, column], raw[:, TEACHER_LABELS.index(label)], atol=1e-6)
    assert choice.subset([1]).soft == [choice.soft[1]]  # the rows travel with their item
    with pytest.raises(ValueError, match="rows of the teacher's probabilities"):
        ChoiceExamples(choice.premises[:1], choice.readings[:1], [0], soft=[choice.soft[1]])

    def trained(anchor: float, folder: str):
        classifier = open_classifier(_untrained(data, tmp_path), backend="torch", precision="fp32", device="cpu",
                                     progress=False)[0]
        config = FineTuneConfig(epochs=3, batch_size=8, lr=3e-4, head_lr_scale=10, warmup_ratio=0.0, max_length=64,
                                soft_weight=0.5, choice_anchor=anchor, select_on="accuracy")
        result = Trainer(classifier, config, tmp_path / folder, progress=False).fit(data.train, data.val,
                                                                                      choice=choice)
        return classifier, config, result

    free, free_config, _ = trained(0.0, "free")
    anchored, anchored_config, anchored_result = trained(5.0, "anchored")
    start = open_classifier(_untrained(data, tmp_path), precision="fp32", progress=False)[0]
    assert _reading_kl(anchored, choice) < 0.5 * _reading_kl(start, choice)
    assert _reading_kl(anchored, choice) < _reading_kl(free, choice)
    # every epoch of the anchored run trained on every choice item
    assert all(row["choice_items"] == len(choice) for row in anchored_result.history)
    # the teacher's answers on the readings are data of the run; a run without an anchor keeps its old identity
    unlabelled = ChoiceExamples(choice.premises, choice.readings, choice.golds)
    assert fingerprint(free_config, free, data.train, data.val, choice) != \
        fingerprint(free_config, free, data.train, data.val, unlabelled)
    assert "choice_anchor" not in run_identity(free_config, free, data.train, data.val)["settings"]
    assert run_identity(anchored_config, anchored, data.train, data.val)["settings"]["choice_anchor"] == 5.0
    with pytest.raises(InvalidParameter, match="choice items' readings"):
        Trainer(free, anchored_config, tmp_path / "unlabelled", progress=False).fit(data.train, data.val,
                                                                                   choice=unlabelled)
    with pytest.raises(InvalidParameter):
        FineTuneConfig(choice_anchor=-1.0)
