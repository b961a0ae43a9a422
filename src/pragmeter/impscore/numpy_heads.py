"""ImpScore's heads in numpy, for scoring without importing torch (the ONNX path starts in a fraction of the time).

Same weights (``heads.safetensors``) and formulas as :class:`pragmeter.impscore.heads.ImpScoreHeads`;
``ImpScoreHeads.from_numpy`` builds that module when an operation needs torch (training, the service's tensors).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np


TRANSFORMS = ("p2s", "s2p", "both")
METRICS = ("cosine", "euclidean")
_DEFAULTS = {"dim": 64, "transform": "p2s", "imp_metric": "cosine", "prag_metric": "euclidean", "hidden": 0}


def heads_config_problem(config: object) -> str | None:
    """Why a model config's ``heads`` entry cannot describe ImpScore heads, or None (checked before any weight is
    read, without torch: the ONNX path never imports it)."""
    if not isinstance(config, dict):
        return f"must be an object with embedding_dim, dim, transform, imp_metric, prag_metric; got {config!r}"
    unknown = sorted(set(config) - {"embedding_dim", *_DEFAULTS})
    if unknown:
        return f"has unknown key(s) {', '.join(map(str, unknown))}"
    for key, least in (("embedding_dim", 1), ("dim", 1), ("hidden", 0)):
        value = config.get(key, _DEFAULTS.get(key))
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            return f"{key} must be a whole number >= {least}, got {value!r}"
    for key, allowed in (("transform", TRANSFORMS), ("imp_metric", METRICS), ("prag_metric", METRICS)):
        if config.get(key, _DEFAULTS[key]) not in allowed:
            return f"{key} must be one of {', '.join(allowed)}, got {config[key]!r}"
    return None


def heads_weights_problem(config: dict, shapes: dict[str, tuple[int, ...]]) -> str | None:
    """Why weights of these shapes are not the heads ``config`` describes (a valid one), or None."""
    width, dim = config["embedding_dim"], config.get("dim", _DEFAULTS["dim"])
    hidden = config.get("hidden", 0)
    expected = {"W_p": (hidden or width, dim), "W_s": (hidden or width, dim), "W_t": (dim, dim)}
    if hidden:
        expected.update(U_p=(width, hidden), U_s=(width, hidden), b_p=(hidden,), b_s=(hidden,))
    if config.get("transform", _DEFAULTS["transform"]) == "both":
        expected["W_t2"] = (dim, dim)
    for name, shape in expected.items():
        if name not in shapes:
            return f"no tensor {name!r}"
        if tuple(shapes[name]) != shape:
            return (f"tensor {name!r} has shape {list(shapes[name])}, the config's heads (embedding_dim {width}, "
                    f"dim {dim}{f', hidden {hidden}' if hidden else ''}) need {list(shape)}")
    extra = sorted(set(shapes) - set(expected))
    return f"unexpected tensor(s) {', '.join(extra)}" if extra else None


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU, tanh form (as torch's approximate="tanh")."""
    return (0.5 * x * (1.0 + np.tanh(np.float32(np.sqrt(2.0 / np.pi)) * (x + np.float32(0.044715) * x ** 3)))
            ).astype(np.float32)


def _distance(a: np.ndarray, b: np.ndarray, metric: str) -> np.ndarray:
    if metric == "cosine":  # as torch.nn.functional.cosine_similarity: norms clamped at 1e-8
        norms = np.maximum(np.linalg.norm(a, axis=-1), 1e-8) * np.maximum(np.linalg.norm(b, axis=-1), 1e-8)
        return (1.0 - (a * b).sum(-1) / norms).astype(np.float32)
    return np.linalg.norm(a - b, axis=-1).astype(np.float32)


class NumpyHeads:
    def __init__(self, config: dict, weights: dict[str, np.ndarray]) -> None:
        self.config_dict = dict(config)
        # Attribute access like HeadsConfig (embedding_dim, dim, transform, imp_metric, prag_metric).
        self.config = SimpleNamespace(**{**_DEFAULTS, **config})
        self.weights = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}

    def eval(self) -> "NumpyHeads":
        return self

    def __call__(self, embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(implicitness, h_p, h_s) of a batch of embeddings."""
        w = self.weights
        embeddings = np.asarray(embeddings, dtype=np.float32)
        if self.config.hidden:
            h_p = _gelu(embeddings @ w["U_p"] + w["b_p"]) @ w["W_p"]
            h_s = _gelu(embeddings @ w["U_s"] + w["b_s"]) @ w["W_s"]
        else:
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
