"""Where pragmeter keeps what it computes once: unpacked encoders, ONNX exports, embedding caches."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "PRAGMETER_CACHE"


def cache_dir() -> Path:
    """Where pragmeter keeps unpacked encoders and embedding caches (``$PRAGMETER_CACHE`` or ~/.cache/pragmeter)."""
    root = os.environ.get(CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "pragmeter")
    return Path(root)


def embeddings_dir() -> Path:
    """The default embedding cache folder (``$PRAGMETER_CACHE/embeddings``)."""
    return cache_dir() / "embeddings"
