"""Several profiles side by side (paper Figures 5, 6 and 14): one PNG and a JSON table of the headline numbers."""

from __future__ import annotations

from pathlib import Path

from pragmeter.datasets.labelled_sets import DISPLAY_NAMES
from pragmeter.analysis.profile import ALL, Profile

# The label value that marks the implicit texts of each built-in set (paper Fig. 5 shows them separately).
IMPLICIT_SUBSET = {"ishate": ("implicit_layer", "Implicit HS"), "latent_hatred": ("class", "implicit_hate"),
                   "dghsd": ("type", "animosity"), "absa": ("sentiment", "implicit")}


def write_overview(profiles: list[Profile], output: Path) -> dict:
    from pragmeter.analysis.plots import overview_figure
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
