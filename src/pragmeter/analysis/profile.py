"""Implicitness profile of a text collection (ImpScore paper §7.1, Figures 5, 6 and 14): the distribution of
ImpScore overall and per label value (mean, SD, quantiles, histogram, violin), pragmatic diversity as the
pragmatic distances of random distinct pairs, mean differences between labels with Welch 95% CIs, and paired
comparisons (e.g. a post against its implied statement); several profiles side by side in one PNG and a JSON table
of the headline numbers (:func:`write_overview`).

Embeddings come from the model's embedding cache when it has one, so a second profile of the same texts runs
only the small heads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pragmeter.errors import InvalidParameter
from pragmeter.metrics.intervals import mean_difference, paired_difference
from pragmeter.metrics.summary import histogram, summary
from pragmeter.datasets.collection import TextCollection
from pragmeter.impscore.scoring import encode_in_chunks

HISTOGRAM_EDGES = np.round(np.linspace(0.0, 2.0, 41), 4)  # 0.05 wide, as fine as Figure 14
DISTANCE_BINS = 40
DEFAULT_PAIRS = 2000
ALL = "all"


def random_distinct_pairs(n: int, count: int, seed: int) -> np.ndarray:
    """``count`` distinct unordered index pairs (i < j) of ``n`` items, seeded; all pairs when fewer exist."""
    total = n * (n - 1) // 2
    if total <= count:
        left, right = np.triu_indices(n, k=1)
        return np.column_stack([left, right])
    rng = np.random.default_rng(seed)
    chosen: set[tuple[int, int]] = set()
    while len(chosen) < count:
        draws = rng.integers(0, n, size=(2 * (count - len(chosen)) + 8, 2))
        for a, b in draws:
            if a != b:
                chosen.add((min(a, b), max(a, b)))
                if len(chosen) == count:
                    break
    return np.array(sorted(chosen), dtype=np.int64)


@dataclass
class Profile:
    """Scores of every text and pair distances per group ("all" and "grouping=value"), with their summaries."""

    collection: TextCollection
    scores: np.ndarray
    distances: dict[str, np.ndarray]
    pair_scores: dict[str, tuple[np.ndarray, np.ndarray]]
    model_signature: str
    n_pairs: int
    seed: int
    distance_edges: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def group_scores(self, grouping: str) -> dict[str, np.ndarray]:
        labels = np.array([str(v) for v in self.collection.groupings[grouping]], dtype=object)
        return {value: self.scores[labels == value] for value in _ordered_values(self.collection, grouping)}

    def group_distances(self, grouping: str) -> dict[str, np.ndarray]:
        return {value: self.distances.get(f"{grouping}={value}", np.array([]))
                for value in _ordered_values(self.collection, grouping)}

    def _block(self, scores: np.ndarray, key: str) -> dict:
        distances = self.distances.get(key, np.array([]))
        return {"scores": summary(scores), "histogram": histogram(scores, HISTOGRAM_EDGES),
                "diversity": {**summary(distances), "n_pairs": int(distances.size),
                              "histogram": histogram(distances, self.distance_edges)}}

    def to_json(self) -> dict:
        c = self.collection
        groupings = {}
        for grouping in c.groupings:
            groupings[grouping] = {value: self._block(scores, f"{grouping}={value}")
                                   for value, scores in self.group_scores(grouping).items()}
        comparisons = []
        for grouping, a, b in c.comparisons:
            scores = self.group_scores(grouping)
            if a in scores and b in scores:
                comparisons.append({"grouping": grouping, "a": a, "b": b,
                                    **mean_difference(scores[a], scores[b])})
        return {
            "kind": "pragmeter-profile", "version": 1, "name": c.name, "description": c.description,
            "model": self.model_signature, "n_texts": len(c.texts), "n_distinct_texts": len(set(c.texts)),
            "settings": {"pairs": self.n_pairs, "seed": self.seed, "histogram_edges": HISTOGRAM_EDGES.tolist(),
                         "distance_edges": self.distance_edges.tolist(),
                         "diversity": "pragmatic distances of random distinct pairs of distinct texts"},
            "sampling": c.sampling, "sources": c.sources,
            "overall": self._block(self.scores, ALL), "groupings": groupings, "comparisons": comparisons,
            "pairs": {name: paired_difference(a, b) for name, (a, b) in self.pair_scores.items()},
        }


def _ordered_values(collection: TextCollection, grouping: str) -> list[str]:
    """Label values by decreasing count (ties by name), None shown as "None"."""
    from collections import Counter

    counts = Counter(str(v) for v in collection.groupings[grouping])
    return [value for value, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def check_comparisons(collection: TextCollection, source: str) -> None:
    """A compared label value absent from the data would leave its comparison out silently: an error naming it,
    the label column and the values there are."""
    for grouping, a, b in collection.comparisons:
        present = _ordered_values(collection, grouping)
        unknown = [value for value in (a, b) if value not in present]
        if unknown:
            raise InvalidParameter("compare", f"{a}:{b}", f"{source}: no {' or '.join(map(repr, unknown))} in label "
                                   f"column {grouping!r} (values: "
                                   f"{', '.join(present[:20])}{', …' if len(present) > 20 else ''})")


def compute_profile(collection: TextCollection, model, n_pairs: int = DEFAULT_PAIRS, seed: int = 0) -> Profile:
    import torch

    pair_texts = [t for a, b in collection.pairs.values() for t in (*a, *b)]
    distinct = list(dict.fromkeys(collection.texts + pair_texts))
    row = {text: i for i, text in enumerate(distinct)}
    embeddings = encode_in_chunks(model, distinct, f"embedding {collection.name}")
    all_scores = model.score_embeddings(embeddings)
    pragmatic = torch.as_tensor(model.features_of_embeddings(embeddings).pragmatic)  # heads only, no re-encoding

    def distances_of(texts: list[str], key_seed: int) -> np.ndarray:
        rows = np.array(sorted({row[t] for t in texts}), dtype=np.int64)
        if rows.size < 2:
            return np.array([])
        pairs = rows[random_distinct_pairs(rows.size, n_pairs, key_seed)]
        return model.heads.pragmatic_distance_from_features(pragmatic[pairs[:, 0]], pragmatic[pairs[:, 1]]).numpy()

    distances = {ALL: distances_of(collection.texts, seed)}
    for grouping, labels in collection.groupings.items():
        for value in _ordered_values(collection, grouping):
            members = [t for t, v in zip(collection.texts, labels) if str(v) == value]
            distances[f"{grouping}={value}"] = distances_of(members, seed)
    upper = max((float(d.max()) for d in distances.values() if d.size), default=1.0)
    edges = np.round(np.linspace(0.0, upper * 1.0001, DISTANCE_BINS + 1), 6)
    pair_scores = {name: (all_scores[[row[t] for t in a]], all_scores[[row[t] for t in b]])
                   for name, (a, b) in collection.pairs.items()}
    return Profile(collection=collection, scores=all_scores[[row[t] for t in collection.texts]], distances=distances,
                   pair_scores=pair_scores, model_signature=model.signature(), n_pairs=n_pairs, seed=seed,
                   distance_edges=edges)


def profile_path(output: Path, name: str, suffix: str = ".json") -> Path:
    """Where the profile ``name`` writes in ``output``: ``profile_<name><suffix>``, the name (a file's stem, a label
    column's) made one safe file name (``io.untrusted.safe_name``)."""
    from pragmeter.io.untrusted import safe_name

    return output / f"profile_{safe_name(name)}{suffix}"


def write_profile(profile: Profile, output: Path, overwrite: bool = True) -> dict:
    """Write ``profile_<name>.json``, one PNG per grouping (or one overall) and the per-text scores
    (``profile_<name>_scores.parquet``); return the JSON payload with the file names."""
    import pandas as pd

    from pragmeter.analysis.plots import profile_figure
    from pragmeter.provenance import RunRecord
    from pragmeter.io import write_json_atomic, write_table
    from pragmeter.io.untrusted import safe_name

    output.mkdir(parents=True, exist_ok=True)
    name = profile.collection.name
    payload = profile.to_json()
    plots = []
    groupings = list(profile.collection.groupings) or [None]
    for grouping in groupings:
        if grouping is None:
            groups, distances, suffix = {ALL: profile.scores}, {ALL: profile.distances[ALL]}, ""
        else:
            groups, distances = profile.group_scores(grouping), profile.group_distances(grouping)
            suffix = f"_{safe_name(grouping)}"
        png = profile_path(output, name, f"{suffix}.png").name
        title = f"{name}" + (f" by {grouping}" if grouping else "") + f" — {len(profile.scores)} texts"
        profile_figure(title, groups, distances, HISTOGRAM_EDGES, output / png)
        plots.append(png)
    scores_file = profile_path(output, name, "_scores.parquet").name
    frame = pd.DataFrame({"text": profile.collection.texts, **{g: [None if v is None else str(v) for v in labels]
                                                               for g, labels in profile.collection.groupings.items()},
                          "impscore": profile.scores})
    write_table(frame, output / scores_file, overwrite=True)
    payload.update({"plots": plots, "scores_file": scores_file, "run": RunRecord.now(profile.model_signature).to_dict()})
    write_json_atomic(profile_path(output, name), payload)
    return payload


def _number(value: float | None) -> str:
    """A statistic that needs two or more values is absent (n/a) with fewer, not zero."""
    return "n/a" if value is None else f"{value:.4f}"


def profile_lines(payload: dict, path: Path) -> list[str]:
    """A written profile in a few lines: n, mean, SD and diversity, then each label difference and paired
    difference that has a value."""
    from pragmeter.metrics.intervals import format_estimate

    overall = payload["overall"]["scores"]
    diversity = payload["overall"]["diversity"]["mean"]  # None with fewer than two distinct texts
    lines = [f"{payload['name']}: n={overall['n']} mean={overall['mean']:.4f} sd={_number(overall['sd'])} "
             f"diversity={_number(diversity)} -> {path}"]
    lines += [f"  {c['grouping']}: {c['a']} − {c['b']} = {format_estimate(c)}"
              for c in payload["comparisons"] if c["difference"] is not None]
    lines += [f"  {name}: {p['difference']:+.4f} [{p['ci_low']:+.4f}, {p['ci_high']:+.4f}] ({p['n_pairs']} pairs, "
              f"first higher in {p['share_a_greater']:.1%})" for name, p in payload["pairs"].items()
              if p["difference"] is not None]
    return lines


# The label value that marks the implicit texts of each built-in set (paper Fig. 5 shows them separately).
IMPLICIT_SUBSET = {"ishate": ("implicit_layer", "Implicit HS"), "latent_hatred": ("class", "implicit_hate"),
                   "dghsd": ("type", "animosity"), "absa": ("sentiment", "implicit")}


def write_overview(profiles: list[Profile], output: Path) -> dict:
    from pragmeter.analysis.plots import overview_figure
    from pragmeter.datasets.labelled_sets import DISPLAY_NAMES
    from pragmeter.metrics.summary import summary
    from pragmeter.io import write_json_atomic

    datasets, rows = {}, []
    for profile in profiles:
        name = profile.collection.name
        entry = {"scores": profile.scores, "distances": profile.distances[ALL]}
        subset = IMPLICIT_SUBSET.get(name)
        if subset and subset[0] in profile.collection.groupings:
            entry["subset_scores"] = profile.group_scores(subset[0]).get(subset[1])
        datasets[DISPLAY_NAMES.get(name, name)] = entry
        rows.append({"name": name, "n_texts": int(profile.scores.size), "scores": summary(profile.scores),
                     "implicit_subset": ({"grouping": subset[0], "value": subset[1],
                                          "scores": summary(entry["subset_scores"])}
                                         if entry.get("subset_scores") is not None else None),
                     "diversity": summary(profile.distances[ALL])})
    overview_figure(datasets, output / "profiles_overview.png")
    payload = {"kind": "pragmeter-profile-overview", "version": 1,
               "model": profiles[0].model_signature if profiles else None, "datasets": rows,
               "plots": ["profiles_overview.png"]}
    write_json_atomic(output / "profiles_overview.json", payload)
    return payload


def profile_collections(collections: list[TextCollection], model, output: Path, n_pairs: int = DEFAULT_PAIRS,
                        seed: int = 0) -> Iterator[str]:
    """``pragmeter analyze profile``: profile each collection and write it (:func:`write_profile`), with an overview
    of them all when there are several; yields what to report as each file is written."""
    profiles = []
    for collection in collections:
        profiles.append(compute_profile(collection, model, n_pairs=n_pairs, seed=seed))
        yield from profile_lines(write_profile(profiles[-1], output), profile_path(output, collection.name))
    if len(profiles) > 1:
        write_overview(profiles, output)
        yield f"overview: {output / 'profiles_overview.png'}"


def profile_source(source: str, output: Path, impscore: Callable[[], object], root: str | Path | None = None,
                   column: str = "text", label_columns: list[str] | tuple = (), pair_column: str | None = None,
                   compare: list[str] | tuple = (), max_per_label: int | None = None, n_pairs: int = DEFAULT_PAIRS,
                   seed: int = 0, overwrite: bool = False) -> Iterator[str]:
    """``pragmeter analyze profile``: the collections ``source`` names (``labelled_sets.load_collections``), each
    profiled into ``output`` (:func:`profile_collections`). Every file it would replace is refused unless
    ``overwrite`` before ``impscore()`` loads the model; yields what to report as each file is written."""
    from pragmeter.datasets.labelled_sets import load_collections
    from pragmeter.io import check_outputs

    if n_pairs < 1:
        raise InvalidParameter("n_pairs", n_pairs, "must be at least 1")
    collections = load_collections(source, root, column, label_columns, pair_column, compare, max_per_label, seed)
    if compare:  # the user's comparisons (built-in sets name their own, which need not be in every sample)
        for collection in collections:
            check_comparisons(collection, source)
    check_outputs([profile_path(output, c.name) for c in collections]
                  + ([output / "profiles_overview.json"] if len(collections) > 1 else []), overwrite)
    yield from profile_collections(collections, impscore(), output, n_pairs, seed)
