"""PNG plots of the analyses (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from pragmeter.errors import MissingExtra


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise MissingExtra("analysis", "plots", "matplotlib is missing") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


MAX_GROUPS = 8


def _save(figure, path: str | os.PathLike) -> None:
    from pragmeter.io import atomic_path

    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    figure.clear()
    _pyplot().close(figure)


def _violins(axis, groups: Sequence[np.ndarray], names: Sequence[str]) -> None:
    kept = [(g, n) for g, n in zip(groups, names) if len(g) > 1]
    if not kept:
        axis.text(0.5, 0.5, "too few values", ha="center", va="center", transform=axis.transAxes)
        return
    values, labels = zip(*kept)
    parts = axis.violinplot(values, showmeans=True, showextrema=False)
    for body in parts["bodies"]:
        body.set_alpha(0.6)
    axis.set_xticks(list(range(1, len(labels) + 1)), labels, rotation=30, ha="right")


def profile_figure(title: str, groups: dict[str, np.ndarray], distances: dict[str, np.ndarray],
                   edges: np.ndarray, path: str | os.PathLike) -> None:
    """Histogram (density) and violin plot of implicitness per group, and the pragmatic-distance distribution
    of random pairs per group (paper Figures 14, 5 and 6 for one dataset)."""
    plt = _pyplot()
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    names = [n for n in groups if len(groups[n]) > 1][:MAX_GROUPS]  # groups come largest first
    if len(groups) > len(names):
        title += f" (largest {len(names)} of {len(groups)} label values shown)"
    for name in names:
        if len(groups[name]):
            axes[0].hist(groups[name], bins=edges, density=True, histtype="step", linewidth=1.6,
                         label=f"{name} (n={len(groups[name])})")
    axes[0].set(xlabel="ImpScore (implicitness)", ylabel="density", title="score distribution", xlim=(0, 2))
    axes[0].legend(fontsize=8)
    _violins(axes[1], [groups[n] for n in names], names)
    axes[1].set(ylabel="ImpScore", title="scores by label (mean marked)", ylim=(0, 2))
    _violins(axes[2], [distances.get(n, np.array([])) for n in names], names)
    axes[2].set(ylabel="pragmatic distance", title="pragmatic diversity (random distinct pairs)")
    figure.suptitle(title)
    _save(figure, path)


def overview_figure(datasets: dict[str, dict], path: str | os.PathLike) -> None:
    """Several datasets side by side: mean ± SD of implicitness with its implicit subset (paper Fig. 5),
    score violins (Fig. 14) and pragmatic-distance violins (Fig. 6). ``datasets``: name -> {"scores",
    "distances", optional "subset_scores", "subset_name"}."""
    plt = _pyplot()
    names = list(datasets)
    figure, axes = plt.subplots(1, 3, figsize=(17, 4.8))
    x = np.arange(len(names))
    means = [float(np.mean(d["scores"])) for d in datasets.values()]
    sds = [float(np.std(d["scores"], ddof=1)) for d in datasets.values()]
    axes[0].bar(x - 0.2, means, 0.4, yerr=sds, capsize=3, label="all texts")
    subset = [d.get("subset_scores") for d in datasets.values()]
    sub_means = [float(np.mean(s)) if s is not None and len(s) else np.nan for s in subset]
    sub_sds = [float(np.std(s, ddof=1)) if s is not None and len(s) > 1 else np.nan for s in subset]
    axes[0].bar(x + 0.2, sub_means, 0.4, yerr=sub_sds, capsize=3, label="implicit subset")
    axes[0].set_xticks(x, names, rotation=25, ha="right")
    axes[0].set(ylabel="ImpScore mean ± SD", title="implicitness per dataset", ylim=(0, 2.3))
    axes[0].legend(fontsize=8, loc="upper left", ncols=2)
    _violins(axes[1], [d["scores"] for d in datasets.values()], names)
    axes[1].set(ylabel="ImpScore", title="score distributions", ylim=(0, 2))
    _violins(axes[2], [d["distances"] for d in datasets.values()], names)
    axes[2].set(ylabel="pragmatic distance", title="pragmatic diversity (2,000 random pairs)")
    _save(figure, path)


def stratified_figure(title: str, centres: Sequence[float], accuracies: Sequence[float | None],
                      lows: Sequence[float | None], highs: Sequence[float | None], counts: Sequence[int],
                      width: float, path: str | os.PathLike, metric: str = "accuracy") -> None:
    """Bars: items per ImpScore bin (right axis); line: accuracy per bin with Wilson 95% intervals (paper Fig. 7)."""
    plt = _pyplot()
    figure, left = plt.subplots(figsize=(7.5, 4.2))
    right = left.twinx()
    right.bar(centres, counts, width=width * 0.9, color="tab:blue", alpha=0.25, label="items")
    right.set_ylabel("items per bin")
    present = [i for i, a in enumerate(accuracies) if a is not None]
    xs = [centres[i] for i in present]
    ys = [accuracies[i] for i in present]
    # max(0, …): Wilson bounds equal the estimate at 0 and 1 up to rounding.
    errors = [[max(0.0, ys[k] - lows[i]) for k, i in enumerate(present)],
              [max(0.0, highs[i] - ys[k]) for k, i in enumerate(present)]]
    left.errorbar(xs, ys, yerr=errors, color="tab:red", marker="o", capsize=3, label=metric)
    left.set_zorder(right.get_zorder() + 1)
    left.patch.set_visible(False)
    left.set(xlabel="ImpScore bin", ylabel=f"{metric} (Wilson 95% CI)", ylim=(0, 1.02), xlim=(0, 2), title=title)
    left.set_xticks(np.arange(0, 2.01, 0.25))
    _save(figure, path)


def generation_figure(title: str, levels: Sequence[str], means: Sequence[float | None],
                      sds: Sequence[float | None], path: str | os.PathLike) -> None:
    """Mean ImpScore per requested level with the SD over runs (paper A.15, Figure 24)."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6.5, 4))
    x = np.arange(len(levels))
    y = [np.nan if m is None else m for m in means]
    e = [0 if s is None else s for s in sds]
    axis.errorbar(x, y, yerr=e, marker="o", capsize=4)
    axis.set_xticks(x, levels)
    axis.set(ylabel="mean ImpScore (± SD over runs)", title=title, ylim=(0, 2))
    _save(figure, path)
