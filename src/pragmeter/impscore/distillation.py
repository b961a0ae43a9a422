"""Distilling a teacher ImpScore (e.g. on all-mpnet-base-v2) into a student on a cheaper encoder (ours, not the
paper's).

The teacher's scores of every training triplet are computed once from its own encoder's embeddings: I(s1), I(s2),
I(s3), ΔP⁺ and ΔP⁻. The student keeps the paper's margin objective and adds

    β · mean[(I_s − I_t)² over s1, s2, s3 + (ΔP⁺_s − ΔP⁺_t)² + (ΔP⁻_s − ΔP⁻_t)²]

so it learns how much more implicit one sentence is than another and how far apart two meanings are, as the
teacher grades them, not only which side of a margin they fall. Matching scores rather than features leaves the
student free to choose its own coordinates (its projections start from a different, smaller embedding).

``on="differences"`` matches only the three quantities the margins compare — I(s1) − I(s2), I(s1) − I(s3) and
ΔP⁻ − ΔP⁺ — so the student may keep its own offset of I and ΔP and spends its capacity on the orderings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch

from pragmeter.impscore.losses import TripletOutputs, triplet_outputs

FIELDS = ("implicit", "positive", "negative", "distance_positive", "distance_negative")


@dataclass
class TeacherTargets:
    """The teacher's outputs on one split's triplets, row for row with its TripletEmbeddings."""

    outputs: TripletOutputs

    def __len__(self) -> int:
        return len(self.outputs.implicit)

    def rows(self, index: torch.Tensor) -> TripletOutputs:
        """The targets of rows ``index``, on the index's device (the targets stay in CPU memory)."""
        return TripletOutputs(*(getattr(self.outputs, f)[index.cpu()].to(index.device) for f in FIELDS))


DISTILL_ON = ("scores", "differences")


def margins(out: TripletOutputs) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What the margin objective compares: I(s1) − I(s2), I(s1) − I(s3), ΔP⁻ − ΔP⁺."""
    return (out.implicit - out.positive, out.implicit - out.negative,
            out.distance_negative - out.distance_positive)


def distillation_loss(student: TripletOutputs, teacher: TripletOutputs, weights: torch.Tensor | None = None,
                      on: str = "scores") -> torch.Tensor:
    """Mean squared gap between the student's and the teacher's scores of each triplet (weighted mean): the five
    scores (``on="scores"``) or the three differences the margins compare (``on="differences"``)."""
    if on not in DISTILL_ON:
        raise ValueError(f"distillation matches one of {', '.join(DISTILL_ON)}, not {on!r}")
    if on == "scores":
        pairs = [(getattr(student, f), getattr(teacher, f)) for f in FIELDS]
    else:
        pairs = list(zip(margins(student), margins(teacher)))
    per_item = sum((mine - theirs) ** 2 for mine, theirs in pairs)
    return per_item.mean() if weights is None else (per_item * weights).sum() / weights.sum()


def teacher_targets(teacher: str | Path, corpus: pd.DataFrame, cache_root: Path,
                    show_progress: bool = True) -> dict[str, TeacherTargets]:
    """The teacher model's (a shipped name or a folder) outputs on every split of ``corpus``. Its corpus
    embeddings come from the backend and precision it was trained with (its config's training entry), so a
    teacher trained on cached embeddings costs no new encoding."""
    from pragmeter.impscore.model import ImpScore
    from pragmeter.impscore.triplets import embed_corpus

    model = ImpScore.load(teacher, backend="torch", device="cpu")  # its heads; the corpus is embedded below
    training = model.config.get("training", {})
    splits = embed_corpus(corpus, model.encoder_name, cache_root, show_progress=show_progress,
                          backend=training.get("encoder_backend", "torch"),
                          precision=training.get("encoder_precision", "fp32"), hard_negatives=False)
    with torch.no_grad():  # plain tensors: the student's loss subtracts them under autograd
        return {name: TeacherTargets(triplet_outputs(model.heads, data.e1, data.e2, data.e3))
                for name, data in splits.items()}


def distillation_targets(config, corpus: pd.DataFrame, cache_root: Path,
                         show_progress: bool = True) -> dict[str, TeacherTargets] | None:
    """The targets a TrainConfig asks for: its teacher's outputs on ``corpus``, or None when it does not distil
    (no teacher, or weight 0)."""
    if not config.teacher or config.distill_weight <= 0:
        return None
    return teacher_targets(config.teacher, corpus, cache_root, show_progress=show_progress)
