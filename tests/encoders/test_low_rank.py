"""Low-rank changes (pragmeter.encoders.low_rank): the truncated SVD is the best approximation of its rank, and a
byte budget cuts a wide matrix's factors to the rank that fits, keeping the largest directions."""

from __future__ import annotations

import pytest
import torch

from pragmeter.encoders.low_rank import apply_changes, fit_bytes, low_rank_change
from pragmeter.errors import PragmeterError


def test_a_low_rank_change_is_the_best_approximation_of_its_rank():

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


def test_a_byte_budget_cuts_only_the_factors_that_exceed_it_keeping_the_largest_directions():
    generator = torch.Generator().manual_seed(1)
    base = {"wide": torch.randn(400, 16, generator=generator), "small": torch.randn(8, 8, generator=generator)}
    tuned = {name: tensor + 0.1 * torch.randn(tensor.shape, generator=generator) for name, tensor in base.items()}
    factors = low_rank_change(base, tuned, 8)
    cut = fit_bytes(factors, 400 * 2 * 5)  # fp16: five columns of the 400-row factor
    assert cut["wide.up"].shape == (400, 5) and cut["wide.down"].shape == (5, 16)
    assert torch.equal(cut["wide.up"], factors["wide.up"][:, :5]) and torch.equal(cut["small.up"], factors["small.up"])
    with pytest.raises(PragmeterError, match="'wide' does not fit a 100-byte shard"):
        fit_bytes(factors, 100)
