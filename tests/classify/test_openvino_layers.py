"""bf16 with some encoder layers kept in fp32: the OpenVINO graph of a classifier cut between layers into parts of one
precision each (classify/openvino.py: split_by_precision) gives the whole graph's logits when every part runs fp32;
a folder whose bf16 check records kept layers runs bf16 so, says so in its runtime signature, and a recorded field
that is not layer numbers is an error naming the file and field (an untrusted config). Tested on a tiny BERT NLI
model written on the spot with real INLI pairs; the bf16 runs need a CPU with bf16 instructions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pragmeter.classify.openvino import HIDDEN, OpenVinoClassifier, layer_outputs, split_by_precision
from pragmeter.classify.recipes import inli
from pragmeter.encoders.runtime import Runtime, cpu_has_bf16
from pragmeter.errors import PragmeterError
from pragmeter.testing.tiny_nli import tiny_nli_folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_nli_folder(tmp_path_factory.mktemp("nli") / "model", seed=5)


@pytest.fixture(scope="module")
def pairs(data_root):
    val = inli.build("4way", root=data_root).val.head(48)
    return list(val.texts), list(val.pairs)


@pytest.fixture(scope="module")
def fp32(folder):
    return OpenVinoClassifier(folder, Runtime("openvino", "fp32"), progress=False)


def with_check(folder, tmp_path, check):
    """A copy of ``folder`` whose config records ``check`` as its bf16 check."""
    import shutil

    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "bf16_check": check}))
    return copy


def test_a_graph_cut_between_layers_gives_the_whole_graph_s_logits(fp32, pairs):
    import openvino as ov

    core = ov.Core()
    whole = core.read_model(str(fp32.path / "model.xml"))
    assert len(layer_outputs(whole)) == 2  # the tiny model's two layers, found by name
    parts = split_by_precision(whole, "bf16", [1])
    assert [precision for _, precision in parts] == ["bf16", "fp32"]
    compiled = [core.compile_model(part, "CPU", {"INFERENCE_PRECISION_HINT": "f32"}) for part, _ in parts]
    assert HIDDEN not in {name for port in compiled[0].inputs for name in port.get_names()}
    assert HIDDEN in {name for port in compiled[1].inputs for name in port.get_names()}

    encoded = fp32.tokenizer(*pairs, truncation=True, max_length=fp32.settings.max_length)
    chained, direct = [], []
    for row in range(len(pairs[0])):
        features = fp32.features(encoded, [row])
        hidden = compiled[0]({k: v for k, v in features.items()
                              if k in {n for p in compiled[0].inputs for n in p.get_names()}})[0]
        second = {n for p in compiled[1].inputs for n in p.get_names()}
        chained.append(compiled[1]({**{k: v for k, v in features.items() if k in second}, HIDDEN: hidden})[0])
        direct.append(fp32._compiled(features)[0])
    np.testing.assert_allclose(np.concatenate(chained), np.concatenate(direct), atol=1e-5)
    # every layer in one precision is one part; a layer the encoder lacks is refused
    assert len(split_by_precision(whole, "bf16", [0, 1])) == 1
    with pytest.raises(PragmeterError, match="layers 0 to 1"):
        split_by_precision(whole, "bf16", [2])


def test_bf16_runs_the_layers_its_check_recorded_in_fp32_and_says_so(folder, fp32, pairs, tmp_path):
    if not cpu_has_bf16():
        pytest.skip("bf16 runs on a CPU with bf16 instructions")
    from pragmeter.interpreter.model import Interpreter

    kept = with_check(folder, tmp_path, {"max_abs_probability_diff": 0.01, "max_abs_score_diff": 0.01,
                                         "label_agreement": 1.0, "pairs": 1024, "path": "openvino",
                                         "within_bounds": True, "fp32_layers": [1]})
    reader = Interpreter.load(kept, backend="openvino", precision="bf16", progress=False, fp32_recheck=False)
    assert reader.classifier.fp32_layers == (1,) and len(reader.classifier._parts) == 2
    assert "encoder layers 1 in fp32" in reader.runtime.signature()
    mixed = reader.classifier.probabilities(*pairs)
    plain = OpenVinoClassifier(kept, Runtime("openvino", "bf16"), progress=False, fp32_layers=())
    reference = fp32.probabilities(*pairs)
    # the cut graph runs: its numbers are neither the plain bf16 graph's nor far from fp32's
    assert not np.array_equal(mixed, plain.probabilities(*pairs))
    assert np.abs(mixed - reference).max() < 0.05
    # batched on several infer requests, each pair's probabilities as when asked alone
    alone = np.concatenate([reader.classifier.probabilities([t], [h]) for t, h in zip(*pairs)][:6])
    np.testing.assert_allclose(mixed[:6], alone, atol=0.02)


@pytest.mark.parametrize("layers", ["6-8", [1, 1], [-1], [True], {"a": 1}])
def test_recorded_layers_that_are_not_layer_numbers_name_the_file_and_field(layers, folder, tmp_path):
    from pragmeter.interpreter.runtime import bf16_claim_problem, recorded_fp32_layers

    check = {"max_abs_probability_diff": 0.01, "max_abs_score_diff": 0.01, "label_agreement": 1.0, "pairs": 1024,
             "path": "openvino", "within_bounds": True, "fp32_layers": layers}
    broken = with_check(folder, tmp_path, check)
    with pytest.raises(PragmeterError, match=r"config\.json: field bf16_check\.fp32_layers"):
        recorded_fp32_layers(broken)
    assert "fp32_layers" in bf16_claim_problem(check)  # so ``auto`` does not believe the check: fp32


def test_a_recorded_layer_the_encoder_lacks_is_an_error_naming_the_file_and_field(folder, tmp_path):
    check = {"max_abs_probability_diff": 0.01, "max_abs_score_diff": 0.01, "label_agreement": 1.0, "pairs": 1024,
             "path": "openvino", "within_bounds": True, "fp32_layers": [1, 40]}
    beyond = with_check(folder, tmp_path, check)
    with pytest.raises(PragmeterError, match=r"layers \[40\] in fp32: the encoder has layers 0 to 1 \(.*config\.json: "
                                             r"field bf16_check\.fp32_layers\)"):
        OpenVinoClassifier(beyond, Runtime("openvino", "bf16"), progress=False)  # cut before any bf16 compile


def test_layers_kept_in_fp32_are_a_claim_only_openvino_makes(folder, tmp_path):
    from pragmeter.interpreter.runtime import bf16_claim_problem, recorded_fp32_layers

    check = {"max_abs_probability_diff": 0.01, "max_abs_score_diff": 0.01, "label_agreement": 1.0, "pairs": 1024,
             "path": "torch", "within_bounds": True, "fp32_layers": [0]}
    assert "only OpenVINO" in bf16_claim_problem(check)
    assert bf16_claim_problem({**check, "path": "openvino"}) is None
    assert recorded_fp32_layers(with_check(folder, tmp_path, {**check, "path": "openvino"})) == (0,)
    assert recorded_fp32_layers(folder) == ()  # a folder that records no check keeps none


def test_the_layer_plans_a_release_tries_go_from_fewest_to_most():
    from pragmeter.interpreter.release import fp32_layer_plans

    plans = fp32_layer_plans(12)
    assert plans[:4] == [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10, 11)]
    assert plans[4:] == [tuple(range(0, 6)), tuple(range(3, 9)), tuple(range(6, 12))]
    assert [len(plan) for plan in plans] == sorted(len(plan) for plan in plans)
    assert fp32_layer_plans(2) == [(0,), (1,)]
