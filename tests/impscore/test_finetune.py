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
