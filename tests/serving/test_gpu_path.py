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
    model = ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2", runtime=resolve_runtime("torch"))
    assert asked == [gpu]  # the decision read the machine once
    device, precision = ("cuda", "fp16") if gpu else ("cpu", "fp32")
    assert model.device == device and model.precision == precision and model._encoder is None
    assert f"|precision={precision}|device={device}|" in model.signature()  # reports say what produced them
    def on_cuda(**wish) -> ImpScore:
        return ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2",
                        runtime=resolve_runtime(device="cuda", **wish))

    assert on_cuda().encoder_dtype == "float16"  # fp16 on a GPU even where bf16 runs: within the bounds
    assert on_cuda(precision="bf16").encoder_dtype == "bfloat16"  # still available when asked for
    assert on_cuda(dtype="float32").encoder_dtype == "float32"


def test_half_precision_torch_path_on_cpu(model_dir, sentences):
    from pragmeter.encoders import load_encoder
    from pragmeter.impscore.model import ImpScore

    full = ImpScore.load(model_dir, device="cpu", backend="torch")
    assert full.encoder_dtype == "float32" and full.encoder is load_encoder(full.encoder_name, "cpu")
    assert "|backend=torch|precision=fp32|device=cpu|" in full.signature()  # every signature names both
    half = ImpScore.load(model_dir, device="cpu", precision="bf16", backend="torch")
    assert next(half.encoder.parameters()).dtype.is_floating_point
    assert str(next(half.encoder.parameters()).dtype) == "torch.bfloat16"
    assert next(full.encoder.parameters()).dtype.itemsize == 4  # the shared float32 encoder was not cast
    texts = sentences[:60]
    embeddings = half.encode(texts)
    assert embeddings.dtype == np.float32 and embeddings.shape == (60, 384)
    difference = np.abs(half.score(texts) - full.score(texts)).max()
    assert 0 < difference < 0.2


def test_dtype_needs_the_torch_backend():
    from pragmeter.encoders.runtime import precision_with_dtype

    with pytest.raises(PragmeterError, match="dtype='float16', backend='onnx': a torch precision"):
        resolve_runtime("onnx", dtype="float16")
    # --dtype, the command line's torch spelling, reaches ImpScore.load as a precision
    assert precision_with_dtype("auto", "bfloat16") == "bf16"
    with pytest.raises(PragmeterError, match="dtype='float16', precision='bf16': give a precision or a dtype"):
        precision_with_dtype("bf16", "float16")
