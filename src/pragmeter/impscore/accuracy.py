"""ImpScore's accuracies on (implicit, positive explicit, negative explicit) triplets (paper §5.1, Table 13).

- implicitness accuracy: share of comparisons, positive and negative pairs alike, where I(implicit) > I(explicit)
- pragmatics accuracy: share of triplets where ΔP⁺ < ΔP⁻, over the triplets whose positive is a paraphrase
  (``pragmatic`` True; all of them unless a mask is given)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pragmeter.impscore.losses import TripletOutputs


def _mask(pragmatic, n: int) -> np.ndarray:
    if pragmatic is None:
        return np.ones(n, dtype=bool)
    mask = np.asarray(pragmatic.cpu() if hasattr(pragmatic, "cpu") else pragmatic, dtype=bool)
    if mask.shape != (n,):
        raise ValueError(f"pragmatic mask has shape {mask.shape}, expected ({n},)")
    return mask


def triplet_metrics(out: TripletOutputs, pragmatic=None) -> dict[str, float]:
    i1, i2, i3 = (t.detach().cpu().numpy().astype(np.float64) for t in (out.implicit, out.positive, out.negative))
    dp, dn = (t.detach().cpu().numpy().astype(np.float64) for t in (out.distance_positive, out.distance_negative))
    n = len(i1)
    if n == 0:
        return {"n_triplets": 0}
    mask = _mask(pragmatic, n)
    return {
        "n_triplets": n,
        "n_pragmatic": int(mask.sum()),
        "implicitness_accuracy": float(((i1 > i2).sum() + (i1 > i3).sum()) / (2 * n)),
        "implicitness_accuracy_positive": float((i1 > i2).mean()),
        "implicitness_accuracy_negative": float((i1 > i3).mean()),
        "pragmatics_accuracy": float((dp < dn)[mask].mean()) if mask.any() else float("nan"),
        "mean_I_implicit": float(i1.mean()),
        "mean_I_explicit": float(np.concatenate([i2, i3]).mean()),
        "mean_I_explicit_positive": float(i2.mean()),
        "mean_I_explicit_negative": float(i3.mean()),
        "mean_dP_positive": float(dp[mask].mean()) if mask.any() else float("nan"),
        "mean_dP_negative": float(dn[mask].mean()) if mask.any() else float("nan"),
    }


def per_source_metrics(out: TripletOutputs, sources: Sequence[str], pragmatic=None) -> pd.DataFrame:
    """Table 13: per source, the number of pairs and implicitness/pragmatics accuracy (pragmatics over the
    paraphrase pairs only; NaN for a source without any)."""
    i1, i2, i3 = (t.detach().cpu().numpy() for t in (out.implicit, out.positive, out.negative))
    dp, dn = (t.detach().cpu().numpy() for t in (out.distance_positive, out.distance_negative))
    mask = _mask(pragmatic, len(i1))
    frame = pd.DataFrame({"source": list(sources), "imp_pos": i1 > i2, "imp_neg": i1 > i3,
                          "prag": (dp < dn) & mask, "pragmatic": mask})
    grouped = frame.groupby("source", sort=True)
    table = pd.DataFrame({
        "pairs": grouped.size(),
        "implicitness_correct": grouped["imp_pos"].sum() + grouped["imp_neg"].sum(),
        "pragmatics_correct": grouped["prag"].sum(),
        "pragmatic_pairs": grouped["pragmatic"].sum(),
    })
    table["implicitness_accuracy"] = table["implicitness_correct"] / (2 * table["pairs"])
    table["pragmatics_accuracy"] = table["pragmatics_correct"] / table["pragmatic_pairs"].where(table["pragmatic_pairs"] > 0)
    return table.reset_index()


def format_accuracy(value: float) -> str:
    """Three decimals, or "–" where a source has nothing to count (no paraphrase pairs for pragmatics)."""
    return "–" if pd.isna(value) else f"{value:.3f}"
