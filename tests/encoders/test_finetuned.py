"""Model folders that carry encoder layers trained with their heads (pragmeter.encoders.finetuned)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from pragmeter.encoders.runtime import cpu_has_bf16
from pragmeter.errors import DataError, PragmeterError

TEXTS = ["You are talking too loudly.", "I'm finding it a bit hard to concentrate.", "It is cold in here."]


@pytest.fixture(scope="module")
def trained_layers() -> dict[str, torch.Tensor]:
    """MiniLM's top layer with its feed-forward output halved: a stand-in for trained layers that moves every
    embedding (not a real training run; the experiment's smoke test covers that)."""
    from pragmeter.encoders import load_encoder

    bert = load_encoder("all-MiniLM-L6-v2", "cpu")[0].auto_model
    return {name: (tensor * 0.5 if name == "encoder.layer.5.output.dense.weight" else tensor).detach().clone()
            for name, tensor in bert.state_dict().items() if name.startswith("encoder.layer.5.")}


@pytest.fixture
def folder(tmp_path, private_cache, trained_layers):
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    torch.manual_seed(0)
    path = tmp_path / "tuned"
    ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2", {"name": "tuned"}).save(
        path, encoder_weights=trained_layers, base_encoder="all-MiniLM-L6-v2")
    return path


def reference_embeddings(layers: dict[str, torch.Tensor]) -> np.ndarray:
    """What the packaged encoder gives with ``layers`` (rounded to fp16, as stored) put in by hand."""
    from sentence_transformers import SentenceTransformer

    from pragmeter.encoders import require_encoder

    model = SentenceTransformer(require_encoder("all-MiniLM-L6-v2"), device="cpu")
    model[0].auto_model.load_state_dict({k: v.half().float() for k, v in layers.items()}, strict=False)
    return model.encode(TEXTS, convert_to_numpy=True)


def test_a_folder_with_trained_layers_scores_with_them(folder, trained_layers):
    from pragmeter.encoders import load_encoder
    from pragmeter.impscore.model import ImpScore

    config = json.loads((folder / "config.json").read_text())
    assert config["encoder"] == "all-MiniLM-L6-v2" and [s["file"] for s in config["encoder_weights"]] == [
        "encoder-1.safetensors"]
    model = ImpScore.load(folder, backend="torch", device="cpu")
    tuned = model.encode(TEXTS)
    assert np.abs(tuned - reference_embeddings(trained_layers)).max() < 1e-5
    base = load_encoder("all-MiniLM-L6-v2", "cpu").encode(TEXTS, convert_to_numpy=True)
    assert np.abs(tuned - base).max() > 0.01  # the trained layers are used, not the packaged ones
    assert "|encoder:all-MiniLM-L6-v2+ft-" in model.signature()  # the base and the layers' key, not a cache path


def test_a_resaved_model_keeps_its_layers(folder, tmp_path):
    from pragmeter.impscore.model import ImpScore

    model = ImpScore.load(folder, backend="torch", device="cpu")
    model.save(tmp_path / "copy")
    again = ImpScore.load(tmp_path / "copy", backend="torch", device="cpu")
    assert again.signature() == model.signature()
    assert np.array_equal(again.score(TEXTS), model.score(TEXTS))


@pytest.mark.parametrize("host", ["with bf16", "without bf16"])
def test_auto_precision_takes_bf16_only_when_the_folder_records_its_check(folder, on_host, host):
    # a fine-tuned encoder is another encoder: the base's bf16 clearance does not carry over unless measured. What
    # OpenVINO reports of the CPU is what resolve_runtime reads, so both kinds of host are checked on every host
    # (loading resolves the runtime without building the encoder).
    from pragmeter.impscore.model import BF16_CHECK_KEY, ImpScore

    on_host("zen4" if host == "with bf16" else "zen1")

    def precision(**options) -> str:
        return ImpScore.load(folder, backend="openvino", **options).precision

    cleared = "bf16" if host == "with bf16" else "fp32"
    assert ImpScore.load("impscore-minilm", backend="openvino").precision == cleared  # the base, as shipped
    assert precision() == "fp32"  # no check recorded
    config = json.loads((folder / "config.json").read_text())
    config[BF16_CHECK_KEY] = {"within_bounds": True, "max_abs_score_diff": 0.008, "kendall_tau": 0.997}
    (folder / "config.json").write_text(json.dumps(config))
    model = ImpScore.load(folder, backend="openvino")
    assert model.precision == cleared and f"|precision={cleared}|" in model.signature()
    assert precision(precision="fp32") == "fp32"
    if host == "with bf16":
        assert precision(precision="bf16") == "bf16"
    else:  # an explicit wish the host cannot meet is refused, check or not
        with pytest.raises(PragmeterError, match="precision='bf16': needs a CPU with AVX-512 BF16 or AMX"):
            precision(precision="bf16")
    for recorded in (False, "yes", None):  # failed, malformed or absent: not a clearance
        config[BF16_CHECK_KEY] = {"within_bounds": recorded}
        (folder / "config.json").write_text(json.dumps(config))
        assert precision() == "fp32"


@pytest.mark.skipif(not cpu_has_bf16(), reason="bf16 needs AVX-512 BF16 or AMX")
def test_a_cleared_folder_scores_in_bf16_within_the_bound_of_its_fp32_scores(folder):
    from pragmeter.encoders.runtime import MAX_ABS_DIFF
    from pragmeter.impscore.model import BF16_CHECK_KEY, ImpScore

    config = json.loads((folder / "config.json").read_text())
    config[BF16_CHECK_KEY] = {"within_bounds": True, "max_abs_score_diff": 0.008, "kendall_tau": 0.997}
    (folder / "config.json").write_text(json.dumps(config))
    bf16, fp32 = ImpScore.load(folder, backend="openvino"), ImpScore.load(folder, backend="openvino", precision="fp32")
    assert (bf16.precision, fp32.precision) == ("bf16", "fp32")
    difference = np.abs(bf16.score(TEXTS) - fp32.score(TEXTS))
    assert 0 < difference.max() <= MAX_ABS_DIFF  # bf16 arithmetic ran (scores moved), within the precision's bound


def test_damaged_or_foreign_layers_are_refused_naming_the_file(folder, trained_layers, capsys):
    from safetensors.torch import save_file

    from pragmeter.cli import main
    from pragmeter.impscore.model import ImpScore

    shard = folder / "encoder-1.safetensors"
    shard.write_bytes(shard.read_bytes()[:-100])
    with pytest.raises(DataError, match="encoder-1.safetensors: sha256 differs"):
        ImpScore.load(folder, backend="torch")
    assert main(["score", "--impscore", str(folder), "--backend", "torch", "It is cold in here."]) == 2
    err = capsys.readouterr().err
    assert "encoder-1.safetensors: sha256 differs" in err and "Traceback" not in err

    from pragmeter.data.root import sha256_of

    save_file({"encoder.layer.9.output.dense.weight": torch.zeros(384, 1536)}, str(shard))
    config = json.loads((folder / "config.json").read_text())
    config["encoder_weights"][0]["sha256"] = sha256_of(shard)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(DataError, match="'encoder.layer.9.output.dense.weight' is not in the base encoder"):
        ImpScore.load(folder, backend="torch")
    shard.unlink()
    with pytest.raises(DataError, match="names encoder-1.safetensors, which is not in"):
        ImpScore.load(folder, backend="torch")


def test_shards_stay_under_the_transfer_limit(tmp_path, trained_layers):
    from safetensors.torch import load_file

    from pragmeter.encoders.finetuned import SHARD_BYTES, shard_files

    layers = {f"copy{i}.{k}": v for i in range(4) for k, v in trained_layers.items()}  # ~28 MB in fp32
    shards = shard_files(layers, tmp_path, dtype="float32")
    sizes = [(tmp_path / s["file"]).stat().st_size for s in shards]
    assert len(shards) == 2 and all(size <= SHARD_BYTES + 65536 for size in sizes)  # + the header
    stored = {k: v for s in shards for k, v in load_file(str(tmp_path / s["file"])).items()}
    assert stored.keys() == layers.keys() and all(torch.equal(stored[k], layers[k]) for k in layers)


def test_low_rank_factors_change_the_base_matrix_by_their_product(tmp_path, private_cache):
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    from pragmeter.encoders import load_encoder

    name = "encoder.layer.5.output.dense.weight"
    base = load_encoder("all-MiniLM-L6-v2", "cpu")[0].auto_model.state_dict()[name]
    generator = torch.Generator().manual_seed(0)
    up, down = torch.randn(384, 4, generator=generator) * 0.05, torch.randn(4, 1536, generator=generator) * 0.05
    path = tmp_path / "low-rank"
    ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2", {"name": "low-rank"}).save(
        path, encoder_weights={name + ".up": up, name + ".down": down}, base_encoder="all-MiniLM-L6-v2")
    expected = reference_embeddings({name: base + up.half().float() @ down.half().float()})
    model = ImpScore.load(path, backend="torch", device="cpu")
    assert np.abs(model.encode(TEXTS) - expected).max() < 1e-4
    assert np.abs(model.encode(TEXTS) - reference_embeddings({name: base})).max() > 0.01

    from safetensors.torch import save_file

    from pragmeter.data.root import sha256_of

    shard = path / "encoder-1.safetensors"  # an up factor without its down, then factors whose ranks disagree
    for tensors, message in [({name + ".up": up}, "has no '" + name + ".down'"),
                             ({name + ".up": up, name + ".down": down[:3]}, "not \\(out, r\\) and \\(r, in\\)")]:
        save_file(tensors, str(shard))
        config = json.loads((path / "config.json").read_text())
        config["encoder_weights"][0]["sha256"] = sha256_of(shard)
        (path / "config.json").write_text(json.dumps(config))
        with pytest.raises(DataError, match=message):
            ImpScore.load(path, backend="torch")
