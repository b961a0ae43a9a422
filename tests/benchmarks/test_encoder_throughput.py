"""benchmarks/encoder_throughput.py: the cost it divides by is the encoder's own arithmetic, and its texts have the
token lengths it names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture
def throughput(benchmark_script):
    return benchmark_script("encoder_throughput")


def test_the_cost_of_a_text_is_the_layers_matrix_products_and_attention(throughput):
    config = {"hidden_size": 384, "intermediate_size": 1536, "num_hidden_layers": 6}  # all-MiniLM-L6-v2
    # per layer and token: q, k, v, output projections 4·384², feed-forward 2·384·1536, attention 2·10·384
    assert throughput.cost_per_text(config, 10) == 6 * 10 * (4 * 384 * 384 + 2 * 384 * 1536 + 2 * 10 * 384)
    assert throughput.cost_per_text(config, 20) > 2 * throughput.cost_per_text(config, 10)  # attention grows as n²


def test_texts_of_a_length_tokenize_to_about_that_length_and_differ(throughput):
    from pragmeter.encoders import require_encoder
    from pragmeter.encoders.tokens import FastTokenizer

    folder = Path(require_encoder("all-MiniLM-L6-v2"))
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert {"hidden_size", "intermediate_size", "num_hidden_layers"} <= set(config)
    tokenizer = FastTokenizer.from_folder("all-MiniLM-L6-v2")
    for tokens in (10, 34, 130):
        texts = throughput.texts_of_length(tokens, 50)
        ids, _ = tokenizer.tokenize(texts)
        assert len(set(texts)) == 50
        assert all(abs(len(row) - tokens) <= 2 for row in ids), (tokens, sorted({len(row) for row in ids}))
