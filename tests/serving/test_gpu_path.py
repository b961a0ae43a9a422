"""The GPU path's choices, checked on a CPU: device, dtype and batch size of the torch encoder."""

from __future__ import annotations

import numpy as np
import pytest

from pragmeter.encoders import CPU_BATCH_SIZE, GPU_BATCH_SIZE, default_batch_size
from pragmeter.encoders.runtime import resolve_runtime
from pragmeter.errors import PragmeterError


def test_dtype_follows_the_device():
    def dtype(device: str, asked: str | None = None) -> str:
        return resolve_runtime("torch", device=device, dtype=asked).dtype

    # fp16 on every GPU: within the accuracy bounds where bf16 was not (H200, docs/results.md run G1)
    assert dtype("cuda") == "float16" and dtype("cuda:1") == "float16"
    assert dtype("cpu") == "float32"  # no half-precision matrix units assumed on a CPU
    assert dtype("cpu", "bf16") == "bfloat16" and dtype("cuda", "fp32") == "float32"
    with pytest.raises(PragmeterError, match="dtype='int4': must be one of"):
        dtype("cpu", "int4")


def test_batch_size_follows_the_device():
    assert default_batch_size("cuda:0") == GPU_BATCH_SIZE > CPU_BATCH_SIZE == default_batch_size("cpu")


@pytest.mark.parametrize("gpu", [True, False])
def test_impscore_on_cuda_picks_half_precision_without_loading(monkeypatch, gpu):
    # what the runtime asks the machine: whether torch sees a GPU (registry.default_device, for backend torch
    # without a device); the precision follows the device it gives
    import torch

    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    asked: list[bool] = []

    def is_available() -> bool:
        asked.append(gpu)
        return gpu

    monkeypatch.setattr(torch.cuda, "is_available", is_available)
    model = ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2", backend="torch")
    assert asked == [gpu]  # the decision read the machine once
    device, precision = ("cuda", "fp16") if gpu else ("cpu", "fp32")
    assert model.device == device and model.precision == precision and model._encoder is None
    assert f"|precision={precision}|device={device}|" in model.signature()  # reports say what produced them
    explicit = ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2", device="cuda")
    assert explicit.encoder_dtype == "float16"  # fp16 on a GPU even where bf16 runs: within the bounds
    assert ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2", device="cuda",
                    precision="bf16").encoder_dtype == "bfloat16"  # still available when asked for
    assert ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2", device="cuda",
                    dtype="float32").encoder_dtype == "float32"


def test_half_precision_torch_path_on_cpu(model_dir, sentences):
    from pragmeter.encoders import load_encoder
    from pragmeter.impscore.model import ImpScore

    full = ImpScore.load(model_dir, device="cpu", backend="torch")
    assert full.encoder_dtype == "float32" and full.encoder is load_encoder(full.encoder_name, "cpu")
    assert "|backend=torch|precision=fp32|device=cpu|" in full.signature()  # every signature names both
    half = ImpScore.load(model_dir, device="cpu", dtype="bfloat16", backend="torch")
    assert next(half.encoder.parameters()).dtype.is_floating_point
    assert str(next(half.encoder.parameters()).dtype) == "torch.bfloat16"
    assert next(full.encoder.parameters()).dtype.itemsize == 4  # the shared float32 encoder was not cast
    texts = sentences[:60]
    embeddings = half.encode(texts)
    assert embeddings.dtype == np.float32 and embeddings.shape == (60, 384)
    difference = np.abs(half.score(texts) - full.score(texts)).max()
    assert 0 < difference < 0.2


def test_dtype_needs_the_torch_backend(model_dir):
    from pragmeter.errors import PragmeterError
    from pragmeter.impscore.model import ImpScore

    with pytest.raises(PragmeterError, match="dtype='float16', backend='onnx': a torch precision"):
        ImpScore.load(model_dir, backend="onnx", dtype="float16")
