"""A shipped interpreter as a peft LoRA adapter. On the fast MiniLM interpreter, every detail of the form: written from
its shipped folder, its tensor names and shapes are those peft itself saves for the same adapter config; opened
through peft and through pragmeter's own reader it gives the shipped folder's probabilities and labels on INLI
validation pairs (fp32, torch); a tampered adapter (a NaN, a wrong shape, an unknown module, a planted link, a
replaced file) is refused in one line before anything is applied. On the default (an mpnet): its peft form, through
both readers, gives the default's own probabilities."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from pragmeter.cli import main
from pragmeter.errors import DataError, PragmeterError
from pragmeter.interpreter.adapter import (ADAPTER_CONFIG, ADAPTER_KEY, ADAPTER_WEIGHTS, EMBEDDING_A, EMBEDDING_B,
                                           LORA_A, LORA_B, PREFIX, TARGET_BIAS, export_adapter, is_adapter,
                                           load_adapter)
from pragmeter.interpreter.hub import FAST_INTERPRETER, MODELS_DIR
from pragmeter.interpreter.model import Interpreter
from pragmeter.interpreter.shipped import SHARD_BYTES

FOLDER = MODELS_DIR / FAST_INTERPRETER
PAIRS = 64  # INLI validation pairs compared
TOLERANCE = 1e-4  # fp32 on the CPU: the same weights summed in another order
QUERY = "bert.encoder.layer.0.attention.self.query"
WORDS = "bert.embeddings.word_embeddings"


@pytest.fixture(scope="module")
def adapter(tmp_path_factory) -> Path:
    return export_adapter(FOLDER, tmp_path_factory.mktemp("peft") / "interpreter-peft")


@pytest.fixture(scope="module")
def pairs(data_root):
    from pragmeter.classify.recipes.inli import build

    val = build("4way", root=data_root).val
    return val.texts[:PAIRS], val.pairs[:PAIRS]


@pytest.fixture(scope="module")
def shipped(pairs):
    model = Interpreter.load(FOLDER, device="cpu", precision="fp32", backend="torch", progress=False)
    return model.probabilities(*pairs), model.labels, model.classifier


def weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / ADAPTER_WEIGHTS))


def test_the_adapter_holds_the_shipped_factors_under_peft_names(adapter):
    from safetensors.torch import load_file

    config = json.loads((adapter / ADAPTER_CONFIG).read_text())
    assert config["peft_type"] == "LORA" and config["task_type"] == "SEQ_CLS"
    assert config["base_model_name_or_path"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert config["lora_alpha"] == config["r"] and config["alpha_pattern"] == config["rank_pattern"]  # scaling 1
    assert config["bias"] == "lora_only" and "classifier" in config["modules_to_save"]
    assert "bert.embeddings.LayerNorm" in config["modules_to_save"]
    shards = {}
    for entry in json.loads((FOLDER / "config.json").read_text())["encoder_weights"]:
        shards.update(load_file(str(FOLDER / entry["file"])))
    changed = {"bert." + name[:-len(".weight.up")] for name in shards if name.endswith(".weight.up")}
    assert sorted(config["target_modules"]) == sorted(changed) and QUERY in changed and WORDS in changed
    tensors = weights(adapter)
    up, down = shards["encoder.layer.0.attention.self.query.weight.up"], shards[
        "encoder.layer.0.attention.self.query.weight.down"]
    assert tensors[PREFIX + QUERY + LORA_B].equal(up) and tensors[PREFIX + QUERY + LORA_A].equal(down)
    assert tensors[PREFIX + QUERY + TARGET_BIAS].equal(shards["encoder.layer.0.attention.self.query.bias"])
    words_up = shards["embeddings.word_embeddings.weight.up"]  # (30522, rank): peft keeps an embedding's transposed
    assert tensors[PREFIX + WORDS + EMBEDDING_A].equal(words_up.t())
    assert tensors[PREFIX + WORDS + EMBEDDING_B].equal(shards["embeddings.word_embeddings.weight.down"].t())
    assert config["rank_pattern"][WORDS] == words_up.shape[1] != config["r"]
    head = load_file(str(FOLDER / "head.safetensors"))
    assert all(tensors[PREFIX + name].equal(tensor) for name, tensor in head.items())
    folder_config = json.loads((adapter / "config.json").read_text())
    assert "encoder_weights" not in folder_config and len(folder_config[ADAPTER_KEY]) == 2
    assert folder_config["pragmeter"] == json.loads((FOLDER / "config.json").read_text())["pragmeter"]
    # every file but the one weights file peft reads stays within the package's per-file budget
    assert all(path.stat().st_size < SHARD_BYTES for path in adapter.iterdir() if path.name != ADAPTER_WEIGHTS)
    card = (adapter / "README.md").read_text()
    assert 'library_name: "peft"' in card and "PeftModel.from_pretrained" in card and is_adapter(adapter)


def test_peft_saves_the_same_names_and_shapes_for_that_adapter_config(adapter):
    """peft's own saving of a model wrapped with this folder's adapter config gives exactly the file's tensor names,
    each with the file's shape."""
    from peft import LoraConfig, get_peft_model, get_peft_model_state_dict
    from transformers import AutoConfig, AutoModelForSequenceClassification

    from pragmeter.encoders.registry import quiet_loading, require_encoder

    config = LoraConfig.from_pretrained(str(adapter))
    with quiet_loading():
        base = AutoModelForSequenceClassification.from_pretrained(
            require_encoder("all-MiniLM-L6-v2"), config=AutoConfig.from_pretrained(adapter))
    saved = get_peft_model_state_dict(get_peft_model(base, config), save_embedding_layers=False)
    ours = weights(adapter)
    assert sorted(saved) == sorted(ours)
    assert all(tuple(saved[name].shape) == tuple(ours[name].shape) for name in ours)


def test_pragmeters_own_reader_gives_the_shipped_probabilities_and_labels(adapter, pairs, shipped):
    probabilities, labels, _ = shipped
    classifier = load_adapter(adapter, "cpu", "fp32", reader="pragmeter")
    assert classifier.adapter_reader == "pragmeter" and classifier.labels == labels
    ours = classifier.probabilities(*pairs)
    assert ours.shape == (PAIRS, 4) and len({tuple(np.round(row, 5)) for row in ours}) > PAIRS // 2
    assert float(np.abs(ours - probabilities).max()) <= TOLERANCE
    assert (ours.argmax(1) == probabilities.argmax(1)).all()


def test_interpreter_load_opens_the_adapter_through_peft_to_the_shipped_probabilities(adapter, pairs, shipped):
    """Interpreter.load (torch: classify/loading.py) recognises the folder and, with peft installed, has peft apply
    it (PeftModel.from_pretrained, merge_and_unload)."""
    from pragmeter.classify.loading import weights_file

    probabilities, labels, _ = shipped
    model = Interpreter.load(adapter, device="cpu", precision="fp32", backend="torch", progress=False)
    assert model.classifier.adapter_reader == "peft" and model.labels == labels
    ours = model.probabilities(*pairs)
    assert float(np.abs(ours - probabilities).max()) <= TOLERANCE
    assert (ours.argmax(1) == probabilities.argmax(1)).all()
    assert weights_file(adapter) == adapter / "config.json"  # what run records identify the model by
    # the card's and docs/interpreter.md's recipe, peft alone, on the installed copy of the base encoder
    from peft import PeftModel
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    from pragmeter.encoders.registry import quiet_loading, require_encoder

    base_name = require_encoder("all-MiniLM-L6-v2")
    with quiet_loading():
        base = AutoModelForSequenceClassification.from_pretrained(base_name,
                                                                  config=AutoConfig.from_pretrained(adapter))
    peft_model = PeftModel.from_pretrained(base, str(adapter)).merge_and_unload().eval()
    inputs = AutoTokenizer.from_pretrained(base_name)(pairs[0][:8], pairs[1][:8], truncation=True, max_length=128,
                                                      padding=True, return_tensors="pt")
    with torch.no_grad():
        alone = peft_model(**inputs).logits.softmax(-1).numpy()
    assert float(np.abs(alone - probabilities[:8]).max()) <= TOLERANCE


def test_the_default_loads_from_its_peft_form_to_its_own_probabilities(pairs, tmp_path):
    """The default interpreter (None: whatever the package ships as default), exported in the peft form and opened by
    peft and by pragmeter's reader, gives the default's probabilities and labels on INLI validation pairs."""
    texts, hypotheses = pairs[0][:16], pairs[1][:16]
    default = Interpreter.load(None, device="cpu", precision="fp32", backend="torch", progress=False)
    expected = default.probabilities(texts, hypotheses)
    adapter = export_adapter(None, tmp_path / "default-peft")
    config = json.loads((adapter / ADAPTER_CONFIG).read_text())
    assert config["base_model_name_or_path"].endswith(default.settings.base_encoder)
    for reader in ("peft", "pragmeter"):
        classifier = load_adapter(adapter, "cpu", "fp32", reader=reader)
        assert classifier.adapter_reader == reader and classifier.labels == default.labels
        ours = classifier.probabilities(texts, hypotheses)
        assert float(np.abs(ours - expected).max()) <= TOLERANCE
        assert (ours.argmax(1) == expected.argmax(1)).all()


def test_factors_as_compress_returns_them_are_written_as_an_adapter_of_their_rank(pairs, shipped, tmp_path):
    """The release path's form (compress: factors by encoder name, the head, the classifier running the compressed
    encoder), here the shipped factors cut to rank 8, written with save_adapter, loads back to that model."""
    from safetensors.torch import load_file

    from pragmeter.encoders.low_rank import apply_changes
    from pragmeter.interpreter.adapter import save_adapter
    from pragmeter.interpreter.shipped import base_weights

    classifier = copy.deepcopy(shipped[2])  # the shipped folder's classifier, loaded once for the module
    factors = {}
    for entry in json.loads((FOLDER / "config.json").read_text())["encoder_weights"]:
        factors.update(load_file(str(FOLDER / entry["file"])))
    factors = {name: tensor[:, :8] if name.endswith(".up") else tensor[:8] if name.endswith(".down") else tensor
               for name, tensor in factors.items()}
    encoder = base_weights("all-MiniLM-L6-v2")
    apply_changes(encoder, factors, "rank 8", "all-MiniLM-L6-v2")
    classifier.model.base_model.load_state_dict(encoder, strict=False)  # as compress() leaves the classifier
    head = load_file(str(FOLDER / "head.safetensors"))
    folder = save_adapter(classifier, factors, head, tmp_path / "rank8", "# rank 8\n")
    config = json.loads((folder / ADAPTER_CONFIG).read_text())
    assert config["r"] == 8 and config["rank_pattern"] == {"bert.embeddings.token_type_embeddings": 2}
    texts, hypotheses = pairs[0][:16], pairs[1][:16]
    loaded = load_adapter(folder, "cpu", "fp32", reader="pragmeter").probabilities(texts, hypotheses)
    assert float(np.abs(loaded - classifier.probabilities(texts, hypotheses)).max()) <= TOLERANCE
    assert float(np.abs(loaded - shipped[0][:16]).max()) > 1e-3  # rank 8 is another model than the shipped one


def test_the_cli_writes_the_peft_form_of_a_shipped_interpreter_only(tmp_path, capsys):
    from pragmeter.testing.tiny_nli import tiny_nli_folder

    output = tmp_path / "inli-peft"
    assert main(["interpret", "export", "--model", "interpreter-minilm-inli", "--format", "peft",
                 "--output", str(output)]) == 0
    assert capsys.readouterr().out.strip() == str(output)
    labels = json.loads((output / "config.json").read_text())["pragmeter"]["labels"]
    assert is_adapter(output) and labels[0] == "implied"
    assert main(["interpret", "export", "--model", "interpreter-minilm-inli", "--format", "peft",
                 "--output", str(output)]) == 2  # no --overwrite
    plain = tiny_nli_folder(tmp_path / "plain")
    with pytest.raises(PragmeterError, match="not in the shipped form"):
        export_adapter(plain, tmp_path / "plain-peft")


# ---------------------------------------------------------------- a tampered adapter: refused in one line
def tampered(adapter: Path, folder: Path, change=None, config_change=None) -> Path:
    """A copy of ``adapter`` with its tensors changed by ``change`` (name -> tensor) and its adapter config by
    ``config_change``, each file's sha256 written back into config.json (consistent, as a careful forger would)."""
    from safetensors.torch import save_file

    from pragmeter.data.root import sha256_of

    shutil.copytree(adapter, folder)
    if change is not None:
        tensors = weights(folder)
        change(tensors)
        save_file({name: tensor.contiguous() for name, tensor in tensors.items()}, str(folder / ADAPTER_WEIGHTS),
                  metadata={"format": "pt"})
    if config_change is not None:
        config = json.loads((folder / ADAPTER_CONFIG).read_text())
        config_change(config)
        (folder / ADAPTER_CONFIG).write_text(json.dumps(config))
    folder_config = json.loads((folder / "config.json").read_text())
    for entry in folder_config[ADAPTER_KEY]:
        entry["sha256"] = sha256_of(folder / entry["file"])
    (folder / "config.json").write_text(json.dumps(folder_config))
    return folder


def nan_factor(tensors):
    tensors[PREFIX + QUERY + LORA_A][0, 0] = float("nan")


def narrow_factor(tensors):
    tensors[PREFIX + QUERY + LORA_B] = tensors[PREFIX + QUERY + LORA_B][:, :-1]


def unknown_module(tensors):
    tensors[PREFIX + "bert.encoder.layer.9.attention.self.query" + LORA_A] = tensors.pop(PREFIX + QUERY + LORA_A)


def unknown_target(config):
    config["target_modules"].append("bert.encoder.layer.9.attention.self.query")


def dora(config):
    config["use_dora"] = True


@pytest.mark.parametrize("change, config_change, message", [
    (nan_factor, None, rf"{ADAPTER_WEIGHTS}: tensor '{PREFIX}{QUERY}{LORA_A}' holds NaN or infinite values"),
    (narrow_factor, None, rf"{ADAPTER_WEIGHTS}: .*have shapes \(64, 384\) and \(384, 63\), not"),
    (unknown_module, None, rf"{ADAPTER_WEIGHTS}: tensor .*layer\.9.* which adapter_config.json's target_modules "
                           rf"does not list"),
    (None, unknown_target, rf"{ADAPTER_CONFIG}: target module 'bert\.encoder\.layer\.9\.attention\.self\.query' is "
                           rf"not in the model"),
    (None, dora, rf"{ADAPTER_CONFIG}: 'use_dora' is True; pragmeter reads plain LoRA adapters"),
])
def test_a_tampered_adapter_is_refused_in_one_line(adapter, tmp_path, change, config_change, message):
    folder = tampered(adapter, tmp_path / "model", change, config_change)
    with pytest.raises(DataError, match=message) as refused:
        load_adapter(folder, "cpu", "fp32")
    assert "\n" not in str(refused.value)


def test_a_planted_link_or_a_replaced_file_is_refused_in_one_line(adapter, tmp_path, capsys):
    folder = tampered(adapter, tmp_path / "linked")
    outside = tmp_path / "elsewhere.safetensors"
    shutil.move(folder / ADAPTER_WEIGHTS, outside)
    (folder / ADAPTER_WEIGHTS).symlink_to(outside)
    with pytest.raises(DataError, match=rf"{ADAPTER_WEIGHTS}: a link, not the file itself; refused"):
        load_adapter(folder, "cpu", "fp32")
    assert main(["interpret", "It would keep me awake.", "--context", "Ann offers Bob a coffee.", "--reading", "No.",
                 "--reading", "Yes.", "--model", str(folder), "--backend", "torch", "--no-progress"]) == 2
    lines = [line for line in capsys.readouterr().err.strip().splitlines() if not line.startswith("interpreter ")]
    assert len(lines) == 1 and "a link" in lines[0] and "Traceback" not in lines[0]
    replaced = tampered(adapter, tmp_path / "replaced")
    tensors = weights(replaced)
    tensors[PREFIX + QUERY + LORA_B] = tensors[PREFIX + QUERY + LORA_B] * 2
    from safetensors.torch import save_file

    save_file(tensors, str(replaced / ADAPTER_WEIGHTS))  # the recorded sha256 left as it was
    with pytest.raises(DataError, match=rf"{ADAPTER_WEIGHTS}: sha256 differs from .*config.json's {ADAPTER_KEY}"):
        load_adapter(replaced, "cpu", "fp32")
