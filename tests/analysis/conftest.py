"""Fixtures of the analysis tests: a private embedding cache and a throwaway ImpScore model (random heads on the
real offline encoder), so structural tests do not depend on the shipped model's numbers."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _private_cache(private_cache):
    """Every test here starts from an empty cache (tests/conftest.py)."""


@pytest.fixture(scope="session")
def throwaway_model(tmp_path_factory) -> str:
    import torch

    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("model") / "throwaway"
    ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2").save(folder)
    return str(folder)
