"""Close calls of a reduced precision are answered again in fp32: an interpreter running in bf16 gives fp32's label
on every pair whose two likeliest labels lie closer than its gap, and fp32's choice on every item whose two best
readings do, while the clear pairs keep bf16's probabilities. Tested on a tiny NLI model written on the spot (torch,
every CPU) with real INLI pairs, and with a stand-in for bf16 that flips every nearly tied pair, so that a path which
skips the recheck fails."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pragmeter.classify.recipes import inli
from pragmeter.interpreter.model import Interpreter
from pragmeter.interpreter.recheck import RECHECK_GAP, Fp32Recheck, close_calls, recheck_gap
from pragmeter.testing.precision import FlippingBf16, SwappingBf16
from pragmeter.testing.tiny_nli import tiny_nli_folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_nli_folder(tmp_path_factory.mktemp("nli") / "model", seed=3)


@pytest.fixture(scope="module")
def pairs(data_root):
    val = inli.build("4way", root=data_root).val.head(96)
    return list(val.texts), list(val.pairs)


def _fp32(folder):
    return Interpreter.load(folder, backend="torch", precision="fp32", device="cpu")


def test_a_bf16_flip_of_a_nearly_tied_pair_is_answered_again_in_fp32(folder, pairs):
    reference = _fp32(folder).probabilities(*pairs)
    top = np.sort(reference, axis=1)
    tied = top[:, -1] - top[:, -2] < 0.05
    assert tied.any() and not tied.all(), "the pairs need both close calls and clear ones"

    plain = _fp32(folder)
    plain.classifier = FlippingBf16(plain.classifier, flip=0.05)  # what bf16 answers without the recheck
    raw = plain.probabilities(*pairs)
    assert (raw.argmax(1) != reference.argmax(1))[tied].all()

    checked = _fp32(folder)
    flipping = FlippingBf16(checked.classifier, flip=0.05)
    checked.classifier = Fp32Recheck(flipping, RECHECK_GAP, folder)
    answered = checked.probabilities(*pairs)
    assert (answered.argmax(1) == reference.argmax(1)).all()
    # the close calls hold fp32's very probabilities; the clear pairs keep bf16's
    close = close_calls(raw, RECHECK_GAP)
    np.testing.assert_allclose(answered[close], reference[close], atol=1e-6)
    np.testing.assert_array_equal(answered[~close], raw[~close])
    assert checked.classifier.rechecked == int(close.sum()) == flipping.calls[-1][1]
    assert flipping.calls[-1][0] == "fp32"
    # every command labels through the same classifier: its predict gives fp32's labels too
    assert checked.classifier.predict(*pairs) == _fp32(folder).classifier.predict(*pairs)


def test_a_close_choice_between_readings_is_answered_again_in_fp32(folder):
    fp32 = _fp32(folder)
    context, utterance = "Ann offers Bob a coffee late at night.", "It would keep me awake."
    readings = ["Bob declines the coffee.", "Bob accepts the coffee.", "Bob likes tea.", "Bob is awake."]
    reference = fp32.scores(context, utterance, readings)
    best = sorted(reference)[-2:]
    # a stand-in for bf16 that swaps the two best readings' scores whenever they lie within reach of a rounding
    winner, runner_up = int(np.argmax(reference)), int(np.argsort(reference)[-2])
    inner = _fp32(folder).classifier
    swapping = SwappingBf16(inner, (winner, runner_up))
    checked = Interpreter(Fp32Recheck(swapping, (best[1] - best[0]) * 1.5 + 1e-6, folder))
    assert checked.choose(context, utterance, readings) == winner
    assert ("fp32", len(readings)) in swapping.calls
    unchecked = Interpreter(SwappingBf16(inner, (winner, runner_up)))
    assert unchecked.choose(context, utterance, readings) == runner_up


def test_real_bf16_gives_fp32_s_label_on_every_pair_where_fp32_leads_by_the_gap(folder, pairs):
    """torch's bf16 autocast on this CPU (emulated where it has no bf16 instructions): every label is fp32's."""
    reference = _fp32(folder).probabilities(*pairs)
    bf16 = Interpreter.load(folder, backend="torch", precision="bf16", device="cpu")
    assert bf16.runtime.precision == "bf16" and bf16.classifier.gap == RECHECK_GAP
    assert bf16.runtime.signature().endswith("close calls (gap < 0.1) in fp32")  # cached answers key by it
    answered = bf16.probabilities(*pairs)
    assert (answered.argmax(1) == reference.argmax(1)).all()
    assert np.abs(answered - reference).max() <= 0.05
    from pragmeter.classify.backend import LocalClassifierBackend

    local = LocalClassifierBackend(str(folder), "cpu", 64, "torch", "bf16")  # eval --model local:FOLDER
    assert isinstance(local.classifier, Fp32Recheck)
    assert local.identity()["runtime"] == "torch bf16, close calls (gap < 0.1) in fp32"  # keys its cached answers
    off = Interpreter.load(folder, backend="torch", precision="bf16", device="cpu", fp32_recheck=False)
    assert not isinstance(off.classifier, Fp32Recheck) and off.classifier.precision == "bf16"


def test_fp32_answers_once_and_never_rechecks(folder):
    assert not isinstance(_fp32(folder).classifier, Fp32Recheck)


def test_the_gap_is_twice_a_recorded_check_s_largest_change_when_that_is_larger(tmp_path):
    model = tiny_nli_folder(tmp_path / "model")
    config = json.loads((model / "config.json").read_text())
    assert recheck_gap(model) == RECHECK_GAP  # no check recorded
    check = {"max_abs_probability_diff": 0.08, "max_abs_score_diff": 0.03, "label_agreement": 0.99, "pairs": 4000,
             "path": "openvino", "within_bounds": False}
    (model / "config.json").write_text(json.dumps({**config, "bf16_check": check}))
    assert recheck_gap(model) == pytest.approx(0.16)
    # a claim no measurement makes (too few pairs, an unknown path) does not count
    for bad in ({"pairs": 3}, {"path": "guess"}, {"max_abs_probability_diff": "lots"}):
        (model / "config.json").write_text(json.dumps({**config, "bf16_check": {**check, **bad}}))
        assert recheck_gap(model) == RECHECK_GAP
    (model / "config.json").write_text("{not json")
    assert recheck_gap(model) == RECHECK_GAP
    assert recheck_gap(None) == RECHECK_GAP


def test_close_calls_measure_the_gap_after_the_decision_bias():
    rows = np.array([[0.50, 0.45, 0.05], [0.80, 0.10, 0.10]])
    assert close_calls(rows, 0.1).tolist() == [True, False]
    labels = ["a", "b", "c"]
    # a bias that favours "b" makes the second row's decision a close one and the first a clear one
    biased = close_calls(rows, 0.1, {"b": float(np.log(7.5))}, labels)
    assert biased.tolist() == [False, True]
    assert close_calls(np.array([[1.0]]), 0.1).tolist() == [False]


def test_with_the_recheck_auto_runs_bf16_where_every_change_stays_in_a_looser_bound(tmp_path, on_host, monkeypatch):
    """With the recheck, a recorded check that flipped a label but kept every change within RECHECKED_MAX_ABS_DIFF
    lets ``auto`` choose bf16 on a bf16 CPU (the flips are close calls answered again); without it, fp32. A change
    beyond the looser bound, or a claim no measurement makes, keeps fp32 either way."""
    from pragmeter.interpreter.runtime import RECHECKED_MAX_ABS_DIFF, interpreter_runtime

    model = tiny_nli_folder(tmp_path / "model")
    config = json.loads((model / "config.json").read_text())
    flipped = {"max_abs_probability_diff": 0.03, "max_abs_score_diff": 0.02, "label_agreement": 0.997, "pairs": 1024,
               "path": "openvino", "within_bounds": False}  # what OpenVINO bf16 measured on an AVX-512 BF16 CPU

    def chosen(check, host="zen4", **wish):
        (model / "config.json").write_text(json.dumps({**config, "bf16_check": check}))
        on_host(host)
        return interpreter_runtime(model, **wish).precision

    assert chosen(flipped, fp32_recheck=True) == "bf16"
    assert chosen(flipped) == "fp32"  # no recheck: the strict bounds, a flipped label refuses bf16
    assert chosen(flipped, "zen1", fp32_recheck=True) == "fp32"  # no bf16 instructions
    beyond = {**flipped, "max_abs_probability_diff": RECHECKED_MAX_ABS_DIFF + 0.01}
    for refused in (beyond, {**flipped, "pairs": 12}, {**flipped, "max_abs_probability_diff": None}, None):
        assert chosen(refused, fp32_recheck=True) == "fp32"
    # Interpreter.load asks with its recheck (or without, when it is turned off)
    import pragmeter.interpreter.runtime as runtime

    asked = []
    judge = runtime.recorded_bf16_check
    monkeypatch.setattr(runtime, "recorded_bf16_check", lambda *a, **k: asked.append(a[1:] + tuple(k.values()))
                        or judge(*a, **k))
    Interpreter.load(model, backend="torch", device="cpu")
    Interpreter.load(model, backend="torch", device="cpu", fp32_recheck=False)
    assert asked == [(True,), (False,)]


@pytest.mark.parametrize("changes, within, says", [
    ((0.0324, 0.0323), False, "runs bf16 with the recheck (the default) and, without it, only when within the strict"),
    ((0.012, 0.009), True, "runs bf16 with the recheck (the default) and, without it, only when within the strict"),
    ((0.07, 0.03), False, "runs bf16 only when within the strict bounds"),
])
def test_a_shipped_card_says_what_auto_makes_of_its_bf16_check(changes, within, says, tmp_path, on_host):
    """The card's bf16 sentence (classify/card.py: bf16_line) and what ``auto`` chooses on a bf16 CPU from the same
    recorded check agree, with the recheck and without it."""
    from pragmeter.classify.card import bf16_line
    from pragmeter.interpreter.runtime import interpreter_runtime

    check = {"max_abs_probability_diff": changes[0], "max_abs_score_diff": changes[1], "label_agreement": 1.0,
             "pairs": 1024, "path": "torch", "within_bounds": within,
             "bounds": {"max_abs_probability_diff": 0.02, "max_abs_score_diff": 0.02, "label_agreement": 1.0}}
    line = bf16_line(check)
    assert says in line and f"{changes[0]}" in line and "1024 validation pairs" in line
    model = tiny_nli_folder(tmp_path / "model")
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "bf16_check": check}))
    on_host("zen4")
    with_recheck = interpreter_runtime(model, fp32_recheck=True).precision
    without = interpreter_runtime(model).precision
    assert with_recheck == ("bf16" if "with the recheck" in line else "fp32")
    assert without == ("bf16" if within else "fp32")
