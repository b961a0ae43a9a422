"""Evaluators: the ImpScore checks behind one interface (as sentence-transformers' evaluators): build one with its
data, call it with a model, get a dict whose ``primary_metric`` names the headline figure. Every figure that is a
mean over items carries a seeded percentile-bootstrap 95% interval (resampling items) and its n.

Any scorer with ``score(texts)``, ``pragmatic_distance(a, b)`` and ``signature()`` can be evaluated (an ImpScore
model, or the hedge-word baseline).

The **human-written suite** (:func:`human_suite`) decides which model ships: only text that people wrote is in it —
the Floyd et al. expert battery, the Stanford Politeness ratings, and the held-out (test-split) pairs of every
corpus source whose two sides people wrote. LLM-written sets (ours, CAPP's machine paraphrases, the paper's GPT
sides) are reported by :func:`llm_written_suite` and never decide alone.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from pragmeter.metrics.intervals import BOOTSTRAP_SIGNATURE, bootstrap_ci

RESAMPLES = 2000


def with_interval(values: Sequence[float], seed: int = 0, resamples: int = RESAMPLES) -> dict:
    """Mean of per-item values with its bootstrap 95% interval and n."""
    low, high = bootstrap_ci(values, resamples, seed)
    return {"value": float(np.mean(values)) if len(values) else float("nan"), "ci95": [low, high], "n": len(values)}


def interval_of(values: Sequence[float], seed: int = 0) -> dict:
    """The ``intervals`` entry of a figure: its bootstrap 95% interval and n (the value stays a plain float)."""
    figure = with_interval(values, seed)
    return {"ci95": figure["ci95"], "n": figure["n"]}


class Evaluator(ABC):
    """One check. ``__call__(model)`` returns the figures (plain floats, as sentence-transformers' evaluators), with
    ``primary_metric`` naming the headline key and ``intervals`` the bootstrap 95% interval and n of each figure that is
    a mean over items."""

    name: str
    primary_metric: str
    reported: tuple[str, ...] = ()  # further headline keys printed beside the primary one

    @abstractmethod
    def __call__(self, model) -> dict:
        ...

    def figure(self, result: dict, key: str):
        """``{"value", "ci95", "n"}`` for a figure with an interval, else the plain value."""
        interval = result.get("intervals", {}).get(key)
        return {"value": result[key], **interval} if interval else result[key]

    def summary(self, result: dict) -> dict:
        """The headline figures of a result (primary first; per-category means where the check has categories)."""
        out = {key: self.figure(result, key) for key in (self.primary_metric, *self.reported)
               if result.get(key) is not None}
        for category, row in result.get("per_category", {}).items():
            out.update({f"{category}: {key}": row[key] for key in (self.primary_metric, *self.reported) if key in row})
        return out

    def primary(self, result: dict) -> float:
        return float(result[self.primary_metric])


class RankingEvaluator(Evaluator):
    """Groups listed from most explicit to most implicit: mean Kendall τ (and Spearman ρ) of the model's order."""

    primary_metric = "kendall_tau"
    reported = ("spearman_rho", "paper_choice_accuracy")

    def __init__(self, groups, name: str = "ranking", seed: int = 0):
        self.groups, self.name, self.seed = groups, name, seed

    def __call__(self, model) -> dict:
        from pragmeter.impscore.ood import evaluate_ranking

        result = evaluate_ranking(model, self.groups)
        taus = np.nan_to_num([g["kendall_tau"] for g in result["per_group"]])
        return {**result, "primary_metric": self.primary_metric, "intervals": {"kendall_tau": interval_of(taus, self.seed)},
                "bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)}


class ChoiceEvaluator(Evaluator):
    """Choose the option pragmatically closest to the reference: accuracy."""

    primary_metric = "accuracy"

    def __init__(self, items, name: str = "choice", seed: int = 0):
        self.items, self.name, self.seed = items, name, seed

    def __call__(self, model) -> dict:
        from pragmeter.impscore.ood import evaluate_choice

        result = evaluate_choice(model, self.items)
        correct = [row["chosen"] == row["answer"] for row in result["per_item"]]
        return {**result, "primary_metric": self.primary_metric, "intervals": {"accuracy": interval_of(correct, self.seed)},
                "bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)}


class BatteryEvaluator(Evaluator):
    """A pragmatics battery: (a) the utterance scores above its meant reading (primary); (b) the meant reading is the
    pragmatically closest option. Per category too."""

    primary_metric = "implicitness_accuracy"
    reported = ("choice_accuracy",)

    def __init__(self, items, name: str = "battery", seed: int = 0):
        self.items, self.name, self.seed = items, name, seed

    def __call__(self, model) -> dict:
        from pragmeter.impscore.ood import evaluate_battery

        result = evaluate_battery(model, self.items)
        rows = result["per_item"]
        return {**result, "primary_metric": self.primary_metric,
                "intervals": {"implicitness_accuracy": interval_of([r["implicit_above_plain"] for r in rows], self.seed),
                              "choice_accuracy": interval_of([r["choice_correct"] for r in rows], self.seed)},
                "bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)}


class GradedEvaluator(Evaluator):
    """Spearman ρ between implicitness and external graded ratings (e.g. politeness), bootstrap interval."""

    primary_metric = "spearman_rho"

    def __init__(self, texts: Sequence[str], ratings: Sequence[float], name: str = "graded", seed: int = 0,
                 resamples: int = 1000, ids: Sequence[str] | None = None):
        self.texts, self.ratings, self.name, self.seed, self.resamples = list(texts), list(ratings), name, seed, resamples
        self.ids = list(ids) if ids is not None else [str(i) for i in range(len(self.texts))]

    def __call__(self, model) -> dict:
        from pragmeter.impscore.ood import evaluate_graded

        result = evaluate_graded(model, self.texts, self.ratings, self.resamples, self.seed)
        scores = result.pop("scores")
        return {**result, "primary_metric": self.primary_metric,
                "intervals": {"spearman_rho": {"ci95": list(result["ci95"]), "n": result["n"]}},
                "per_item": [{"id": i, "rating": r, "score": s} for i, r, s in zip(self.ids, self.ratings, scores)]}


class PairOrderEvaluator(Evaluator):
    """(implicit, explicit) pairs: share of pairs whose implicit side scores above its explicit side."""

    primary_metric = "implicit_above_explicit"

    def __init__(self, implicit: Sequence[str], explicit: Sequence[str], name: str = "pairs", seed: int = 0):
        if len(implicit) != len(explicit):
            raise ValueError(f"{name}: {len(implicit)} implicit vs {len(explicit)} explicit sentences")
        self.implicit, self.explicit, self.name, self.seed = list(implicit), list(explicit), name, seed

    def __call__(self, model) -> dict:
        scores = np.asarray(model.score(self.implicit + self.explicit), dtype=float)
        above = scores[:len(self.implicit)] > scores[len(self.implicit):]
        return {"primary_metric": self.primary_metric, "implicit_above_explicit": float(np.mean(above)),
                "intervals": {"implicit_above_explicit": interval_of(above, self.seed)},
                "bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)}


class SuiteEvaluator(Evaluator):
    """Several evaluators run in turn: ``{name: result}`` plus a ``summary`` of each one's primary figure."""

    primary_metric = "summary"

    def __init__(self, evaluators: Sequence[Evaluator], name: str = "suite"):
        self.evaluators, self.name = list(evaluators), name

    def summary(self, result: dict) -> dict:
        return result["summary"]

    def __call__(self, model) -> dict:
        results = {e.name: e(model) for e in self.evaluators}
        summary = {e.name: e.figure(results[e.name], e.primary_metric) for e in self.evaluators}
        return {"primary_metric": self.primary_metric, "summary": summary, "results": results}


class CorpusEvaluator(Evaluator):
    """The paper's test metrics on a corpus split (implicitness and pragmatics accuracy, mean scores and distances),
    overall and per source; the split's embeddings come from (and go to) the on-disk cache."""

    primary_metric = "implicitness_accuracy"
    reported = ("pragmatics_accuracy", "n_triplets", "mean_I_implicit", "mean_I_explicit", "mean_dP_positive",
                "mean_dP_negative")

    def __init__(self, corpus, split: str = "test", cache_root=None, batch_size: int | None = None,
                 device: str | None = None, name: str = "corpus"):
        from pragmeter.errors import PragmeterError

        self.corpus = corpus[corpus["split"] == split]
        if self.corpus.empty:
            raise PragmeterError(f"the corpus has no rows in split {split!r}")
        self.split, self.cache_root, self.batch_size, self.device, self.name = split, cache_root, batch_size, device, name

    def __call__(self, model) -> dict:
        from pathlib import Path

        from pragmeter.encoders import embeddings_dir
        from pragmeter.impscore.accuracy import per_source_metrics
        from pragmeter.impscore.triplets import embed_corpus, evaluate_heads

        cache_root = Path(self.cache_root) if self.cache_root else embeddings_dir()
        data = embed_corpus(self.corpus, model.encoder_name, cache_root, self.batch_size, self.device,
                            show_progress=False)[self.split]
        metrics, out = evaluate_heads(model.heads, data)
        table = per_source_metrics(out, data.sources, data.pragmatic)
        return {**metrics, "primary_metric": self.primary_metric, "split": self.split,
                "per_source": table.to_dict(orient="records")}


def file_evaluator(kind: str, path: str | os.PathLike, seed: int = 0) -> Evaluator:
    """The ranking, choice or battery check on a user file (validated now: a DataError names file, item and field)."""
    from pragmeter.impscore import ood

    evaluator = {"ranking": RankingEvaluator, "choice": ChoiceEvaluator, "battery": BatteryEvaluator}[kind]
    return evaluator(getattr(ood, f"load_{kind}")(path), kind, seed)


# ------------------------------------------------------------------------------------------------ the human suite
# Corpus sources whose two sides people wrote, and which of a source's pairs qualify (by the origin's file): IMPLI's
# hand-written files (not its automatic ones), FLUTE's gold test files, Fig-QA's dev file. Circa's explicit side is a
# rule-made yes/no statement around the crowd's canonical question (no model wrote it).
HUMAN_PAIR_SOURCES: dict[str, tuple[str, ...] | None] = {
    "irony_interpretations": None,
    "isarcasmeval": None,
    "sarcasm_sign": None,
    "impli": ("manual_e", "replacement_"),
    "flute": ("testgolddata/",),
    "circa": None,
    "ludwig": None,
    "pets_euphemisms": None,
    "figqa": ("dev.csv",),
}
# Reported beside the suite, never deciding alone: pairs one side of which a model wrote.
LLM_PAIR_SOURCES = ("capp", "llm_graded_capp", "written_graded_everyday", "written_graded_offrecord")  # ⊂ LLM_WRITTEN_SOURCES
# The corpus the held-out splits come from: every source, seed 0 (splits are drawn per source, so a model trained on
# any subset of this corpus's train split has never seen these pairs).
SUITE_CORPUS_SEED = 0


def held_out_pairs(sources: Sequence[str], root: str | os.PathLike | None = None, split: str = "test",
                   corpus=None) -> dict[str, tuple[list[str], list[str]]]:
    """``source -> (implicit, explicit)`` of a split of the full corpus (built at seed 0 unless ``corpus`` is
    given), restricted to the human-written files of :data:`HUMAN_PAIR_SOURCES`."""
    if corpus is None:
        from pragmeter.impscore.corpus import build_corpus

        corpus = build_corpus(["all"], seed=SUITE_CORPUS_SEED, root=root)[0]
    part = corpus[corpus["split"] == split]
    out = {}
    for source in sources:
        rows = part[part["source"] == source]
        files = HUMAN_PAIR_SOURCES.get(source)
        if files and "origin" in rows.columns:
            rows = rows[rows["origin"].fillna("").map(lambda o: any(f in o for f in files)).astype(bool)]
        out[source] = (rows["implicit"].tolist(), rows["explicit"].tolist())
    return out


def floyd_battery_evaluator(root: str | os.PathLike | None = None, seed: int = 0) -> BatteryEvaluator:
    from pragmeter.datasets.floyd import load_floyd_battery
    from pragmeter.impscore.ood import BatteryItem

    items = [BatteryItem(i.id, i.task, i.utterance, list(i.options), i.answer) for i in load_floyd_battery(root)]
    return BatteryEvaluator(items, "floyd_battery", seed)


def politeness_evaluator(root: str | os.PathLike | None = None, sample: int = 2000, seed: int = 0,
                         domains: Sequence[str] | None = None, resamples: int = 1000) -> GradedEvaluator:
    """Spearman ρ against the Stanford Politeness ratings on a seeded sample (``sample`` 0: every request)."""
    from pragmeter.datasets.politeness import DOMAINS, load_politeness

    requests = load_politeness(tuple(domains or DOMAINS), root=root)
    if 0 < sample < len(requests):
        chosen = np.sort(np.random.default_rng(seed).choice(len(requests), size=sample, replace=False))
        requests = [requests[i] for i in chosen]
    return GradedEvaluator([r.text for r in requests], [r.score for r in requests], "politeness", seed, resamples,
                           [r.id for r in requests])


class HumanSuite(SuiteEvaluator):
    """The human-written evidence suite. Its ``summary`` adds ``pairs_macro`` (the mean over pair sources of the
    implicit-above-explicit share) and ``decision`` = mean of the Floyd battery's (a) and ``pairs_macro``: the figure
    the default is chosen on (politeness ρ and battery (b) are reported, not averaged in)."""

    primary_metric = "decision"

    def __init__(self, root: str | os.PathLike | None = None, seed: int = 0, politeness_sample: int = 2000,
                 corpus=None, pairs_per_source: int | None = None, split: str = "test"):
        # split "val": the same sources' validation pairs, for choosing among recipes without touching the test split
        pairs = held_out_pairs(list(HUMAN_PAIR_SOURCES), root, split, corpus=corpus)
        if pairs_per_source:  # a seeded sample per source (quick checks; the figures of record use every pair)
            rng = np.random.default_rng(seed)
            for source, (implicit, explicit) in pairs.items():
                if len(implicit) > pairs_per_source:
                    keep = np.sort(rng.choice(len(implicit), pairs_per_source, replace=False))
                    pairs[source] = ([implicit[i] for i in keep], [explicit[i] for i in keep])
        self.pair_names = [f"pairs:{s}" for s in HUMAN_PAIR_SOURCES if pairs[s][0]]
        evaluators = [floyd_battery_evaluator(root, seed), politeness_evaluator(root, politeness_sample, seed)]
        evaluators += [PairOrderEvaluator(*pairs[s], name=f"pairs:{s}", seed=seed) for s in HUMAN_PAIR_SOURCES if pairs[s][0]]
        super().__init__(evaluators, "human")

    def __call__(self, model) -> dict:
        out = super().__call__(model)
        summary = out["summary"]
        macro = float(np.mean([summary[n]["value"] for n in self.pair_names]))
        battery = self.evaluators[0]
        summary["floyd_battery_choice"] = battery.figure(out["results"][battery.name], "choice_accuracy")
        summary["pairs_macro"] = macro
        summary["decision"] = float(np.mean([summary["floyd_battery"]["value"], macro]))
        out["decision"] = summary["decision"]
        out["primary_metric"] = self.primary_metric
        return out


def llm_written_suite(root: str | os.PathLike | None = None, seed: int = 0, corpus=None) -> SuiteEvaluator:
    """Our packaged development sets (LLM-written) and the held-out pairs of LLM-written sources: reported beside the
    human suite, never deciding alone."""
    from pragmeter.impscore.ood import DATA_DIR, load_battery, load_choice, load_ranking

    pairs = held_out_pairs(LLM_PAIR_SOURCES, root, corpus=corpus)
    evaluators = [RankingEvaluator(load_ranking(DATA_DIR / "dev_ranking.json"), "dev_ranking", seed),
                  ChoiceEvaluator(load_choice(DATA_DIR / "dev_choice.json"), "dev_choice", seed),
                  BatteryEvaluator(load_battery(DATA_DIR / "dev_battery.json"), "dev_battery", seed)]
    evaluators += [PairOrderEvaluator(*pairs[s], name=f"pairs:{s}", seed=seed) for s in LLM_PAIR_SOURCES if pairs[s][0]]
    return SuiteEvaluator(evaluators, "llm_written")


def format_figure(figure) -> str:
    """``0.800 [0.650, 0.925] n=40`` for a figure with an interval, else the number."""
    if isinstance(figure, dict):
        low, high = figure["ci95"]
        return f"{figure['value']:.3f} [{low:.3f}, {high:.3f}] n={figure['n']}"
    return f"{figure:.3f}" if isinstance(figure, float) else str(figure)


def summary_table(summary: dict) -> str:
    """A markdown table of a suite's summary: check | figure [95% CI] n."""
    rows = [f"| {name} | {format_figure(figure)} |" for name, figure in summary.items()]
    return "\n".join(["| check | figure [95% CI] n |", "|---|---|", *rows])


# ------------------------------------------------------------------------------------ ``pragmeter impscore evaluate``
FILE_CHECKS = ("ranking", "choice", "battery")  # the checks on a user's JSON file (pragmeter.impscore.ood)


def check_evaluators(check: str, root: str | os.PathLike | None = None, seed: int = 0, *,
                     corpus: str | os.PathLike | None = None, split: str = "test",
                     cache_root: str | os.PathLike | None = None, batch_size: int | None = None,
                     device: str | None = None, path: str | os.PathLike | None = None, sample: int = 2000,
                     domains: Sequence[str] | None = None, resamples: int = 1000,
                     politeness_sample: int = 2000) -> list[Evaluator]:
    """The evaluator(s) of one check, built (and their data validated) before any model loads: ``corpus`` (a split of
    the ``corpus`` file, else of the corpus built from ``root`` at ``seed``), a file check (:data:`FILE_CHECKS` on
    ``path``), ``politeness``, or ``human`` (the human suite, then the LLM-written one)."""
    from pragmeter.impscore.corpus import build_corpus, load_corpus

    if check == "corpus":
        frame = load_corpus(corpus, seed=seed) if corpus else build_corpus(seed=seed, root=root)[0]
        return [CorpusEvaluator(frame, split, cache_root, batch_size, device)]
    if check in FILE_CHECKS:
        return [file_evaluator(check, path, seed)]
    if check == "politeness":
        return [politeness_evaluator(root, sample, seed, domains, resamples)]
    frame = build_corpus(["all"], seed=SUITE_CORPUS_SEED, root=root)[0]
    return [HumanSuite(root, seed, politeness_sample, corpus=frame), llm_written_suite(root, seed, corpus=frame)]


def result_text(evaluator: Evaluator, result: dict) -> str:
    """One evaluator's result as ``pragmeter impscore evaluate`` prints it: the summary table (after the decision
    figure of the human suite, or the heading of the LLM-written block) and the per-source accuracies, if any."""
    from pragmeter.impscore.accuracy import format_accuracy

    lines = []
    if evaluator.name == "llm_written":
        lines.append("\nLLM-written sets (reported, never deciding alone)")
    elif evaluator.name == "human":
        lines.append(f"human-written evidence (decision = mean of floyd_battery and pairs_macro): {result['decision']:.3f}")
    lines.append(summary_table(evaluator.summary(result)))
    if "per_source" in result:
        lines.append("\n| source | pairs | implicitness acc. | pragmatics acc. |\n|---|---|---|---|")
        lines += [f"| {row['source']} | {row['pairs']:,} | {format_accuracy(row['implicitness_accuracy'])} | "
                  f"{format_accuracy(row['pragmatics_accuracy'])} |" for row in result["per_source"]]
    return "\n".join(lines)


def run_checks(evaluators: Sequence[Evaluator], model, check: str,
               output: str | os.PathLike | None = None) -> Iterator[str]:
    """Run each evaluator on ``model`` (an ImpScore model or a baseline), yielding its :func:`result_text` as it
    finishes; with ``output``, then write the results (one evaluator's alone, else by name) as a results JSON."""
    from pragmeter.provenance import write_results_json

    results = {}
    for evaluator in evaluators:
        results[evaluator.name] = evaluator(model)
        yield result_text(evaluator, results[evaluator.name])
    if output:
        payload = results[evaluators[0].name] if len(evaluators) == 1 else results
        write_results_json(output, {"model": model.signature(), "check": check, **payload}, model.signature())
        yield f"results -> {output}"


def evaluate_check(check: str, model: Callable[[], Any], output: str | os.PathLike | None = None,
                   overwrite: bool = False, root: str | os.PathLike | None = None, seed: int = 0,
                   **options) -> Iterator[str]:
    """``pragmeter impscore evaluate CHECK``: ``output`` refused unless ``overwrite``, the check's evaluators built
    (:func:`check_evaluators` with ``options``), then ``model()`` loaded (an ImpScore model or a baseline); yields
    ``model: SIGNATURE`` and each result as it finishes (:func:`run_checks`)."""
    from pragmeter.io import check_output

    if output:
        check_output(output, overwrite)
    evaluators = check_evaluators(check, root, seed, **options)
    loaded = model()
    yield f"model: {loaded.signature()}"
    yield from run_checks(evaluators, loaded, check, output)
