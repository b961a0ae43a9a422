"""ImpScore's evaluation metrics on (implicit, positive explicit, negative explicit) triplets (paper §5.1, Table 13).

- implicitness accuracy: share of comparisons, positive and negative pairs alike, where I(implicit) > I(explicit)
- pragmatics accuracy: share of triplets where ΔP⁺ < ΔP⁻
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pragmeter.impscore.losses import TripletOutputs


def triplet_metrics(out: TripletOutputs) -> dict[str, float]:
    i1, i2, i3 = (t.detach().cpu().numpy().astype(np.float64) for t in (out.implicit, out.positive, out.negative))
    dp, dn = (t.detach().cpu().numpy().astype(np.float64) for t in (out.distance_positive, out.distance_negative))
    n = len(i1)
    if n == 0:
        return {"n_triplets": 0}
    return {
        "n_triplets": n,
        "implicitness_accuracy": float(((i1 > i2).sum() + (i1 > i3).sum()) / (2 * n)),
        "implicitness_accuracy_positive": float((i1 > i2).mean()),
        "implicitness_accuracy_negative": float((i1 > i3).mean()),
        "pragmatics_accuracy": float((dp < dn).mean()),
        "mean_I_implicit": float(i1.mean()),
        "mean_I_explicit": float(np.concatenate([i2, i3]).mean()),
        "mean_I_explicit_positive": float(i2.mean()),
        "mean_I_explicit_negative": float(i3.mean()),
        "mean_dP_positive": float(dp.mean()),
        "mean_dP_negative": float(dn.mean()),
    }


def per_source_metrics(out: TripletOutputs, sources: Sequence[str]) -> pd.DataFrame:
    """Table 13: per source, the number of pairs and implicitness/pragmatics accuracy."""
    i1, i2, i3 = (t.detach().cpu().numpy() for t in (out.implicit, out.positive, out.negative))
    dp, dn = (t.detach().cpu().numpy() for t in (out.distance_positive, out.distance_negative))
    frame = pd.DataFrame({"source": list(sources), "imp_pos": i1 > i2, "imp_neg": i1 > i3, "prag": dp < dn})
    grouped = frame.groupby("source", sort=True)
    table = pd.DataFrame({
        "pairs": grouped.size(),
        "implicitness_correct": grouped["imp_pos"].sum() + grouped["imp_neg"].sum(),
        "pragmatics_correct": grouped["prag"].sum(),
    })
    table["implicitness_accuracy"] = table["implicitness_correct"] / (2 * table["pairs"])
    table["pragmatics_accuracy"] = table["pragmatics_correct"] / table["pairs"]
    return table.reset_index()
