"""Encoder layers that train with the heads (impscore.finetune): through the model's own modules, as adapters,
and their rank-r form (the low-rank arithmetic itself: tests/encoders/test_low_rank.py)."""

from __future__ import annotations

import torch


def test_adapters_start_from_the_base_encoder_and_ship_the_factors_they_trained():
    from pragmeter.encoders import require_encoder
    from pragmeter.encoders.low_rank import LowRankAdapter
    from pragmeter.impscore.finetune import TrainableEncoder

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


def cls_encoder(folder):
    """The packaged all-MiniLM-L6-v2 with its Pooling switched to the [CLS] token (the registry accepts any one
    mode): the same weights, another sentence embedding."""
    import json
    import shutil

    from pragmeter.encoders import require_encoder

    shutil.copytree(require_encoder("all-MiniLM-L6-v2"), folder, ignore=shutil.ignore_patterns("onnx", "openvino"))
    config_path = folder / "1_Pooling" / "config.json"
    config = json.loads(config_path.read_text())
    config.update(pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    config_path.write_text(json.dumps(config))
    return folder


def test_what_trains_is_what_serves_whatever_pooling_the_encoder_declares(tmp_path):
    """Training runs the folder's own modules: with a CLS-pooling encoder, the forward that training runs (with
    gradients; dropout off to compare) and the no-gradient embed both equal SentenceTransformer.encode of the same
    weights, in fp32; a mean-pooled vector of those weights is another one."""
    from sentence_transformers import SentenceTransformer

    from pragmeter.encoders import require_encoder
    from pragmeter.encoders.registry import encoder_width
    from pragmeter.impscore.finetune import TrainableEncoder

    folder = cls_encoder(tmp_path / "cls-minilm")
    assert encoder_width(folder) == 384  # a layout the registry serves
    texts = ["It is cold in here.", "Could you close the window?", "Nice weather for ducks, isn't it?",
             "I wonder whether anyone has seen my keys, which I left right here on this table an hour ago."]
    served = torch.from_numpy(SentenceTransformer(str(folder), device="cpu").encode(texts, batch_size=2))
    encoder = TrainableEncoder(folder, "cpu", texts)
    encoder.unfreeze(2)
    encoder.st.eval()
    trained = encoder.forward([0, 1, 2, 3])
    assert trained.requires_grad
    assert torch.allclose(trained.detach(), served, atol=1e-5)
    assert torch.allclose(encoder.embed([3, 1, 0, 2]), served[[3, 1, 0, 2]], atol=1e-5)
    mean = torch.from_numpy(SentenceTransformer(str(require_encoder("all-MiniLM-L6-v2")), device="cpu").encode(texts))
    assert (trained.detach() * mean).sum(1).max() < 0.99  # the pooling mode matters: mean pooling is another vector
