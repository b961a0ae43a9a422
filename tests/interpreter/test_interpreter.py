"""The interpreter on a tiny INLI model (MiniLM trained for a few steps on real INLI rows, CPU): it loads by folder,
classifies pairs into INLI's four labels, ranks and chooses readings; its shipped low-rank form reloads to the same
outputs and refuses a damaged shard; `pragmeter interpret` answers on the command line and over a table with bad rows;
the local backend answers DRInQ items through it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from pragmeter.classify.job import run_recipe
from pragmeter.classify.model import TextClassifier
from pragmeter.classify.recipes import inli
from pragmeter.classify.training import FineTuneConfig
from pragmeter.cli import main
from pragmeter.errors import DataError, PragmeterError
from pragmeter.interpreter.model import LABELS, Interpreter, premise

CONFIG = FineTuneConfig(epochs=4, batch_size=8, lr=2e-4, head_lr_scale=10, warmup_ratio=0.0, max_length=64,
                        eval_batch_size=64)
CONTEXT = "Ann offers Bob a coffee at eleven at night."
UTTERANCE = "It would keep me awake."
READINGS = ["Bob does not want a coffee.", "Bob wants a coffee.", "Bob likes tea."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, data_root):
    """A 4-way INLI model trained on 32 real training pairs for 4 epochs (16 steps), and the recipe's data."""
    torch.set_num_threads(min(2, torch.get_num_threads()))
    data = inli.build("4way", root=data_root)
    data.train, data.val, data.test = data.train.head(32), data.val.head(16), data.test.head(16)
    folder = tmp_path_factory.mktemp("interpreter")
    run_recipe(data, "all-MiniLM-L6-v2", CONFIG, folder / "model", folder / "work", "cpu", "test", False)
    return data, folder / "model"


def test_premise_joins_context_and_quoted_utterance_as_inli_premises_read():
    assert premise(CONTEXT, UTTERANCE) == f'{CONTEXT} "{UTTERANCE}"'
    assert premise(CONTEXT, f'"{UTTERANCE}"') == f'{CONTEXT} "{UTTERANCE}"'  # already quoted: not quoted twice
    assert premise("  ", UTTERANCE) == f'"{UTTERANCE}"'


def test_interpreter_classifies_ranks_and_chooses(tiny):
    import pragmeter

    assert pragmeter.Interpreter is Interpreter  # the lazy top-level export
    _, folder = tiny
    model = Interpreter.load(folder, device="cpu")
    rows = model.classify([premise(CONTEXT, UTTERANCE)] * 3, READINGS)
    assert [list(row) for row in rows] == [list(LABELS)] * 3
    assert all(abs(sum(row.values()) - 1) < 1e-5 for row in rows)
    scores = model.scores(CONTEXT, UTTERANCE, READINGS)
    assert scores == pytest.approx([row["implied"] + row["explicit"] for row in rows], abs=1e-6)
    assert model.choose(CONTEXT, UTTERANCE, READINGS) == int(np.argmax(scores))
    with pytest.raises(PragmeterError, match="2 premises for 1 hypotheses"):
        model.classify(["a", "b"], ["c"])
    with pytest.raises(PragmeterError, match="hypothesis 1: empty"):
        model.classify(["a", "b"], ["c", " "])


def test_the_trained_interpreter_reads_inli_better_than_its_untrained_start(tiny):
    """Training moved the model towards INLI's labels on the pairs it saw (a real signal, not a fixed output)."""
    data, folder = tiny
    trained = Interpreter.load(folder, device="cpu")
    untrained = Interpreter(TextClassifier.from_encoder("all-MiniLM-L6-v2", trained.settings, "cpu", seed=0))
    gold = [LABELS.index(label) for label in data.train.labels]

    def loss(model):
        p = model.probabilities(data.train.texts, data.train.pairs)
        return float(-np.log(p[np.arange(len(gold)), gold]).mean())

    assert loss(trained) < loss(untrained)


def test_shipped_form_reloads_to_the_compressed_model_and_refuses_a_damaged_shard(tiny, tmp_path):
    from pragmeter.interpreter.release import ship
    from pragmeter.interpreter.shipped import SHARD_BYTES, load_shipped

    data, folder = tiny
    # Full rank (MiniLM is 384 wide) for every matrix but the word embeddings, cut to fit a shard.
    metrics = ship(folder, tmp_path / "shipped", 384, data.val, progress=False)
    files = sorted(p.name for p in (tmp_path / "shipped").iterdir())
    assert {"README.md", "config.json", "encoder-1.safetensors", "head.safetensors", "metrics.json"} <= set(files)
    assert "model.safetensors" not in files
    assert all(p.stat().st_size < SHARD_BYTES for p in (tmp_path / "shipped").glob("*.safetensors"))
    whole = TextClassifier.load(folder, "cpu", "fp32").probabilities(data.val.texts, data.val.pairs)
    shipped = Interpreter.load(tmp_path / "shipped", device="cpu", precision="fp32")
    again = shipped.probabilities(data.val.texts, data.val.pairs)
    assert np.abs(again - whole).max() < 0.02  # fp16 factors of (almost) every change at full rank
    predicted = [LABELS[i] for i in again.argmax(1)]
    assert metrics["val_compressed"]["accuracy"] == pytest.approx(
        np.mean([p == g for p, g in zip(predicted, data.val.labels)]))  # the measured model is the one that loads
    assert set(metrics["bf16_check"]) >= {"max_abs_score_diff", "label_agreement", "within_bounds"}
    config = json.loads((tmp_path / "shipped" / "config.json").read_text())
    assert config["bf16_check"] == metrics["bf16_check"] and config["pragmeter"]["labels"] == list(LABELS)
    card = (tmp_path / "shipped" / "README.md").read_text()
    assert "Written by an LLM" in card and "rank-384" in card

    assert metrics["val_compressed"]["predicted"] == "".join(str(LABELS.index(p)) for p in predicted)
    small = ship(folder, tmp_path / "rank2", 2, data.val, bf16_pairs=0, progress=False)  # rank 2 changes the model
    assert small["val_whole"] == metrics["val_whole"]
    assert small["bf16_check"]["pairs"] == 0 and not small["bf16_check"]["within_bounds"]  # not measured: fp32
    assert "bf16 was not checked" in (tmp_path / "rank2" / "README.md").read_text()
    shard = tmp_path / "rank2" / "encoder-1.safetensors"
    shard.write_bytes(shard.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(DataError, match="encoder-1.safetensors: sha256 differs"):
        load_shipped(tmp_path / "rank2", "cpu")


def test_recording_a_weight_in_a_shipped_folder_writes_its_card_again_with_the_score(tiny, tmp_path):
    """A shipped folder's card is written from its metrics; after record_weight it says the score the folder ranks
    readings by, and keeps what it said before (validation, bf16 check)."""
    from pragmeter.interpreter.release import ship
    from pragmeter.interpreter.weight import record_weight

    data, folder = tiny
    ship(folder, tmp_path / "shipped", 8, data.val.head(8), bf16_pairs=0, progress=False)
    before = (tmp_path / "shipped" / "README.md").read_text()
    assert "× P(explicit)" not in before
    record_weight(tmp_path / "shipped", 0.25, {"rule": "mean"})
    after = (tmp_path / "shipped" / "README.md").read_text()
    assert "P(implied) + 0.25 × P(explicit)" in after and after.startswith(before.split("bf16 on the CPU")[0])
    assert Interpreter.load(tmp_path / "shipped", backend="torch").explicit_weight == 0.25


def test_a_card_note_stays_when_the_card_is_written_again(tiny, tmp_path):
    """A paragraph added to a shipped card (add_card_note) lives in its metrics, so recording a weight afterwards, which
    writes the card again, keeps it; a folder that is not shipped, an empty note or notes that are not texts are
    refused, naming the file."""
    from pragmeter.interpreter.release import add_card_note, ship
    from pragmeter.interpreter.weight import record_weight

    data, folder = tiny
    shipped = tmp_path / "shipped"
    ship(folder, shipped, 8, data.val.head(8), bf16_pairs=0, progress=False)
    note = "`init-base` holds the default before this one, written out whole from its rank-64 form."
    add_card_note(shipped, note)
    add_card_note(shipped, note + "\n")  # the same paragraph: not added twice
    card = (shipped / "README.md").read_text()
    assert card.count(note) == 1 and card.index("## Data") < card.index(note) < card.index("## Reproduce")
    record_weight(shipped, 0.25, {"rule": "mean"})
    card = (shipped / "README.md").read_text()
    assert card.count(note) == 1 and "P(implied) + 0.25 × P(explicit)" in card
    assert json.loads((shipped / "metrics.json").read_text())["card_notes"] == [note]
    with pytest.raises(PragmeterError, match="a card note needs some text"):
        add_card_note(shipped, "  ")
    with pytest.raises(PragmeterError, match=r"metrics.json: not a shipped interpreter's metrics"):
        add_card_note(folder, note)  # the trained run, not its shipped form
    metrics = json.loads((shipped / "metrics.json").read_text())
    (shipped / "metrics.json").write_text(json.dumps({**metrics, "card_notes": [note, 3]}))
    with pytest.raises(PragmeterError, match=r"shipped/metrics.json: metrics field 'card_notes': expected a list"):
        record_weight(shipped, 0.5, {"rule": "mean"})
    with pytest.raises(PragmeterError, match=r"shipped/metrics.json: metrics field 'card_notes': expected a list"):
        add_card_note(shipped, "Another paragraph.")
    assert Interpreter.load(shipped, backend="torch").explicit_weight == 0.25  # refused before anything was written


def test_auto_runs_openvino_in_bf16_only_on_a_bf16_cpu_with_a_check_within_bounds(tiny, tmp_path, on_host):
    """The rule, on any machine (the host kind simulated): OpenVINO on a CPU, bf16 only with bf16 instructions and a
    recorded check within bounds; torch on a GPU device; a backend that cannot run the model refused in one line."""
    from pragmeter.interpreter.release import ship
    from pragmeter.interpreter.runtime import interpreter_runtime

    data, folder = tiny
    bf16_cpu, plain_cpu = "zen4", "zen1"

    def chosen(where, host, **wish):
        on_host(host)
        runtime = interpreter_runtime(where, **wish)
        return runtime.backend, runtime.precision

    assert chosen(folder, bf16_cpu) == ("openvino", "fp32")  # no check recorded
    ship(folder, tmp_path / "shipped", 8, data.val.head(8), bf16_pairs=0, progress=False)
    assert chosen(tmp_path / "shipped", bf16_cpu) == ("openvino", "fp32")  # shipped without a measured check
    config_path = tmp_path / "shipped" / "config.json"
    config = json.loads(config_path.read_text())
    within = {"max_abs_probability_diff": 0.01, "max_abs_score_diff": 0.015, "label_agreement": 1.0,
              "within_bounds": True, "pairs": 4096, "path": "openvino"}
    for recorded, expected in ((within, "bf16"), ({**within, "within_bounds": False}, "fp32"),
                               ({**within, "label_agreement": 0.995}, "fp32"),  # within the older bounds only
                               ({**within, "max_abs_probability_diff": 0.03}, "fp32"),
                               ({**within, "max_abs_score_diff": "0.01"}, "fp32")):  # not a number
        config["bf16_check"] = recorded
        config_path.write_text(json.dumps(config))
        assert chosen(tmp_path / "shipped", bf16_cpu) == ("openvino", expected)
        assert chosen(tmp_path / "shipped", plain_cpu) == ("openvino", "fp32")  # bf16 would only be emulated
    config["bf16_check"] = within
    config_path.write_text(json.dumps(config))
    assert chosen(tmp_path / "shipped", bf16_cpu, precision="fp32") == ("openvino", "fp32")
    assert chosen(tmp_path / "shipped", bf16_cpu, backend="torch") == ("torch", "fp32")
    assert chosen(tmp_path / "shipped", bf16_cpu, device="cuda") == ("torch", "fp16")
    with pytest.raises(PragmeterError, match="precision='bf16': needs a CPU with AVX-512 BF16 or AMX"):
        on_host(plain_cpu)
        interpreter_runtime(tmp_path / "shipped", precision="bf16")
    with pytest.raises(PragmeterError, match="backend='onnx': does not run this model"):
        interpreter_runtime(tmp_path / "shipped", backend="onnx")


def test_a_release_whose_bf16_is_outside_the_recheck_s_bound_keeps_layers_in_fp32(tiny, tmp_path, monkeypatch):
    """Where OpenVINO's bf16 moves a probability beyond the recheck's bound, ship() tries keeping encoder layers in
    fp32 (fewest first) on validation pairs beyond the check's, records the chosen ones with the check measured again
    on the check's own pairs, and the folder's bf16 then runs so."""
    from pragmeter.encoders.runtime import cpu_has_bf16

    if not cpu_has_bf16():
        pytest.skip("ship() measures OpenVINO's bf16 on a CPU with bf16 instructions")
    import pragmeter.interpreter.runtime as runtime
    from pragmeter.interpreter.release import choose_fp32_layers, fp32_layer_plans, ship

    data, folder = tiny
    within = runtime.bf16_within
    # the plain bf16 graph's check taken as outside the bound, whatever it measured here
    monkeypatch.setattr(runtime, "bf16_within", lambda check, fp32_recheck=False: bool(check.get("fp32_layers"))
                        and within(check, fp32_recheck))
    metrics = ship(folder, tmp_path / "kept", 384, data.val, bf16_pairs=8, progress=False)
    tried = metrics["bf16_fp32_layers_tried"]
    assert "fp32_layers" not in metrics["bf16_check_every_layer"] and metrics["bf16_check_every_layer"]["pairs"] == 8
    assert list(tried) == [",".join(map(str, plan)) for plan in fp32_layer_plans(6)]  # MiniLM's 6 layers
    kept = metrics["bf16_check"]["fp32_layers"]
    assert len(kept) == 1 and tried[",".join(map(str, kept))] == min(v for k, v in tried.items() if "," not in k)
    config = json.loads((tmp_path / "kept" / "config.json").read_text())
    assert config["bf16_check"] == metrics["bf16_check"] and config["bf16_check"]["pairs"] == 8
    reader = Interpreter.load(tmp_path / "kept", backend="openvino", precision="bf16", progress=False)
    assert reader.classifier.classifier.fp32_layers == tuple(kept)  # inside the recheck
    assert f"encoder layers {kept[0]} in fp32" in reader.runtime.signature()
    assert f"encoder layers {kept[0]} kept in fp32" in (tmp_path / "kept" / "README.md").read_text()

    monkeypatch.setattr(runtime, "RECHECKED_MAX_ABS_DIFF", 0.0)  # no plan can pass: none is chosen
    fp32 = Interpreter.load(tmp_path / "kept", backend="openvino", precision="fp32", progress=False)
    pairs = data.val.texts[8:12], data.val.pairs[8:12]
    chosen, again = choose_fp32_layers(tmp_path / "kept", 6, *pairs, fp32.probabilities(*pairs), fp32.meant)
    assert chosen == () and list(again) == list(tried)


def test_bf16_check_needs_every_probability_within_bounds_and_the_same_label_on_every_pair():
    from pragmeter.encoders.runtime import MAX_ABS_DIFF
    from pragmeter.interpreter.runtime import bf16_bounds

    fp32 = np.array([[0.70, 0.10, 0.10, 0.10], [0.40, 0.35, 0.15, 0.10]])
    assert bf16_bounds(fp32, fp32 + [[-0.01, 0.01, 0, 0], [0, 0, 0.01, -0.01]], [0, 1])["within_bounds"]
    moved = bf16_bounds(fp32, fp32 + [[0, 0, MAX_ABS_DIFF + 0.01, -MAX_ABS_DIFF - 0.01], [0] * 4], [0, 1])
    assert moved["max_abs_probability_diff"] == pytest.approx(MAX_ABS_DIFF + 0.01) and moved["max_abs_score_diff"] == 0
    assert not moved["within_bounds"]  # the score stayed, a label probability did not
    flipped = bf16_bounds(fp32, fp32 + [[0] * 4, [-0.03, 0.03, 0, 0]], [0, 1])
    assert flipped["label_agreement"] == 0.5 and not flipped["within_bounds"]


def _inli_pairs(data) -> tuple[list[str], list[str]]:
    """Real INLI pairs: validation and training rows, plus one pair longer than the model's token limit."""
    premises = list(data.val.texts) + list(data.train.texts)
    hypotheses = list(data.val.pairs) + list(data.train.pairs)
    return premises + [" ".join(premises[:6])], hypotheses + [hypotheses[0]]


def test_openvino_fp32_gives_torch_fp32_probabilities_on_inli_pairs(tiny, tmp_path):
    from pragmeter.classify.openvino import GRAPH_FILE, export_folder
    from pragmeter.encoders.fingerprint import SEAL_FILE
    from pragmeter.encoders.runtime import FP32_MAX_ABS_DIFF
    from pragmeter.interpreter.release import ship

    data, folder = tiny
    premises, hypotheses = _inli_pairs(data)
    torch_fp32 = Interpreter.load(folder, device="cpu", precision="fp32", backend="torch")
    fast = Interpreter.load(folder, precision="fp32", progress=False)
    assert fast.runtime.signature().startswith("backend=openvino|precision=fp32|device=cpu")
    assert torch_fp32.runtime.backend == "torch"
    expected = torch_fp32.probabilities(premises, hypotheses)
    assert np.abs(fast.probabilities(premises, hypotheses) - expected).max() < FP32_MAX_ABS_DIFF
    assert fast.classifier.truncated == torch_fp32.classifier.truncated >= 1  # the long pairs, cut alike
    assert {GRAPH_FILE, SEAL_FILE, "tokenizer.json"} <= {p.name for p in export_folder(folder).iterdir()}

    ship(folder, tmp_path / "shipped", 8, data.val.head(8), bf16_pairs=0, progress=False)  # on its base encoder
    shipped = Interpreter.load(tmp_path / "shipped", device="cpu", precision="fp32", backend="torch")
    fast = Interpreter.load(tmp_path / "shipped", backend="openvino", precision="fp32", progress=False)
    assert np.abs(fast.probabilities(premises, hypotheses)
                  - shipped.probabilities(premises, hypotheses)).max() < FP32_MAX_ABS_DIFF


def test_openvino_bf16_stays_within_the_bounds_of_torch_fp32(tiny):
    from pragmeter.encoders.runtime import MAX_ABS_DIFF, cpu_has_bf16
    from pragmeter.interpreter.runtime import bf16_bounds

    if not cpu_has_bf16():
        pytest.skip("this CPU has no bf16 instructions (the rule is tested on every CPU above)")
    data, folder = tiny
    premises, hypotheses = _inli_pairs(data)
    fp32 = Interpreter.load(folder, device="cpu", precision="fp32", backend="torch").probabilities(premises, hypotheses)
    fast = Interpreter.load(folder, precision="bf16", backend="openvino", progress=False)
    assert fast.runtime.precision == "bf16"
    bf16 = fast.probabilities(premises, hypotheses)
    check = bf16_bounds(fp32, bf16, fast.meant)
    assert check["max_abs_probability_diff"] <= MAX_ABS_DIFF and check["max_abs_score_diff"] <= MAX_ABS_DIFF
    # the label stays wherever fp32's lead is wider than the bound lets both probabilities move
    top = np.sort(fp32, axis=1)
    clear = top[:, -1] - top[:, -2] > 2 * MAX_ABS_DIFF
    assert (fp32.argmax(1) == bf16.argmax(1))[clear].all()


def test_a_damaged_or_foreign_openvino_export_is_set_aside_and_converted_again(tiny, tmp_path, caplog):
    import shutil

    from pragmeter.classify.openvino import export_folder
    from pragmeter.encoders.fingerprint import seal
    from pragmeter.encoders.runtime import FP32_MAX_ABS_DIFF

    data, folder = tiny
    premises, hypotheses = list(data.val.texts), list(data.val.pairs)
    expected = Interpreter.load(folder, device="cpu", precision="fp32", backend="torch").probabilities(premises, hypotheses)
    export = export_folder(folder)
    Interpreter.load(folder, precision="fp32", progress=False)  # converted (or found) and sealed
    weights = export / "model.bin"
    weights.write_bytes(weights.read_bytes()[:-64] + b"\0" * 64)  # damaged in place
    with caplog.at_level("WARNING", logger="pragmeter"):
        again = Interpreter.load(folder, precision="fp32", progress=False)
    assert "files changed since it was built; set aside and converted again" in caplog.text
    assert np.abs(again.probabilities(premises, hypotheses) - expected).max() < FP32_MAX_ABS_DIFF

    other = tmp_path / "other"  # a sealed export of another model, copied in under this model's key
    shutil.copytree(folder, other)
    (other / "config.json").write_text((other / "config.json").read_text().replace("\n", "\n ", 1))
    assert export_folder(other) != export
    foreign = tmp_path / "foreign"  # sealed as its conversion seals it (built from its own key), not converted here
    shutil.copytree(export, foreign)
    seal(foreign, export_folder(other).name)
    shutil.rmtree(export)
    shutil.copytree(foreign, export)
    caplog.clear()
    with caplog.at_level("WARNING", logger="pragmeter"):
        again = Interpreter.load(folder, precision="fp32", progress=False)
    assert "built from something else; set aside and converted again" in caplog.text
    assert np.abs(again.probabilities(premises, hypotheses) - expected).max() < FP32_MAX_ABS_DIFF


def test_interpret_command_runs_the_backend_and_precision_asked(tiny, capsys):
    _, folder = tiny
    args = ["interpret", UTTERANCE, "--context", CONTEXT, *sum((["--reading", r] for r in READINGS), []),
            "--model", str(folder), "--no-progress"]
    printed = {}
    for backend in ("torch", "openvino"):
        assert main([*args, "--backend", backend, "--precision", "fp32"]) == 0
        printed[backend] = capsys.readouterr().out.splitlines()
    scores = {backend: [float(line.split()[1]) for line in lines[1:]] for backend, lines in printed.items()}
    assert scores["openvino"] == pytest.approx(scores["torch"], abs=2e-3)  # printed to 3 decimals
    with pytest.raises(SystemExit):  # not a choice of this command
        main([*args, "--backend", "onnx"])
    assert "invalid choice: 'onnx'" in capsys.readouterr().err
    if not __import__("pragmeter.encoders.runtime", fromlist=["cpu_has_bf16"]).cpu_has_bf16():
        assert main([*args, "--precision", "bf16"]) != 0
        message = capsys.readouterr().err.strip()
        assert len(message.splitlines()) == 1 and "--precision bf16: needs a CPU with AVX-512 BF16 or AMX" in message


def test_interpret_command_prints_each_reading_and_marks_the_choice(tiny, capsys):
    _, folder = tiny
    assert main(["interpret", UTTERANCE, "--context", CONTEXT, *sum((["--reading", r] for r in READINGS), []),
                 "--model", str(folder), "--device", "cpu"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"premise: {premise(CONTEXT, UTTERANCE)}"
    chosen = Interpreter.load(folder, device="cpu").choose(CONTEXT, UTTERANCE, READINGS)
    assert [line.startswith("*") for line in out[1:]] == [i == chosen for i in range(3)]
    assert main(["interpret", UTTERANCE, "--reading", "only one", "--model", str(folder)]) == 2
    assert "two or more --reading" in capsys.readouterr().err


def test_interpret_file_mode_keeps_every_row_and_names_the_bad_ones(tiny, tmp_path, capsys):
    _, folder = tiny
    table = pd.DataFrame({
        "context": [CONTEXT, CONTEXT, "", CONTEXT],
        "utterance": [UTTERANCE, "", UTTERANCE, UTTERANCE],
        "readings": [json.dumps(READINGS), json.dumps(READINGS), "not a list", json.dumps(["one"])]})
    source, output = tmp_path / "in.csv", tmp_path / "out.csv"
    table.to_csv(source, index=False)
    assert main(["interpret", "--input", str(source), "--output", str(output), "--model", str(folder),
                 "--device", "cpu", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"{source}: data row 2: field 'utterance' is empty" in err and "3 row(s) not interpreted" in err
    out = pd.read_csv(output, keep_default_na=False)
    assert list(out.columns[:3]) == ["context", "utterance", "readings"] and len(out) == 4
    model = Interpreter.load(folder, device="cpu")
    assert json.loads(out["scores"][0]) == pytest.approx(model.scores(CONTEXT, UTTERANCE, READINGS), abs=1e-5)
    assert list(out["choice"]) == [model.choose(CONTEXT, UTTERANCE, READINGS), -1, -1, -1]
    assert out["prediction_error"][2] == "field 'readings' is not a JSON list of texts"
    assert out["prediction_error"][3] == "field 'readings' must be a list of at least two texts"

    lines = tmp_path / "out.jsonl"  # a JSON line holds the scores as a list, not as the text of one
    assert main(["interpret", "--input", str(source), "--output", str(lines), "--model", str(folder),
                 "--device", "cpu", "--no-progress"]) == 0
    records = [json.loads(line) for line in lines.read_text(encoding="utf-8").splitlines()]
    assert records[0]["scores"] == pytest.approx(model.scores(CONTEXT, UTTERANCE, READINGS), abs=1e-5)
    assert [record["scores"] for record in records[1:]] == [None, None, None]

    pairs = tmp_path / "pairs.jsonl"
    pd.DataFrame({"premise": ["Ann says, \"Coffee?\" Bob responds, \"It would keep me awake.\""],
                  "hypothesis": ["Bob does not want coffee."]}).to_json(pairs, orient="records", lines=True)
    assert main(["interpret", "--input", str(pairs), "--output", str(tmp_path / "pairs.csv"), "--model",
                 str(folder), "--device", "cpu", "--no-progress"]) == 0
    labelled = pd.read_csv(tmp_path / "pairs.csv")
    assert {f"p_{label}" for label in LABELS} <= set(labelled.columns)
    assert abs(sum(labelled[f"p_{label}"][0] for label in LABELS) - 1) < 1e-4

    wrong = tmp_path / "wrong.csv"
    pd.DataFrame({"text": ["a"]}).to_csv(wrong, index=False)
    capsys.readouterr()
    assert main(["interpret", "--input", str(wrong), "--output", str(tmp_path / "w.csv"), "--model",
                 str(folder)]) != 0
    message = capsys.readouterr().err.strip()
    assert len(message.splitlines()) == 1 and str(wrong) in message and "context, utterance and readings" in message


def test_local_backend_answers_drinq_through_the_interpreter(tiny, tmp_path, data_root):
    from pragmeter.datasets.drinq import load_drinq
    from pragmeter.interpreter.drinq import premise as drinq_premise

    _, folder = tiny
    assert main(["eval", "--tasks", "drinq_vanilla", "--model", f"local:{folder}", "--model-args",
                 "device=cpu,batch_size=16", "--output", str(tmp_path), "--limit", "6", "--no-progress",
                 "--log-samples", "--data-root", str(data_root)]) == 0
    result = json.loads((tmp_path / "results.json").read_text())["results"]["drinq_vanilla"]
    assert result["n_items"] == 6 and result["errors"] == 0 and result["invalid"] == 0
    samples = [json.loads(line) for line in (tmp_path / "samples_drinq_vanilla.jsonl").read_text().splitlines()]
    model = Interpreter.load(folder, device="cpu")  # as the local backend runs it: OpenVINO on a CPU
    items = {item.id: item for item in load_drinq(data_root)}
    for sample in samples:
        item = items[sample["item_id"]]
        scores = model.scores_many([drinq_premise(item)], [[text for _, text in item.options]])[0]
        assert sample["parsed"] == item.options[int(np.argmax(scores))][0]


def test_local_backend_runs_an_interpreter_as_interpreter_load_resolves_it_and_keys_answers_by_runtime(tiny):
    """On a CPU, ``auto`` is OpenVINO (fp32: this folder records no bf16 check); ``backend=torch`` is asked for
    with a model argument; the runtime is part of the identity (the answer cache's key), so the two never share
    answers; a backend the model lacks is refused in one line."""
    from pragmeter.classify.backend import LocalClassifierBackend
    from pragmeter.encoders.runtime import FP32_MAX_ABS_DIFF

    _, folder = tiny
    graph = LocalClassifierBackend.from_args(str(folder), {"device": "cpu"})
    plain = LocalClassifierBackend.from_args(str(folder), {"device": "cpu", "backend": "torch"})
    assert (graph.runtime.backend, graph.runtime.precision) == ("openvino", "fp32")
    assert (plain.runtime.backend, plain.runtime.precision) == ("torch", "fp32")
    assert graph.identity()["runtime"] == "openvino fp32" and plain.identity()["runtime"] == "torch fp32"
    assert {k: v for k, v in graph.identity().items() if k != "runtime"} == \
        {k: v for k, v in plain.identity().items() if k != "runtime"}
    pairs = [premise(CONTEXT, UTTERANCE)] * len(READINGS)
    assert np.abs(graph.classifier.probabilities(pairs, READINGS) - plain.classifier.probabilities(pairs, READINGS)
                  ).max() < FP32_MAX_ABS_DIFF
    with pytest.raises(PragmeterError, match="precision='int4': must be one of"):
        LocalClassifierBackend.from_args(str(folder), {"device": "cpu", "precision": "int4"})


def test_local_backend_reads_the_request_s_item_never_the_prompt_s_prose(tiny):
    """The classifier answers from the structured input each request carries: the same answer whatever the messages
    say (a changed template, a prompt no task built), and the task's answer text for the reading it chooses."""
    import asyncio

    from pragmeter.classify.backend import LocalClassifierBackend
    from pragmeter.eval.multiple_choice import ChoiceItem
    from pragmeter.llm.request import ChoiceInput, PairInput, Request

    _, folder = tiny
    backend = LocalClassifierBackend.from_args(str(folder), {"device": "cpu", "backend": "torch"})
    assert backend.kinds == {"pair", "choice"}
    words = backend.classifier.settings.answer_words
    reworded = [{"role": "user", "content": "A template that says nothing of premises or hypotheses."}]
    pair = PairInput(premise(CONTEXT, UTTERANCE), READINGS[0])
    choice = ChoiceInput(ChoiceItem("x", CONTEXT, UTTERANCE, tuple(zip("ABC", READINGS)), "A", UTTERANCE),
                         {"A": "first", "B": "second", "C": "third"})

    async def ask():
        return await asyncio.gather(backend.complete(Request(reworded, input=pair)),
                                    backend.complete(Request(reworded, input=choice)))

    labelled, chosen = asyncio.run(ask())
    decided = backend.classifier.decide(backend.classifier.probabilities([pair.premise], [pair.hypothesis]))[0]
    assert labelled.text == words.get(decided, decided)
    assert chosen.text == ("first", "second", "third")[backend.interpreter.choose(CONTEXT, UTTERANCE, READINGS)]
    assert backend.unaskable(Request(reworded)) == "local classifier: it answers choice and pair requests, not chat"


def test_a_task_whose_requests_the_local_model_cannot_answer_is_refused_before_any_request(tiny, tmp_path, data_root,
                                                                                         capsys):
    """A pair model asked ISHate's single texts: one line naming the task, the kind it asks and the kinds the model
    answers, and no output written."""
    _, folder = tiny
    assert main(["eval", "--tasks", "ishate_subtle", "--model", f"local:{folder}", "--model-args", "device=cpu",
                 "--output", str(tmp_path / "out"), "--limit", "3", "--no-progress",
                 "--data-root", str(data_root)]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error == (f"pragmeter eval: error: task ishate_subtle asks text requests, and the model {folder} answers "
                     "only choice and pair requests")
    assert not (tmp_path / "out" / "results.json").exists()


def test_load_without_a_model_names_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PRAGMETER_INTERPRETER", str(tmp_path / "absent"))
    with pytest.raises(PragmeterError, match="no interpreter at .*absent.*: give a model folder or a packaged name"):
        Interpreter.load()


def test_local_backend_answers_the_floyd_battery_with_its_scenario_through_the_interpreter(tiny, tmp_path, data_root):
    from pragmeter.eval import registry

    _, folder = tiny
    assert main(["eval", "--tasks", "floyd", "--model", f"local:{folder}", "--model-args", "device=cpu",
                 "--output", str(tmp_path), "--limit", "5", "--no-progress", "--log-samples",
                 "--data-root", str(data_root)]) == 0
    result = json.loads((tmp_path / "results.json").read_text())["results"]["floyd"]
    assert result["n_items"] == 5 and result["errors"] == 0 and result["invalid"] == 0
    samples = [json.loads(line) for line in (tmp_path / "samples_floyd.jsonl").read_text().splitlines()]
    items = {item.id: item for item in registry.instantiate("floyd", [], data_root=data_root)[0].items()}
    model = Interpreter.load(folder, device="cpu")  # as the local backend runs it: OpenVINO on a CPU
    for sample in samples:
        item = items[sample["item_id"]]
        chosen = model.choose(item.context, item.utterance, item.readings)
        assert sample["parsed"] == item.keys[chosen]


def test_the_speed_benchmark_runs_every_setting_on_one_folder(tiny, benchmark_script):
    """benchmarks/interpreter_speed.py, a quick run: torch fp32, OpenVINO fp32, OpenVINO bf16 with and without its
    fp32 recheck (where the CPU has bf16) and sentence-transformers' CrossEncoder on the exported folder, on the same
    pairs, each with its runtime and its distance from torch fp32 (no timing is asserted)."""
    from pragmeter.encoders.runtime import FP32_MAX_ABS_DIFF, MAX_ABS_DIFF, cpu_has_bf16

    data, folder = tiny
    result = benchmark_script("interpreter_speed").measure(str(folder), list(data.val.texts), list(data.val.pairs),
                                                 batch_size=8, repeats=1, warmup=4)
    runs = result["runs"]
    assert list(runs) == ["torch fp32 (before)", "openvino fp32", "openvino bf16", "openvino bf16 raw",
                          "crossencoder fp32", "torch fp32 (after)"]
    assert runs["crossencoder fp32"]["runtime"].startswith("sentence-transformers CrossEncoder|precision=fp32")
    assert runs["crossencoder fp32"]["max_abs_probability_diff"] < FP32_MAX_ABS_DIFF  # the same model, exported
    assert runs["openvino fp32"]["runtime"].startswith("backend=openvino|precision=fp32")
    assert runs["openvino fp32"]["max_abs_probability_diff"] < FP32_MAX_ABS_DIFF
    assert runs["torch fp32 (after)"]["max_abs_probability_diff"] < FP32_MAX_ABS_DIFF
    if cpu_has_bf16():
        assert runs["openvino bf16 raw"]["max_abs_probability_diff"] <= MAX_ABS_DIFF
        assert runs["openvino bf16 raw"]["rechecked_in_fp32"] == 0
        # the close calls answered again in fp32: fp32's label wherever bf16 could have moved it
        assert runs["openvino bf16"]["label_agreement"] >= runs["openvino bf16 raw"]["label_agreement"]
    else:
        assert "skipped" in runs["openvino bf16"] and "skipped" in runs["openvino bf16 raw"]
    assert runs["openvino fp32"]["rechecked_in_fp32"] == 0
    assert all(run["pairs_per_second"] > 0 for run in runs.values() if "skipped" not in run)
    choose = benchmark_script("interpreter_speed").choose_latency(str(folder), calls=3)
    assert choose["calls"] == 3 and 0 < choose["median_s"] <= choose["max_s"]
    assert choose["runtime"].startswith("backend=")
