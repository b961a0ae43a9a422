"""On-disk cache of sentence embeddings keyed by encoder and text.

Training re-uses embeddings across epochs and runs (the frozen encoder runs once per distinct text), and scoring
jobs can re-use them across runs. Layout: ``<root>/<encoder>/shard-NNNNN.npz``, each shard holding ``keys``
(sha1 of the text) and ``vectors``. New embeddings are appended shard by shard, written atomically, so an
interrupted encoding keeps every finished shard.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pragmeter.io.atomic import atomic_path


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, root: str | Path, encoder: str) -> None:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", encoder)
        self.folder = Path(root) / safe
        self._index: dict[str, tuple[int, int]] = {}
        self._shards: list[np.ndarray] = []
        self._load()

    def _load(self) -> None:
        for shard_path in sorted(self.folder.glob("shard-*.npz")):
            with np.load(shard_path) as shard:
                keys, vectors = shard["keys"], shard["vectors"]
            number = len(self._shards)
            self._shards.append(vectors)
            for row, key in enumerate(keys.tolist()):
                self._index.setdefault(key, (number, row))

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, text: str) -> bool:
        return text_key(text) in self._index

    def _append(self, keys: list[str], vectors: np.ndarray) -> None:
        number = len(self._shards)
        self.folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.folder / f"shard-{number:05d}.npz") as tmp:
            with open(tmp, "wb") as handle:
                np.savez(handle, keys=np.array(keys), vectors=vectors)
        self._shards.append(vectors)
        for row, key in enumerate(keys):
            self._index.setdefault(key, (number, row))

    def get_or_compute(
        self,
        texts: Sequence[str],
        encode: Callable[[list[str]], np.ndarray],
        chunk_size: int = 4096,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Embeddings of ``texts`` in order; missing ones are computed with ``encode`` in chunks and stored."""
        keys = [text_key(t) for t in texts]
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts):
            if key not in self._index and key not in missing:
                missing[key] = text
        todo = list(missing.items())
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start : start + chunk_size]
            vectors = np.asarray(encode([text for _, text in chunk]), dtype=np.float32)
            self._append([key for key, _ in chunk], vectors)
            if progress:
                progress(len(chunk))
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._shards[s][r] for s, r in (self._index[k] for k in keys)])


def attach_embedding_cache(model, root: str | Path | None = None):
    """Give an ImpScore ``model`` the on-disk embedding cache (default ``$PRAGMETER_CACHE/embeddings``, shared by
    every command that scores texts); returns the model."""
    from pragmeter.encoders.paths import embeddings_dir

    model.embedding_cache = EmbeddingCache(root if root is not None else embeddings_dir(), model.encoder_name)
    return model
