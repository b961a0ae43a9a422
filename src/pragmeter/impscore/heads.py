"""The trainable part of ImpScore: projections from a frozen sentence embedding to pragmatic and semantic features.

h_p = e W_p, h_s = e W_s (d -> l, no bias, Xavier-uniform). With ``hidden`` > 0 (ours, not the paper's: more head
capacity on a frozen encoder) each map is one hidden layer instead: h_p = gelu(e U_p + b_p) W_p, likewise h_s (GELU's
tanh form, which the numpy heads compute exactly without scipy). Implicitness compares semantics with pragmatics moved
into one space (paper §3.2, Table 2 variants):

- ``p2s`` (paper default): ĥ_s = h_p W_t, I = dist(h_s, ĥ_s)
- ``s2p``: ĥ_p = h_s W_t, I = dist(h_p, ĥ_p)
- ``both``: I = dist(h_p W_t¹, h_s W_t²) in a third space

``dist`` is 1 − cosine (default, I ∈ [0, 2]) or Euclidean. Pragmatic distance is Euclidean (default) or 1 − cosine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn
from torch.nn import functional as F

from pragmeter.impscore.numpy_heads import METRICS, TRANSFORMS, NumpyHeads  # their one home, importable without torch


@dataclass(frozen=True)
class HeadsConfig:
    embedding_dim: int
    dim: int = 64
    transform: str = "p2s"
    imp_metric: str = "cosine"
    prag_metric: str = "euclidean"
    hidden: int = 0  # width of a hidden layer in each map (0: the paper's linear maps)

    def __post_init__(self) -> None:
        if self.transform not in TRANSFORMS:
            raise ValueError(f"transform must be one of {TRANSFORMS}, got {self.transform!r}")
        for field in ("imp_metric", "prag_metric"):
            if getattr(self, field) not in METRICS:
                raise ValueError(f"{field} must be one of {METRICS}, got {getattr(self, field)!r}")

    def to_dict(self) -> dict:
        return asdict(self)


def distance(a: torch.Tensor, b: torch.Tensor, metric: str) -> torch.Tensor:
    """Row-wise distance between two batches of vectors."""
    if metric == "cosine":
        return 1.0 - F.cosine_similarity(a, b, dim=-1)
    return torch.linalg.vector_norm(a - b, dim=-1)


class ImpScoreHeads(nn.Module):
    def __init__(self, config: HeadsConfig) -> None:
        super().__init__()
        self.config = config
        d, l, hidden = config.embedding_dim, config.dim, config.hidden
        if hidden:
            self.U_p, self.U_s = nn.Parameter(torch.empty(d, hidden)), nn.Parameter(torch.empty(d, hidden))
            self.b_p, self.b_s = nn.Parameter(torch.zeros(hidden)), nn.Parameter(torch.zeros(hidden))
        self.W_p = nn.Parameter(torch.empty(hidden or d, l))
        self.W_s = nn.Parameter(torch.empty(hidden or d, l))
        self.W_t = nn.Parameter(torch.empty(l, l))
        if config.transform == "both":
            self.W_t2 = nn.Parameter(torch.empty(l, l))
        self.reset_parameters()

    @classmethod
    def from_numpy(cls, heads: NumpyHeads, device: str | None = None) -> "ImpScoreHeads":
        """The torch module of heads loaded for scoring without torch (same weights), in eval mode."""
        module = cls(HeadsConfig(**heads.config_dict))
        module.load_state_dict({name: torch.from_numpy(value.copy()) for name, value in heads.weights.items()})
        return module.to(torch.device(device or "cpu")).eval()

    def reset_parameters(self) -> None:
        for parameter in self.parameters():
            if parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)
            else:
                nn.init.zeros_(parameter)

    def features(self, embeddings: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Pragmatic and semantic features (h_p, h_s) of a batch of sentence embeddings."""
        if self.config.hidden:
            return (F.gelu(embeddings @ self.U_p + self.b_p, approximate="tanh") @ self.W_p,
                    F.gelu(embeddings @ self.U_s + self.b_s, approximate="tanh") @ self.W_s)
        return embeddings @ self.W_p, embeddings @ self.W_s

    def implicitness_from_features(self, h_p: torch.Tensor, h_s: torch.Tensor) -> torch.Tensor:
        transform = self.config.transform
        if transform == "p2s":
            return distance(h_s, h_p @ self.W_t, self.config.imp_metric)
        if transform == "s2p":
            return distance(h_p, h_s @ self.W_t, self.config.imp_metric)
        return distance(h_p @ self.W_t, h_s @ self.W_t2, self.config.imp_metric)

    def pragmatic_distance_from_features(self, h_p_a: torch.Tensor, h_p_b: torch.Tensor) -> torch.Tensor:
        return distance(h_p_a, h_p_b, self.config.prag_metric)

    def forward(self, embeddings: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(implicitness, h_p, h_s) for a batch of embeddings."""
        h_p, h_s = self.features(embeddings)
        return self.implicitness_from_features(h_p, h_s), h_p, h_s
