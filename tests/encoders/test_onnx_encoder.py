"""The ONNX Runtime encoder gives the torch path's scores, batches by token length, and encodes repeats once."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau


def test_onnx_scores_equal_torch_scores(onnx_model, torch_model, sentences):
    ours, official = onnx_model.score(sentences), torch_model.score(sentences)
    assert np.abs(ours - official).max() < 1e-4
    assert kendalltau(ours, official).statistic > 0.999
    emb_ours, emb_official = onnx_model.encode(sentences[:40]), torch_model.encode(sentences[:40])
    assert np.allclose(emb_ours, emb_official, atol=1e-5)


def test_distances_equal_torch(onnx_model, torch_model, posts):
    left, right = [a for a, _ in posts[:20]], [b for _, b in posts[:20]]
    assert np.allclose(onnx_model.pragmatic_distance(left, right), torch_model.pragmatic_distance(left, right),
                       atol=1e-4)


class _CountingSession:
    """Passes calls through to the real ONNX Runtime session and counts the rows it was given."""

    def __init__(self, session):
        self.session, self.rows = session, 0

    def run(self, outputs, feed):
        self.rows += len(feed["input_ids"])
        return self.session.run(outputs, feed)


def test_repeated_texts_are_encoded_once(onnx_model, sentences):
    encoder = onnx_model.encoder
    texts = sentences[:10] + sentences[:10] + sentences[3:5]
    counting = _CountingSession(encoder._session)
    encoder._session = counting
    try:
        embeddings = encoder.encode(texts)
    finally:
        encoder._session = counting.session
    assert counting.rows == 10
    assert np.array_equal(embeddings[:10], embeddings[10:20])
    assert np.allclose(embeddings[:10], encoder.encode(sentences[:10]), atol=1e-6)


def test_batches_follow_token_length_within_budget(onnx_model, sentences):
    encoder = onnx_model.encoder
    lengths = [len(ids) for ids in encoder.token_ids(sentences)]
    batches = encoder.batches(sentences)
    assert sorted(i for batch in batches for i in batch) == list(range(len(sentences)))
    widths = [max(lengths[i] for i in batch) for batch in batches]
    assert widths == sorted(widths)  # short texts first, each batch padded only to its own longest
    for batch, width in zip(batches, widths):
        assert len(batch) == 1 or len(batch) * width <= encoder.tokens_per_batch
        assert len(batch) <= encoder.max_batch


def test_export_is_cached_by_encoder_content_and_opset(tmp_path, monkeypatch):
    from pragmeter.encoders.fingerprint import encoder_fingerprint
    from pragmeter.encoders.onnx import OPSET, OnnxEncoder, onnx_file

    monkeypatch.setenv("PRAGMETER_CACHE", str(tmp_path))
    fp32 = onnx_file("all-MiniLM-L6-v2")
    # keyed by the encoder's content (weights, tokenizer), not only its name
    assert fp32 == onnx_file("minilm")
    assert fp32.parent == tmp_path / "onnx" / f"all-MiniLM-L6-v2-{encoder_fingerprint('minilm')}"
    assert fp32.name == f"opset{OPSET}-fp32.onnx"
    assert not fp32.exists()
    encoder = OnnxEncoder("all-MiniLM-L6-v2")
    assert encoder.path == fp32 and fp32.stat().st_size > 10_000_000
    built = fp32.stat().st_mtime_ns
    assert OnnxEncoder("all-MiniLM-L6-v2").path.stat().st_mtime_ns == built  # reused, not rebuilt
    from pragmeter.encoders.fingerprint import SEAL_FILE

    # the graph and its seal, no temporary files left behind (the build lock sits beside the folder)
    assert sorted(p.name for p in fp32.parent.iterdir()) == sorted([fp32.name, SEAL_FILE])


def test_unknown_backend_is_a_clear_error(model_dir):
    from pragmeter.errors import PragmeterError
    from pragmeter.impscore.model import ImpScore

    with pytest.raises(PragmeterError, match="backend='tensorrt': must be one of"):
        ImpScore.load(model_dir, backend="tensorrt")


def test_inputs_equal_sentence_transformers_preprocessing(onnx_model, sentences):
    encoder = onnx_model.encoder
    texts = sentences[:6] + ["  padded with spaces  ", "x " * 400]  # the last one is truncated
    ids = encoder.token_ids(texts)
    ours = encoder.features(ids)
    official = encoder._st.preprocess(texts)
    for name in ours:
        assert np.array_equal(ours[name], official[name].numpy()), name
