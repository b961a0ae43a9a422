"""Fixtures for the service, ONNX and Ray tests: a model folder, real sentences, a loaded ONNX-backed model."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> str:
    """The model the suite scores with (the shipped default, a MiniLM model, or $PRAGMETER_IMPSCORE: the backends are
    compared on the same heads), else
    MiniLM with seeded random heads (scores are still a deterministic function of the encoder, which is what these
    tests compare)."""
    from pragmeter.impscore.model import default_model, shipped_models

    if default_model() in shipped_models():
        return default_model()
    import torch

    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("model")
    ImpScore(ImpScoreHeads(HeadsConfig(384)), "all-MiniLM-L6-v2").save(folder)
    return str(folder)


@pytest.fixture(scope="session")
def posts(data_root: Path) -> list[tuple[str, str]]:
    """(implicit post, its implied statement) pairs from Latent Hatred stage 3, a fixed sample."""
    from pragmeter.datasets.latent_hatred import read_stage

    frame = read_stage(3, data_root, dtype=str, keep_default_na=False, na_values=[""]).dropna(subset=["post", "implied_statement"])
    frame = frame[frame["post"].str.len().between(20, 280)].sample(120, random_state=7)
    return list(zip(frame["post"], frame["implied_statement"]))


@pytest.fixture(scope="session")
def sentences(posts) -> list[str]:
    return [text for pair in posts for text in pair]


@pytest.fixture(scope="session")
def onnx_model(model_dir):
    from pragmeter.impscore.model import ImpScore

    return ImpScore.load(model_dir, backend="onnx")


@pytest.fixture(scope="session")
def torch_model(model_dir):
    from pragmeter.impscore.model import ImpScore

    return ImpScore.load(model_dir, backend="torch")
