"""The explicit weight of a reading's score (P(implied) + w P(explicit)): an interpreter scores and chooses with it,
a folder records it and every way of opening the folder reads it, `pragmeter interpret` and the ``local:`` backend
take it, bad values are refused naming where they came from, and the weight is chosen on development items through
the interpreter's own scoring (tiny random-weight INLI models written here; real development items)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pragmeter.cli import main
from pragmeter.errors import DataError, PragmeterError
from pragmeter.interpreter.model import Interpreter, premise
from pragmeter.testing.tiny_nli import tiny_nli_folder

INLI = ["implied", "explicit", "neutral", "contradiction"]
CONTEXT = "Ann offers Bob a coffee at eleven at night."
UTTERANCE = "It would keep me awake."
READINGS = ["Bob does not want a coffee.", "Bob wants a coffee.", "Bob likes tea.", "It is late.",
            "Coffee would keep Bob awake."]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A tiny 4-way INLI model written out with pragmeter's settings (Interpreter.save), explicit weight 1."""
    plain = tiny_nli_folder(tmp_path_factory.mktemp("plain") / "inli", INLI, seed=3)
    out = tmp_path_factory.mktemp("saved") / "inli"
    Interpreter.load(plain, device="cpu", backend="torch").save(out)
    return out


def _config(folder):
    return json.loads((folder / "config.json").read_text())


def test_scores_weigh_p_explicit_and_the_choice_follows(folder):
    plain = Interpreter.load(folder, device="cpu", backend="torch")
    rows = plain.predict([(premise(CONTEXT, UTTERANCE), reading) for reading in READINGS])
    assert plain.explicit_weight == 1.0
    assert plain.scores(CONTEXT, UTTERANCE, READINGS) == pytest.approx((rows[:, 0] + rows[:, 1]).tolist(), abs=1e-6)
    for weight in (1, 0.5, 0.25, 0.1, 0):
        model = Interpreter.load(folder, device="cpu", backend="torch", explicit_weight=weight)
        scores = model.scores(CONTEXT, UTTERANCE, READINGS)
        assert scores == pytest.approx((rows[:, 0] + weight * rows[:, 1]).tolist(), abs=1e-6)
        assert model.choose(CONTEXT, UTTERANCE, READINGS) == int(np.argmax(scores))
        assert model.classify([premise(CONTEXT, UTTERANCE)], READINGS[:1])[0] == pytest.approx(
            dict(zip(INLI, rows[0].tolist())), abs=1e-6)  # labels do not read the weight


def test_a_folder_records_the_weight_and_save_export_and_local_read_it(folder, tmp_path):
    from pragmeter.classify.backend import LocalClassifierBackend
    from pragmeter.interpreter.weight import METRICS_KEY, record_weight

    copy = tmp_path / "copy"
    Interpreter.load(folder, device="cpu", backend="torch", explicit_weight=0.25).save(copy)
    assert _config(copy)["pragmeter"]["explicit_weight"] == 0.25  # the weight it scored with
    assert "P(implied) + 0.25 × P(explicit)" in (copy / "README.md").read_text()  # what a CrossEncoder user computes
    assert "× P(explicit)" not in (folder / "README.md").read_text()
    assert Interpreter.load(copy, device="cpu", backend="torch").explicit_weight == 0.25
    assert _config(folder)["pragmeter"]["explicit_weight"] == 1.0  # the source folder is left as it was
    record_weight(copy, 0.1, {"rule": "test"})
    assert _config(copy)["pragmeter"]["explicit_weight"] == 0.1
    assert json.loads((copy / "metrics.json").read_text())[METRICS_KEY] == {"weight": 0.1, "rule": "test"}
    for backend in ("torch", "openvino"):
        assert Interpreter.load(copy, device="cpu", backend=backend).explicit_weight == 0.1
    local = LocalClassifierBackend.from_args(str(copy), {"device": "cpu"})
    assert local.interpreter.explicit_weight == 0.1 and local.decoding(None)["explicit_weight"] == 0.1
    asked = LocalClassifierBackend.from_args(str(copy), {"device": "cpu", "explicit_weight": "1"})
    assert asked.interpreter.explicit_weight == 1.0 and "explicit_weight" not in asked.decoding(None)
    rows = local.classifier.probabilities([premise(CONTEXT, UTTERANCE)] * len(READINGS), READINGS)
    assert local.interpreter.meant_scores(rows) == pytest.approx(rows[:, 0] + 0.1 * rows[:, 1], abs=1e-6)


@pytest.mark.parametrize("weight", ["-0.5", "1.5", "nan", "half", "inf"])
def test_a_weight_outside_0_to_1_is_refused_in_one_line_wherever_it_is_given(folder, tmp_path, weight, capsys):
    from pragmeter.classify.backend import LocalClassifierBackend

    with pytest.raises(PragmeterError, match="model argument explicit_weight must be a number from 0 to 1"):
        LocalClassifierBackend.from_args(str(folder), {"device": "cpu", "explicit_weight": weight})
    with pytest.raises(SystemExit):
        main(["interpret", UTTERANCE, "--reading", "a", "--reading", "b", "--model", str(folder),
              "--explicit-weight", weight])
    assert "--explicit-weight: must be a number from 0 to 1" in capsys.readouterr().err
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for item in folder.iterdir():
        (damaged / item.name).write_bytes(item.read_bytes())
    config = _config(folder)
    config["pragmeter"]["explicit_weight"] = weight if weight == "half" else float(weight)
    (damaged / "config.json").write_text(json.dumps(config))
    with pytest.raises(DataError, match=f"{damaged / 'config.json'}: 'pragmeter' settings are malformed "
                                        f"\\(explicit_weight must be a number from 0 to 1"):
        Interpreter.load(damaged, device="cpu", backend="torch")


def test_a_model_without_an_explicit_label_takes_only_1(tmp_path):
    from pragmeter.classify.backend import LocalClassifierBackend

    three = tiny_nli_folder(tmp_path / "mnli")
    assert Interpreter.load(three, device="cpu", backend="torch", explicit_weight=1).explicit_weight == 1.0
    with pytest.raises(PragmeterError, match="explicit_weight 0.5: .*has no explicit label"):
        Interpreter.load(three, device="cpu", backend="torch", explicit_weight=0.5)
    with pytest.raises(PragmeterError, match="has no explicit label"):
        LocalClassifierBackend.from_args(str(three), {"device": "cpu", "explicit_weight": "0.5"})


def test_the_interpret_command_scores_and_marks_with_the_weight_asked(folder, capsys):
    args = ["interpret", UTTERANCE, "--context", CONTEXT, *sum((["--reading", r] for r in READINGS), []),
            "--model", str(folder), "--no-progress", "--backend", "torch", "--precision", "fp32"]
    for weight in ("1", "0"):
        assert main([*args, "--explicit-weight", weight]) == 0
        lines = capsys.readouterr().out.splitlines()[1:]
        model = Interpreter.load(folder, device="cpu", backend="torch", explicit_weight=float(weight))
        scores = model.scores(CONTEXT, UTTERANCE, READINGS)
        assert [float(line[2:].split()[1]) for line in lines] == pytest.approx(scores, abs=1e-3)
        assert [line.startswith("*") for line in lines] == [i == int(np.argmax(scores)) for i in range(len(READINGS))]


def test_weights_measured_once_per_split_equal_each_weight_measured_on_its_own(folder, data_root):
    """weight_accuracies reuses one forward pass per split; every weight's accuracy is what a separately loaded
    interpreter with that weight gives through the same evaluator (real development items)."""
    from pragmeter.classify.recipes.interpreter import MEANT_FIRST_DEV, grice_evaluator, grice_items
    from pragmeter.interpreter.weight import weight_accuracies

    split = MEANT_FIRST_DEV["situated_dev"]
    evaluators = {"situated_dev": split.evaluator(split.reader(data_root)[1][:40], "situated_dev"),
                  "grice_dev": grice_evaluator(grice_items(data_root)[1][:20])}
    interpreter = Interpreter.load(folder, device="cpu", backend="torch", precision="fp32")
    measured = weight_accuracies(interpreter, evaluators, (1, 0.25, 0))
    assert list(measured) == ["1", "0.25", "0"]
    for weight, row in measured.items():
        alone = Interpreter.load(folder, device="cpu", backend="torch", explicit_weight=float(weight))
        assert row == {name: evaluator(alone)[f"{name}_accuracy"] for name, evaluator in evaluators.items()}
    assert len({row["situated_dev"] for row in measured.values()}) > 1  # the weight moves the choice on these items


def test_the_rule_keeps_1_unless_an_admissible_weight_gains_more_than_a_standard_error():
    from pragmeter.interpreter.weight import choose_weight
    from pragmeter.metrics.intervals import proportion_standard_error as standard_error

    sizes = {"target": 100, "other": 400}
    base = {"1": {"target": 0.30, "other": 0.80}}
    floor = 0.80 - standard_error(0.80, 400)  # 0.78
    # 0.5 gains 0.10 (> se 0.046) and keeps other; 0.1 gains more but drops other below its floor
    chosen = choose_weight({**base, "0.5": {"target": 0.40, "other": 0.79}, "0.1": {"target": 0.60, "other": 0.77}},
                           sizes, "target")
    assert chosen["weight"] == 0.5 and chosen["admissible"] == [1.0, 0.5]
    assert chosen["floors"]["other"] == pytest.approx(floor)
    # a gain within the target's standard error keeps the plain sum
    assert choose_weight({**base, "0.5": {"target": 0.33, "other": 0.80}}, sizes, "target")["weight"] == 1.0
    # ties go to the larger weight
    tie = choose_weight({**base, "0.5": {"target": 0.5, "other": 0.8}, "0.25": {"target": 0.5, "other": 0.8}},
                        sizes, "target")
    assert tie["weight"] == 0.5
    with pytest.raises(PragmeterError, match="must include 1"):
        choose_weight({"0.5": base["1"]}, sizes, "target")
    with pytest.raises(PragmeterError, match="target split 'absent' was not measured"):
        choose_weight(base, sizes, "absent")


def test_the_mean_rule_trades_one_split_against_the_others_but_refuses_a_collapse():
    """Under ``mean`` a weight that costs one split an item or two near the ceiling is admissible where the other
    splits' mean holds; a weight that drops the mean by more than its standard error, or one split by more than
    COLLAPSE, is not. ``each-split`` refuses the first weight too."""
    from pragmeter.interpreter.weight import COLLAPSE, choose_weight
    from pragmeter.metrics.intervals import proportion_standard_error as standard_error

    sizes = {"target": 100, "a": 1000, "b": 300, "c": 400, "d": 400}
    accuracies = {"1": {"target": 0.30, "a": 0.99, "b": 0.99, "c": 0.80, "d": 0.70},
                  "0.5": {"target": 0.50, "a": 0.98, "b": 0.99, "c": 0.80, "d": 0.70},  # a loses 10 of 1,000
                  "0.25": {"target": 0.60, "a": 0.99, "b": 0.99, "c": 0.745, "d": 0.76},  # mean holds, c collapses
                  "0.1": {"target": 0.55, "a": 0.97, "b": 0.97, "c": 0.78, "d": 0.68}}  # every split loses 0.02
    mean = choose_weight(accuracies, sizes, "target", "mean")
    assert mean["weight"] == 0.5 and mean["admissible"] == [1.0, 0.5] and mean["rule"] == "mean"
    error = sum(standard_error(accuracies["1"][n], sizes[n]) ** 2 for n in "abcd") ** 0.5 / 4
    assert mean["mean_floor"] == pytest.approx(0.87 - error)
    assert mean["means"]["0.25"] > mean["mean_floor"] and accuracies["0.25"]["c"] < 0.80 - COLLAPSE
    assert mean["means"]["0.1"] < mean["mean_floor"]
    assert mean["floors"]["c"] == pytest.approx(0.80 - COLLAPSE)
    assert choose_weight(accuracies, sizes, "target", "each-split")["weight"] == 1.0
    with pytest.raises(PragmeterError, match="unknown weight rule 'median'"):
        choose_weight(accuracies, sizes, "target", "median")


def test_a_shipped_card_says_the_weight_its_choice_items_were_trained_for_unless_one_was_recorded_after():
    """interpreter_card (from a ship's metrics): the weight record_weight chose wins; without one, the weight the run's
    choice items were trained for (its settings); with neither, no line."""
    import copy

    from pragmeter.classify.card import interpreter_card
    from pragmeter.packaged import INTERPRETERS

    metrics = json.loads((INTERPRETERS.folder / INTERPRETERS.default / "metrics.json").read_text())
    metrics.pop("explicit_weight", None)
    metrics["training"]["settings"].pop("explicit_weight", None)
    assert "× P(explicit)" not in interpreter_card(metrics)
    trained = copy.deepcopy(metrics)
    trained["training"]["settings"]["explicit_weight"] = 0.5
    assert "P(implied) + 0.5 × P(explicit)" in interpreter_card(trained)
    trained["explicit_weight"] = {"weight": 0.25}
    assert "P(implied) + 0.25 × P(explicit)" in interpreter_card(trained)
