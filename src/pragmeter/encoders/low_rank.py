"""Low-rank changes of an encoder's matrices, made here and nowhere else: trained as adapters (LoRA), or cut from a
fully trained encoder by truncated SVD, and trimmed to a byte budget per file.

A change is stored as two factors, ``NAME.up`` (out × r) and ``NAME.down`` (r × in), so that the matrix becomes
base + up @ down; the names, the shard format and the reader that applies factors to a base encoder live with the
model folders that carry them (:mod:`pragmeter.encoders.finetuned`). Users: ImpScore's encoder fine-tuning
(adapters and compression), the interpreter's shipped form and its peft export.
"""

from __future__ import annotations

import torch

from pragmeter.encoders.finetuned import DOWN, UP
from pragmeter.errors import PragmeterError


class LowRankAdapter(torch.nn.Module):
    """A frozen Linear plus a trainable change ``up @ down`` of rank ``rank`` (LoRA: ``down`` starts as nn.Linear's
    own initialisation, ``up`` at zero, so training starts from the base encoder); the bias trains whole. The same
    function as peft's LoRA with ``lora_alpha`` = rank (its B·alpha/r is ``up``, its A ``down``), without the
    dependencies; benchmarks/lora_adapters.py trains the two side by side."""

    def __init__(self, base: torch.nn.Linear, rank: int) -> None:
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        self.down = torch.nn.Parameter(torch.empty(rank, base.in_features, device=base.weight.device))
        torch.nn.init.kaiming_uniform_(self.down, a=5 ** 0.5)
        self.up = torch.nn.Parameter(torch.zeros(base.out_features, rank, device=base.weight.device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + torch.nn.functional.linear(torch.nn.functional.linear(x, self.down), self.up)


def low_rank_change(base: dict[str, torch.Tensor], tuned: dict[str, torch.Tensor],
                    rank: int) -> dict[str, torch.Tensor]:
    """``tuned`` (trained tensors by name) with each matrix's change from ``base`` as rank-``rank`` factors
    ``NAME.up`` (out × r) and ``NAME.down`` (r × in), the truncated SVD (the best approximation of that rank); other
    tensors as they are. Everything rounded to fp16, as the shards store it, so what is measured is what ships."""
    out = {}
    for name, tensor in tuned.items():
        if tensor.dim() != 2:
            out[name] = tensor.detach().cpu().half()
            continue
        u, s, vh = torch.linalg.svd(tensor.detach().cpu().float() - base[name].detach().cpu().float(),
                                    full_matrices=False)
        out[name + UP], out[name + DOWN] = (u[:, :rank] * s[:rank]).half(), vh[:rank].contiguous().half()
    return out


def fit_bytes(factors: dict[str, torch.Tensor], limit: int) -> dict[str, torch.Tensor]:
    """``factors`` with each pair cut to the rank at which either factor fits ``limit`` bytes: a wide matrix (the
    word embeddings, 30,522 rows in MiniLM) keeps its change's largest singular directions only; the SVD orders
    them, so the cut is the best approximation of that rank. Other tensors as they are."""
    out = dict(factors)
    for name in [n for n in factors if n.endswith(UP)]:
        up, down = factors[name], factors[name[:-len(UP)] + DOWN]
        widest = max(up.shape[0], down.shape[1])
        keep = limit // (widest * up.element_size())
        if keep < 1:
            raise PragmeterError(f"the change of {name[:-len(UP)]!r} does not fit a {limit}-byte shard")
        if up.shape[1] > keep:
            out[name], out[name[:-len(UP)] + DOWN] = up[:, :keep].contiguous(), down[:keep].contiguous()
    return out
