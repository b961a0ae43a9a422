"""ImpScore's heads in numpy, for scoring without importing torch (the ONNX path starts in a fraction of the time).

Same weights (``heads.safetensors``) and formulas as :class:`pragmeter.impscore.heads.ImpScoreHeads`; ``to_torch``
builds that module when an operation needs torch (training, the service's tensors).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np


def _distance(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    if metric == "cosine":  # as torch.nn.functional.cosine_similarity: norms clamped at 1e-8
        norms = np.maximum(np.linalg.norm(a, axis=-1), 1e-8) * np.maximum(np.linalg.norm(b, axis=-1), 1e-8)
        return (1.0 - (a * b).sum(-1) / norms).astype(np.float32)
    return np.linalg.norm(a - b, axis=-1).astype(np.float32)


class NumpyHeads:
    def __init__(self, config: dict, weights: dict[str, np.ndarray]) -> None:
        self.config_dict = dict(config)
        # Attribute access like HeadsConfig (embedding_dim, dim, transform, imp_metric, prag_metric).
        self.config = SimpleNamespace(**{"dim": 64, "transform": "p2s", "imp_metric": "cosine",
                                         "prag_metric": "euclidean", **config})
        self.weights = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}

    def eval(self) -> "NumpyHeads":
        return self

    def __call__(self, embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(implicitness, h_p, h_s) of a batch of embeddings."""
        w = self.weights
        embeddings = np.asarray(embeddings, dtype=np.float32)
        h_p, h_s = embeddings @ w["W_p"], embeddings @ w["W_s"]
        transform, metric = self.config.transform, self.config.imp_metric
        if transform == "p2s":
            implicitness = _distance(h_s, h_p @ w["W_t"], metric)
        elif transform == "s2p":
            implicitness = _distance(h_p, h_s @ w["W_t"], metric)
        else:
            implicitness = _distance(h_p @ w["W_t"], h_s @ w["W_t2"], metric)
        return implicitness, h_p, h_s

    def pragmatic_distance(self, h_p_a: np.ndarray, h_p_b: np.ndarray) -> np.ndarray:
        return _distance(h_p_a, h_p_b, self.config.prag_metric)

    def to_torch(self, device: str | None = None):
        import torch

        from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads

        heads = ImpScoreHeads(HeadsConfig(**self.config_dict))
        heads.load_state_dict({name: torch.from_numpy(value.copy()) for name, value in self.weights.items()})
        return heads.to(torch.device(device or "cpu")).eval()
