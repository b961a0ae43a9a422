"""ImpScore's training objective, computed from precomputed sentence embeddings (paper eq. 5-8).

L = max(0, γ1 − (I1 − I2)) + max(0, γ1 − (I1 − I3)) + α · max(0, γ2 − (ΔP⁻ − ΔP⁺)), averaged over the batch,
where s1 is implicit, s2 its explicit paraphrase (positive) and s3 the explicit side of another pair (negative).
Triplets whose explicit side is not a paraphrase (``pragmatic`` False, e.g. a different message with the same
target) carry only the two implicitness terms.

Optional hard negatives s4 (ours, not the paper's): an explicit sentence that shares words or topic with s1 but means
something else (Fig-QA's wrong ending, or one mined from the corpus by encoder similarity). They add
α_h · max(0, γ2 − (d(h_p(s1), h_p(s4)) − ΔP⁺)), so the pragmatic space cannot lean on surface overlap.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from pragmeter.impscore.heads import ImpScoreHeads


@dataclass
class TripletOutputs:
    """Scores of one batch of (s1, s2, s3) triplets."""

    implicit: torch.Tensor  # I1
    positive: torch.Tensor  # I2
    negative: torch.Tensor  # I3
    distance_positive: torch.Tensor  # ΔP⁺ = d(h_p(s1), h_p(s2))
    distance_negative: torch.Tensor  # ΔP⁻ = d(h_p(s1), h_p(s3))


def triplet_outputs(heads: ImpScoreHeads, e1: torch.Tensor, e2: torch.Tensor, e3: torch.Tensor) -> TripletOutputs:
    i1, p1, _ = heads(e1)
    i2, p2, _ = heads(e2)
    i3, p3, _ = heads(e3)
    return TripletOutputs(
        implicit=i1,
        positive=i2,
        negative=i3,
        distance_positive=heads.pragmatic_distance_from_features(p1, p2),
        distance_negative=heads.pragmatic_distance_from_features(p1, p3),
    )


def margin_losses(
    out: TripletOutputs, gamma1: float = 0.5, gamma2: float = 0.7, alpha: float = 1.0
) -> dict[str, torch.Tensor]:
    """Per-item loss terms (not reduced): implicitness vs positive, vs negative, and pragmatic."""
    return {
        "imp_pos": torch.clamp(gamma1 - (out.implicit - out.positive), min=0.0),
        "imp_neg": torch.clamp(gamma1 - (out.implicit - out.negative), min=0.0),
        "prag": alpha * torch.clamp(gamma2 - (out.distance_negative - out.distance_positive), min=0.0),
    }


def in_batch_distances(heads: ImpScoreHeads, e1: torch.Tensor, e2: torch.Tensor, sub_batch: int = 1024,
                       paraphrase_cosine: float = 0.8) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(rows, distances, excluded) for a random sub-batch of at most ``sub_batch`` pairs (torch's seeded global
    generator): the pragmatic distance of each implicit sentence to every explicit side of the sub-batch, and which
    of those are not negatives — the pair's own, and pairs whose implicit or explicit sides are paraphrases
    (encoder cosine ≥ ``paraphrase_cosine``)."""
    rows = torch.randperm(len(e1))[: min(sub_batch, len(e1))].to(e1.device)
    e1, e2 = e1[rows], e2[rows]
    _, p1, _ = heads(e1)
    _, p2, _ = heads(e2)
    distances = torch.cdist(p1, p2)
    with torch.no_grad():
        unit1, unit2 = nn.functional.normalize(e1, dim=1), nn.functional.normalize(e2, dim=1)
        excluded = (unit2 @ unit2.T >= paraphrase_cosine) | (unit1 @ unit1.T >= paraphrase_cosine)
        excluded.fill_diagonal_(True)
    return rows, distances, excluded


def sub_batch_mean(per_item: torch.Tensor, rows: torch.Tensor, pragmatic: torch.Tensor | None = None,
                   weights: torch.Tensor | None = None) -> torch.Tensor:
    """Weighted mean of an in-batch term over the sub-batch ``rows`` (pairs without a paraphrase count 0)."""
    if pragmatic is not None:
        per_item = per_item * pragmatic[rows].to(per_item.dtype)
    w = torch.ones_like(per_item) if weights is None else weights[rows]
    return (per_item * w).sum() / w.sum()


def in_batch_hardest_margin(heads: ImpScoreHeads, e1: torch.Tensor, e2: torch.Tensor, gamma2: float,
                            pragmatic: torch.Tensor | None = None, weights: torch.Tensor | None = None) -> torch.Tensor:
    """Ours, not the paper's: the pragmatic margin of each implicit sentence against the nearest explicit side of
    the other pairs of its batch (sentence-transformers' in-batch negatives, hardest form), weighted mean."""
    rows, distances, excluded = in_batch_distances(heads, e1, e2)
    nearest = distances.masked_fill(excluded, float("inf")).min(1).values
    return sub_batch_mean(torch.clamp(gamma2 - (nearest - distances.diagonal()), min=0.0), rows, pragmatic, weights)


class ImpScoreLoss(nn.Module):
    """Mean of the ImpScore objective over a batch of embedding triplets."""

    def __init__(self, heads: ImpScoreHeads, gamma1: float = 0.5, gamma2: float = 0.7, alpha: float = 1.0) -> None:
        super().__init__()
        self.heads = heads
        self.gamma1, self.gamma2, self.alpha = gamma1, gamma2, alpha

    def forward(self, e1: torch.Tensor, e2: torch.Tensor, e3: torch.Tensor,
                pragmatic: torch.Tensor | None = None, e4: torch.Tensor | None = None,
                hard: torch.Tensor | None = None, hard_alpha: float = 0.0,
                weights: torch.Tensor | None = None, in_batch: float = 0.0) -> torch.Tensor:
        out = triplet_outputs(self.heads, e1, e2, e3)
        terms = margin_losses(out, self.gamma1, self.gamma2, self.alpha)
        prag = terms["prag"] if pragmatic is None else terms["prag"] * pragmatic.to(terms["prag"].dtype)
        total = terms["imp_pos"] + terms["imp_neg"] + prag
        if e4 is not None and hard_alpha > 0:
            _, p1, _ = self.heads(e1)
            _, p4, _ = self.heads(e4)
            d_hard = self.heads.pragmatic_distance_from_features(p1, p4)
            margin = torch.clamp(self.gamma2 - (d_hard - out.distance_positive), min=0.0)
            total = total + hard_alpha * margin * hard.to(margin.dtype)
        mean = total.mean() if weights is None else (total * weights).sum() / weights.sum()
        if in_batch > 0:
            mean = mean + in_batch * in_batch_hardest_margin(self.heads, e1, e2, self.gamma2, pragmatic, weights)
        return mean
