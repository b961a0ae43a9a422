"""Evaluators: the ImpScore checks behind the one evaluator interface (:mod:`pragmeter.metrics.evaluator`): build
one with its data, call it with a model, get a flat ``{name: float}`` dict whose keys carry the evaluator's name
(``floyd_battery_implicitness_accuracy``), and read ``primary_metric`` for the key that model selection compares.
Every figure that is a mean over items carries a seeded percentile-bootstrap 95% interval (resampling items) and its
n as keys of its own beside it (``…_ci_low``, ``…_ci_high``, ``…_n``). What is not one number (per item, per group,
per source, per category, the bootstrap's signature) comes with :meth:`Evaluator.evaluate`, for tables and results
files.

The model is measured as it was loaded: every figure comes from its own ``score``, ``pragmatic_distance`` or
``encode`` (its backend, precision and embedding cache), so a bf16 model gives its bf16 figures. Any scorer with
``score(texts)``, ``pragmatic_distance(a, b)`` and ``signature()`` can be evaluated (an ImpScore model, or the
hedge-word baseline); the corpus check also needs ``encode``.

The **human-written suite** (:class:`HumanSuite`) decides which model ships: only text that people wrote is in it —
the Floyd et al. expert battery, the Stanford Politeness ratings, and the held-out (test-split) pairs of every
corpus source whose two sides people wrote. LLM-written sets are reported by :func:`llm_written_suite` and never
decide alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from pragmeter.errors import InvalidParameter
from pragmeter.metrics.evaluator import (CI_HIGH, CI_LOW, N, RESAMPLES, Evaluation, Evaluator,  # noqa: F401
                                         interval_metrics, with_interval)
from pragmeter.metrics.intervals import BOOTSTRAP_SIGNATURE

class RankingEvaluator(Evaluator):
    """Groups listed from most explicit to most implicit: mean Kendall τ (and Spearman ρ) of the model's order."""

    metric = "kendall_tau"
    reported = ("spearman_rho", "paper_choice_accuracy")

    def __init__(self, groups, name: str = "ranking", seed: int = 0):
        self.groups, self.name, self.seed = groups, name, seed

    def evaluate(self, model) -> Evaluation:
        from pragmeter.impscore.ood import evaluate_ranking

        result = evaluate_ranking(model, self.groups)
        taus = np.nan_to_num([g["kendall_tau"] for g in result["per_group"]])
        figures = {key: result[key] for key in ("groups", "spearman_rho", "constant_groups", "paper_choice_accuracy")}
        return Evaluation(self.prefixed({**figures, **interval_metrics("kendall_tau", taus, self.seed)}),
                          {"per_category": result["per_category"], "per_group": result["per_group"],
                           "bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)})


class ChoiceEvaluator(Evaluator):
    """Choose the option pragmatically closest to the reference: accuracy."""

    metric = "accuracy"

    def __init__(self, items, name: str = "choice", seed: int = 0):
        self.items, self.name, self.seed = items, name, seed

    def evaluate(self, model) -> Evaluation:
        from pragmeter.impscore.ood import evaluate_choice

        result = evaluate_choice(model, self.items)
        correct = [row["chosen"] == row["answer"] for row in result["per_item"]]
        return Evaluation(self.prefixed({"items": result["items"], **interval_metrics("accuracy", correct, self.seed)}),
                          {"per_item": result["per_item"],
                           "bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)})


class BatteryEvaluator(Evaluator):
    """A pragmatics battery: (a) the utterance scores above its meant reading (primary); (b) the meant reading is the
    pragmatically closest option. Per category too."""

    metric = "implicitness_accuracy"
    reported = ("choice_accuracy",)

    def __init__(self, items, name: str = "battery", seed: int = 0):
        self.items, self.name, self.seed = items, name, seed

    def evaluate(self, model) -> Evaluation:
        from pragmeter.impscore.ood import evaluate_battery

        result = evaluate_battery(model, self.items)
        rows = result["per_item"]
        return Evaluation(
            self.prefixed({"items": result["items"],
                           **interval_metrics("implicitness_accuracy", [r["implicit_above_plain"] for r in rows],
                                              self.seed),
                           **interval_metrics("choice_accuracy", [r["choice_correct"] for r in rows], self.seed)}),
            {"per_category": result["per_category"], "per_item": rows,
             "bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)})


class GradedEvaluator(Evaluator):
    """Spearman ρ between implicitness and external graded ratings (e.g. politeness), bootstrap interval."""

    metric = "spearman_rho"

    def __init__(self, texts: Sequence[str], ratings: Sequence[float], name: str = "graded", seed: int = 0,
                 resamples: int = 1000, ids: Sequence[str] | None = None):
        self.texts, self.ratings, self.name, self.seed, self.resamples = list(texts), list(ratings), name, seed, resamples
        self.ids = list(ids) if ids is not None else [str(i) for i in range(len(self.texts))]

    def evaluate(self, model) -> Evaluation:
        from pragmeter.impscore.ood import evaluate_graded

        result = evaluate_graded(model, self.texts, self.ratings, self.resamples, self.seed)
        low, high = result["ci95"]
        return Evaluation(
            self.prefixed({"spearman_rho": result["spearman_rho"], "spearman_rho" + CI_LOW: low,
                           "spearman_rho" + CI_HIGH: high, "spearman_rho" + N: result["n"],
                           "mean_score": result["mean_score"]}),
            {"per_item": [{"id": i, "rating": r, "score": s}
                          for i, r, s in zip(self.ids, self.ratings, result["scores"])],
             "bootstrap": result["bootstrap"]})


class PairOrderEvaluator(Evaluator):
    """(implicit, explicit) pairs: share of pairs whose implicit side scores above its explicit side."""

    metric = "implicit_above_explicit"

    def __init__(self, implicit: Sequence[str], explicit: Sequence[str], name: str = "pairs", seed: int = 0):
        if len(implicit) != len(explicit):
            raise ValueError(f"{name}: {len(implicit)} implicit vs {len(explicit)} explicit sentences")
        self.implicit, self.explicit, self.name, self.seed = list(implicit), list(explicit), name, seed

    def evaluate(self, model) -> Evaluation:
        scores = np.asarray(model.score(self.implicit + self.explicit), dtype=float)
        above = scores[:len(self.implicit)] > scores[len(self.implicit):]
        return Evaluation(self.prefixed(interval_metrics(self.metric, above, self.seed)),
                          {"bootstrap": BOOTSTRAP_SIGNATURE.format(n=RESAMPLES, seed=self.seed)})


class SuiteEvaluator(Evaluator):
    """Several evaluators run in turn, their figures in one flat dict (each keyed by its own evaluator's name, as
    sentence-transformers' SequentialEvaluator); ``primary`` names the evaluator whose primary metric is the
    suite's. Its summary is each evaluator's primary figure, by name."""

    def __init__(self, evaluators: Sequence[Evaluator], name: str = "suite", primary: Evaluator | None = None):
        self.evaluators, self.name = list(evaluators), name
        names = [e.name for e in self.evaluators]
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: evaluators must have distinct names, got {names}")
        if primary is None and not hasattr(self, "metric"):  # a suite with a figure of its own sets ``metric``
            raise InvalidParameter("primary", primary, f"{name}: name the evaluator whose primary metric is the suite's")
        self.primary = primary

    @property
    def primary_metric(self) -> str:
        return self.primary.primary_metric if self.primary is not None else self.key(self.metric)

    def evaluate(self, model) -> Evaluation:
        runs = {e.name: e.evaluate(model) for e in self.evaluators}
        return Evaluation({k: v for run in runs.values() for k, v in run.metrics.items()},
                          {name: run.details for name, run in runs.items()})

    def summary(self, evaluation: Evaluation) -> dict:
        return {e.name: e.figure(evaluation.metrics, e.metric) for e in self.evaluators}


class CorpusEvaluator(Evaluator):
    """The paper's test metrics on a corpus split (implicitness and pragmatics accuracy, mean scores and distances),
    overall and per source, from the model's own embeddings of the split's texts (its runtime and embedding cache)
    and its heads."""

    metric = "implicitness_accuracy"
    reported = ("pragmatics_accuracy", "n_triplets", "mean_I_implicit", "mean_I_explicit", "mean_dP_positive",
                "mean_dP_negative")

    def __init__(self, corpus, split: str = "test", name: str = "corpus"):
        from pragmeter.errors import PragmeterError

        self.corpus = corpus[corpus["split"] == split]
        if self.corpus.empty:
            raise PragmeterError(f"the corpus has no rows in split {split!r}")
        self.split, self.name = split, name

    def evaluate(self, model) -> Evaluation:
        import pandas as pd
        import torch

        from pragmeter.impscore.accuracy import per_source_metrics, triplet_metrics
        from pragmeter.impscore.losses import TripletOutputs

        columns = ("implicit", "explicit", "negative")
        texts = pd.unique(pd.concat([self.corpus[c] for c in columns])).tolist()
        row_of = {text: i for i, text in enumerate(texts)}
        embeddings = model.encode(texts)
        scores = model.score_embeddings(embeddings)
        pragmatic = model.features_of_embeddings(embeddings).pragmatic
        rows = {c: np.array([row_of[t] for t in self.corpus[c]], dtype=np.int64) for c in columns}
        implicit, explicit, negative = (pragmatic[rows[c]] for c in columns)
        out = TripletOutputs(*(torch.as_tensor(np.asarray(v, dtype=np.float32)) for v in (
            scores[rows["implicit"]], scores[rows["explicit"]], scores[rows["negative"]],
            model.distances_of_features(implicit, explicit), model.distances_of_features(implicit, negative))))
        mask = self.corpus["pragmatic"].to_numpy(dtype=bool) if "pragmatic" in self.corpus.columns else None
        sources = self.corpus["source"].tolist()
        return Evaluation(self.prefixed(triplet_metrics(out, mask)),
                          {"split": self.split,
                           "per_source": per_source_metrics(out, sources, mask).to_dict(orient="records")})


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
    """The human-written evidence suite. Beside its evaluators' figures it gives ``human_pairs_macro`` (the mean over
    pair sources of the implicit-above-explicit share) and ``human_decision`` = mean of the Floyd battery's (a) and
    the pairs' macro mean: its primary metric, the figure the default is chosen on (politeness ρ and battery (b) are
    reported, not averaged in). Each part is found by its role, not by its place in the list."""

    metric = "decision"

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
        self.battery = floyd_battery_evaluator(root, seed)
        self.politeness = politeness_evaluator(root, politeness_sample, seed)
        self.pairs = [PairOrderEvaluator(*pairs[s], name=f"pairs:{s}", seed=seed) for s in HUMAN_PAIR_SOURCES
                      if pairs[s][0]]
        super().__init__([self.battery, self.politeness, *self.pairs], "human")

    def evaluate(self, model) -> Evaluation:
        run = super().evaluate(model)
        metrics = run.metrics
        macro = float(np.mean([metrics[p.primary_metric] for p in self.pairs]))
        decision = float(np.mean([metrics[self.battery.primary_metric], macro]))
        return Evaluation({**metrics, self.key("pairs_macro"): macro, self.key("decision"): decision}, run.details)

    def summary(self, evaluation: Evaluation) -> dict:
        metrics = evaluation.metrics
        return {**super().summary(evaluation),
                "floyd_battery_choice": self.battery.figure(metrics, "choice_accuracy"),
                "pairs_macro": metrics[self.key("pairs_macro")], "decision": metrics[self.primary_metric]}


def llm_written_suite(root: str | os.PathLike | None = None, seed: int = 0, corpus=None) -> SuiteEvaluator:
    """Our packaged development sets (LLM-written) and the held-out pairs of LLM-written sources: reported beside the
    human suite, never deciding alone (its primary metric is the development ranking's τ)."""
    from pragmeter.impscore.ood import DATA_DIR, load_battery, load_choice, load_ranking

    pairs = held_out_pairs(LLM_PAIR_SOURCES, root, corpus=corpus)
    ranking = RankingEvaluator(load_ranking(DATA_DIR / "dev_ranking.json"), "dev_ranking", seed)
    evaluators = [ranking, ChoiceEvaluator(load_choice(DATA_DIR / "dev_choice.json"), "dev_choice", seed),
                  BatteryEvaluator(load_battery(DATA_DIR / "dev_battery.json"), "dev_battery", seed)]
    evaluators += [PairOrderEvaluator(*pairs[s], name=f"pairs:{s}", seed=seed) for s in LLM_PAIR_SOURCES if pairs[s][0]]
    return SuiteEvaluator(evaluators, "llm_written", primary=ranking)


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
                     path: str | os.PathLike | None = None, sample: int = 2000,
                     domains: Sequence[str] | None = None, resamples: int = 1000,
                     politeness_sample: int = 2000) -> list[Evaluator]:
    """The evaluator(s) of one check, built (and their data validated) before any model loads: ``corpus`` (a split of
    the ``corpus`` file, else of the corpus built from ``root`` at ``seed``), a file check (:data:`FILE_CHECKS` on
    ``path``), ``politeness``, or ``human`` (the human suite, then the LLM-written one)."""
    from pragmeter.impscore.corpus import build_corpus, load_corpus

    if check == "corpus":
        frame = load_corpus(corpus, seed=seed) if corpus else build_corpus(seed=seed, root=root)[0]
        return [CorpusEvaluator(frame, split)]
    if check in FILE_CHECKS:
        return [file_evaluator(check, path, seed)]
    if check == "politeness":
        return [politeness_evaluator(root, sample, seed, domains, resamples)]
    frame = build_corpus(["all"], seed=SUITE_CORPUS_SEED, root=root)[0]
    return [HumanSuite(root, seed, politeness_sample, corpus=frame), llm_written_suite(root, seed, corpus=frame)]


def result_text(evaluator: Evaluator, evaluation: Evaluation) -> str:
    """One evaluator's run as ``pragmeter impscore evaluate`` prints it: the summary table (after the decision
    figure of the human suite, or the heading of the LLM-written block) and the per-source accuracies, if any."""
    from pragmeter.impscore.accuracy import format_accuracy

    lines = []
    if evaluator.name == "llm_written":
        lines.append("\nLLM-written sets (reported, never deciding alone)")
    elif isinstance(evaluator, HumanSuite):
        lines.append("human-written evidence (decision = mean of floyd_battery and pairs_macro): "
                     f"{evaluation.metrics[evaluator.primary_metric]:.3f}")
    lines.append(summary_table(evaluator.summary(evaluation)))
    if "per_source" in evaluation.details:
        lines.append("\n| source | pairs | implicitness acc. | pragmatics acc. |\n|---|---|---|---|")
        lines += [f"| {row['source']} | {row['pairs']:,} | {format_accuracy(row['implicitness_accuracy'])} | "
                  f"{format_accuracy(row['pragmatics_accuracy'])} |" for row in evaluation.details["per_source"]]
    return "\n".join(lines)


def result_record(evaluator: Evaluator, evaluation: Evaluation) -> dict:
    """One evaluator's run as the results file holds it: ``primary_metric``, the flat ``metrics`` and the
    ``details``."""
    return {"primary_metric": evaluator.primary_metric, "metrics": evaluation.metrics, "details": evaluation.details}


def run_checks(evaluators: Sequence[Evaluator], model, check: str,
               output: str | os.PathLike | None = None) -> Iterator[str]:
    """Run each evaluator on ``model`` (an ImpScore model or a baseline), yielding its :func:`result_text` as it
    finishes; with ``output``, then write the results (one evaluator's alone, else by name; each a
    :func:`result_record`) as a results JSON."""
    from pragmeter.provenance import write_results_json

    records = {}
    for evaluator in evaluators:
        evaluation = evaluator.evaluate(model)
        records[evaluator.name] = result_record(evaluator, evaluation)
        yield result_text(evaluator, evaluation)
    if output:
        payload = records[evaluators[0].name] if len(evaluators) == 1 else records
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
