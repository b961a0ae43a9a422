"""Low-rank changes of an encoder's matrices, in one home: trained as adapters (LoRA), cut from a fully trained
encoder by truncated SVD, trimmed to a byte budget per file, and applied to a base encoder's weights.

A change is stored as two factors, ``NAME.up`` (out × r) and ``NAME.down`` (r × in), so that the matrix becomes
base + up @ down; the shard files that carry them in a model folder are :mod:`pragmeter.encoders.finetuned`'s.
Users: ImpScore's encoder fine-tuning (adapters and compression), the fine-tuned encoders a model folder carries, the
interpreter's shipped form and its peft form.
"""

from __future__ import annotations

import torch

from pragmeter.errors import DataError, PragmeterError

UP, DOWN = ".up", ".down"  # a matrix's change as low-rank factors: base + up @ down


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


def apply_changes(weights: dict, tensors: dict, where: dict | str, base: str) -> None:
    """Put ``tensors`` into ``weights`` (the base encoder's, name -> tensor, changed in place): whole tensors replace
    the base's, ``NAME.up``/``NAME.down`` pairs add their product to the base matrix. A DataError naming ``where``
    (the file of each tensor, or one label) for a name the base lacks, a shape it does not have, or a lone factor."""
    def origin(name: str) -> str:
        return where if isinstance(where, str) else where[name]

    for name, tensor in tensors.items():
        if not bool(tensor.float().isfinite().all()):  # every score would be NaN, or silently shifted
            raise DataError(f"{origin(name)}: tensor {name!r} holds NaN or infinite values")
        if name.endswith(DOWN):
            if name[:-len(DOWN)] + UP not in tensors:
                raise DataError(f"{origin(name)}: low-rank factor {name!r} has no {name[:-len(DOWN)] + UP!r}")
            continue
        target = name[:-len(UP)] if name.endswith(UP) else name
        if target not in weights:
            raise DataError(f"{origin(name)}: tensor {target!r} is not in the base encoder {base!r}")
        if name.endswith(UP):
            down = tensors.get(target + DOWN)
            if down is None:
                raise DataError(f"{origin(name)}: low-rank factor {name!r} has no {target + DOWN!r}")
            out, into = tuple(weights[target].shape) if weights[target].dim() == 2 else (None, None)
            # exact shapes: factors that broadcast ((1, r) and (r, 1)) would add one number to the whole matrix
            if (tensor.dim() != 2 or down.dim() != 2 or tensor.shape[1] != down.shape[0]
                    or tensor.shape[0] != out or down.shape[1] != into):
                raise DataError(f"{origin(name)}: factors of {target!r} have shapes {tuple(tensor.shape)} and "
                                f"{tuple(down.shape)}, not (out, r) and (r, in) for its shape "
                                f"{tuple(weights[target].shape)}")
            tensor = weights[target].float() + tensor.float() @ down.float()
        if tuple(tensor.shape) != tuple(weights[target].shape):
            raise DataError(f"{origin(name)}: tensor {target!r} has shape {tuple(tensor.shape)}, the base encoder's "
                            f"{tuple(weights[target].shape)}")
        weights[target] = tensor.to(weights[target].dtype)
