"""Benchmark harness: tasks (``pragmeter.tasks``) run against chat backends with an on-disk response cache.

- ``backends``: model servers (``openai-chat``; a new backend is one new module, see ``backends/__init__``)
- ``cache``: append-only, fsync'd JSONL response cache keyed by a hash of model, messages and decoding
- ``client``: concurrency limit, cache look-up and progress counters around any backend
- ``task``/``registry``: the task interface and discovery of ``pragmeter.tasks`` modules
- ``runner``: runs tasks and writes results JSON and per-sample JSONL
"""
