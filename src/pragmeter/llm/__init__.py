"""LLM plumbing shared by ``pragmeter eval``, ``pragmeter generate`` and ``pragmeter analyze generation-check``.

- ``backends``: chat models by name (``openai-chat``, ``gguf``; a new backend is one module, see ``backends``; ``local``,
  a fine-tuned classifier, registers itself from ``classify/backend.py``)
- ``cache``: append-only, fsync'd JSONL response cache keyed by a hash of model, messages and decoding
- ``client``: concurrency limit, cache look-up and progress counters around any backend
- ``batch``: the one loop that sends many prompts through a client concurrently (eval, generate, checks)
- ``parsing``: answer parsers (label words, JSON fields); nothing is ever guessed into a label
- ``choice``: multiple choice by log-probabilities (options scored by the first token's alternatives)
- ``gguf_server`` / ``packaged``: the llama.cpp child process of the ``gguf`` backend and the GGUF models packaged
  on PyPI (joined once from their part packages and checked)
"""
