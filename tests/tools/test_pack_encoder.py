"""tools/pack_encoder.py: an encoder folder packed into int8 shards and unpacked again keeps every file, every vector
exactly and every matrix within half a step of its group's scale; a damaged shard is refused by name; the unpacked
all-MiniLM-L6-v2 embeds as the original does."""
import importlib.util
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

TOOL = Path(__file__).resolve().parents[2] / "tools" / "pack_encoder.py"
spec = importlib.util.spec_from_file_location("pack_encoder", TOOL)
pack_encoder = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pack_encoder)


def encoder_folder(root: Path) -> Path:
    folder = root / "encoder"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "config.json").write_text('{"hidden_size": 256}', encoding="utf-8")
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}', encoding="utf-8")
    generator = torch.Generator().manual_seed(0)
    weights = {"embeddings.weight": torch.randn(300, 256, generator=generator) * 0.05,
               "layer.0.dense.weight": torch.randn(256, 512, generator=generator) * 0.02,
               "layer.0.dense.bias": torch.randn(256, generator=generator),
               "odd.weight": torch.randn(10, 100, generator=generator),  # width not a multiple of 128: kept
               "position_ids": torch.arange(64).unsqueeze(0)}
    save_file(weights, str(folder / "model.safetensors"))
    return folder


def test_round_trip_keeps_files_and_bounds_each_weight(tmp_path):
    folder = encoder_folder(tmp_path)
    manifest = pack_encoder.pack(folder, tmp_path / "packed", shard_bytes=100_000)
    assert len(manifest["shards"]) >= 2  # the budget splits the weights
    assert manifest["tensors"]["layer.0.dense.weight"] == "int8-groups"
    assert manifest["tensors"]["odd.weight"] == manifest["tensors"]["position_ids"] == "as-is"
    out = pack_encoder.unpack(tmp_path / "packed", tmp_path / "unpacked")
    assert (out / "1_Pooling" / "config.json").read_text() == (folder / "1_Pooling" / "config.json").read_text()
    before, after = load_file(str(folder / "model.safetensors")), load_file(str(out / "model.safetensors"))
    assert before.keys() == after.keys()
    for name in ("layer.0.dense.bias", "odd.weight", "position_ids"):
        assert torch.equal(before[name], after[name])
    for name in ("embeddings.weight", "layer.0.dense.weight"):
        original, restored = before[name], after[name]
        assert restored.dtype == torch.float32 and restored.shape == original.shape
        groups = original.reshape(original.shape[0], -1, pack_encoder.GROUP)
        half_step = (groups.abs().amax(-1, keepdim=True) / 127 / 2 * 1.01).expand_as(groups)  # fp16 scale rounding
        error = (restored - original).abs().reshape_as(groups)
        assert bool((error <= half_step + 1e-8).all())
        assert 0 < float(error.max())  # it is quantized, not copied


def test_a_damaged_or_missing_shard_is_refused_by_name(tmp_path):
    pack_encoder.pack(encoder_folder(tmp_path), tmp_path / "packed", shard_bytes=100_000)
    shard = tmp_path / "packed" / "weights-1.safetensors"
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(SystemExit, match="weights-1.safetensors"):
        pack_encoder.unpack(tmp_path / "packed", tmp_path / "unpacked")
    shard.unlink()
    with pytest.raises(SystemExit, match="weights-1.safetensors: missing"):
        pack_encoder.unpack(tmp_path / "packed", tmp_path / "unpacked")
    assert not (tmp_path / "unpacked").exists()
    manifest = tmp_path / "packed" / "pack.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "format": "other"}), encoding="utf-8")
    with pytest.raises(SystemExit, match="format 'other'"):
        pack_encoder.unpack(tmp_path / "packed", tmp_path / "unpacked")
    outside = {**json.loads(manifest.read_text()), "format": pack_encoder.FORMAT}
    outside["shards"][0]["file"] = "../encoder/model.safetensors"
    manifest.write_text(json.dumps(outside), encoding="utf-8")
    with pytest.raises(SystemExit, match="is not a file name in"):
        pack_encoder.unpack(tmp_path / "packed", tmp_path / "unpacked")


def test_unpacked_minilm_embeds_as_the_original(tmp_path):
    from sentence_transformers import SentenceTransformer

    from pragmeter.encoders.registry import require_encoder

    original = Path(require_encoder("all-MiniLM-L6-v2"))
    pack_encoder.pack(original, tmp_path / "packed", shard_bytes=20_000_000)
    unpacked = pack_encoder.unpack(tmp_path / "packed", tmp_path / "all-MiniLM-L6-v2")
    texts = ["Could you pass the salt?", "It is rather cold in here.", "The meeting ran long again.",
             "I'd love to, but I have an early start."]
    a = SentenceTransformer(str(original), device="cpu").encode(texts, convert_to_tensor=True)
    b = SentenceTransformer(str(unpacked), device="cpu").encode(texts, convert_to_tensor=True)
    cosine = torch.nn.functional.cosine_similarity(a, b)
    assert float(cosine.min()) > 0.999
    assert not torch.equal(a, b)
