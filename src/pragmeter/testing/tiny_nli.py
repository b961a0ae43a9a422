"""A tiny NLI cross-encoder written on the spot: random weights, a real tokenizer. What a Hub NLI cross-encoder's
folder looks like (a plain transformers sequence-classification folder), small enough for tests to write and run in
seconds without a connection."""

from __future__ import annotations

import os
from pathlib import Path

MNLI_LABELS = ("CONTRADICTION", "Entailment", "neutral")  # the Hub's spellings vary in case


def tiny_nli_folder(path: str | os.PathLike, labels=MNLI_LABELS, seed: int = 0) -> Path:
    """Write a random-weight BERT sequence classifier (2 layers, 32 wide, 128 positions) with ``labels`` as its
    ``id2label`` and the packaged MiniLM encoder's tokenizer to ``path``; returns it."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from pragmeter.encoders import resolve_encoder

    tokenizer = AutoTokenizer.from_pretrained(resolve_encoder("all-MiniLM-L6-v2"))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128, id2label=dict(enumerate(labels)),
                        label2id={label: i for i, label in enumerate(labels)}, initializer_range=0.5)
    BertForSequenceClassification(config).eval().save_pretrained(path)
    tokenizer.save_pretrained(path)
    return Path(path)
