"""The rank-r form of trained encoder layers (impscore.finetune.low_rank_change)."""

from __future__ import annotations

import pytest
import torch


def test_a_low_rank_change_is_the_best_approximation_of_its_rank():
    from pragmeter.encoders.finetuned import apply_changes
    from pragmeter.impscore.finetune import low_rank_change

    generator = torch.Generator().manual_seed(0)
    base = {"w": torch.randn(48, 32, generator=generator), "b": torch.randn(48, generator=generator)}
    left, right = torch.linalg.qr(torch.randn(48, 3, generator=generator))[0], torch.linalg.qr(
        torch.randn(32, 3, generator=generator))[0]
    change = left @ torch.diag(torch.tensor([3.0, 2.0, 0.5])) @ right.T  # singular values 3, 2, 0.5
    tuned = {"w": base["w"] + change, "b": base["b"] + 1.0}
    for rank, error in [(3, 0.0), (2, 0.5), (1, (2.0**2 + 0.5**2) ** 0.5)]:
        factors = low_rank_change(base, tuned, rank)
        assert set(factors) == {"w.up", "w.down", "b"} and factors["w.up"].shape == (48, rank)
        assert factors["w.up"].dtype == torch.float16  # stored as the shards store it
        merged = dict(base)
        apply_changes(merged, factors, "test", "base")
        assert torch.linalg.matrix_norm(merged["w"] - tuned["w"]).item() == pytest.approx(error, abs=5e-3)
        assert torch.allclose(merged["b"], tuned["b"], atol=1e-2)  # vectors travel whole


def test_adapters_start_from_the_base_encoder_and_ship_the_factors_they_trained():
    from pragmeter.encoders import require_encoder
    from pragmeter.impscore.finetune import LowRankAdapter, TrainableEncoder

    texts = ["It is cold in here.", "Could you close the window?", "Nice weather for ducks, isn't it?"]
    encoder = TrainableEncoder(require_encoder("all-MiniLM-L6-v2"), "cpu", texts)
    before = encoder.embed([0, 1, 2])
    trainable = encoder.unfreeze(2, adapter_rank=4)
    adapters = [m for m in encoder.bert.modules() if isinstance(m, LowRankAdapter)]
    assert len(adapters) == 2 * 6  # q, k, v, attention output, intermediate, output in each of the top two layers
    frozen = {id(m.base.weight) for m in adapters}
    assert not frozen & {id(p) for p in trainable} and all(p.requires_grad for p in trainable)
    assert torch.allclose(encoder.embed([0, 1, 2]), before, atol=1e-6)  # up starts at zero
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():  # as if trained: every factor and trained vector moved
        for p in trainable:
            p.add_(0.02 * torch.randn(p.shape, generator=generator))
    trained = encoder.embed([0, 1, 2])
    factors = encoder.adapter_factors()
    assert not any(isinstance(m, LowRankAdapter) for m in encoder.bert.modules())  # the encoder is plain again
    matrices = ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                "intermediate.dense", "output.dense"]
    assert {name for name in factors if name.endswith(".up")} == {
        f"encoder.layer.{layer}.{matrix}.weight.up" for layer in (4, 5) for matrix in matrices}
    assert factors["encoder.layer.5.output.dense.weight.up"].shape == (384, 4)
    assert "encoder.layer.5.output.LayerNorm.weight" in factors and "encoder.layer.3.output.dense.bias" not in factors
    merged = encoder.embed([0, 1, 2])  # base + up @ down from the fp16 factors, as a model folder loads them
    assert not torch.allclose(merged, before, atol=1e-3)
    assert torch.allclose(merged, trained, atol=2e-3)
