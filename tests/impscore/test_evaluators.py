"""The evaluator interface and the human-written suite, on the real data files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pragmeter.cli import main
from pragmeter.datasets.floyd import load_floyd_battery
from pragmeter.encoders.runtime import cpu_has_bf16
from pragmeter.errors import DataError
from pragmeter.impscore.evaluators import (HUMAN_PAIR_SOURCES, LLM_PAIR_SOURCES, BatteryEvaluator, HumanSuite,
                                           PairOrderEvaluator, format_figure, held_out_pairs, with_interval)
from pragmeter.impscore.hedging import HedgingBaseline


class LengthScorer:
    """Longer text = more implicit: a transparent scorer whose figures can be computed by hand."""

    def score(self, texts):
        return np.array([len(t) for t in texts], dtype=float)

    def pragmatic_distance(self, a, b):
        return np.abs(np.array([len(x) for x in a], float) - np.array([len(y) for y in b], float))

    def signature(self) -> str:
        return "length"


def test_floyd_battery_reads_the_forty_expert_items(data_root):
    items = load_floyd_battery(data_root)
    assert len(items) == 40
    assert {i.task for i in items} == {"Metaphor", "Maxims"}
    assert sum(i.task == "Metaphor" for i in items) == 20
    assert items[0].utterance == "This town is a chimney."
    assert items[0].meaning == "The town is not one of the cleanest ones."


def test_floyd_battery_refuses_a_changed_file(tmp_path, data_root):
    target = tmp_path / "floyd_dev" / "floyd_dev_battery.json"
    target.parent.mkdir()
    payload = json.loads((data_root / "floyd_dev" / "floyd_dev_battery.json").read_text())
    payload["items"][0]["answer"] = 0
    target.write_text(json.dumps(payload))
    with pytest.raises(DataError, match="floyd_dev_battery.json"):
        load_floyd_battery(tmp_path)


def test_pair_order_matches_a_hand_count_and_carries_an_interval():
    evaluator = PairOrderEvaluator(["a long one", "xx", "abcdef"], ["short", "yyy", "abc"], name="toy")
    result = evaluator(LengthScorer())
    assert evaluator.primary_metric == "toy_implicit_above_explicit"
    assert result[evaluator.primary_metric] == pytest.approx(2 / 3)
    assert set(result) == {"toy_implicit_above_explicit", "toy_implicit_above_explicit_ci_low",
                           "toy_implicit_above_explicit_ci_high", "toy_implicit_above_explicit_n"}
    assert all(type(value) is float for value in result.values())  # flat floats, as sentence-transformers'
    assert result["toy_implicit_above_explicit_n"] == 3
    figure = evaluator.summary(evaluator.evaluate(LengthScorer()))["implicit_above_explicit"]
    assert figure["value"] == pytest.approx(2 / 3) and figure["n"] == 3
    assert figure["ci95"][0] <= figure["value"] <= figure["ci95"][1]
    assert format_figure(figure).endswith("n=3")


def test_interval_is_seeded_and_narrows_with_n():
    small, large = with_interval([1, 0] * 10, seed=3), with_interval([1, 0] * 500, seed=3)
    assert small == with_interval([1, 0] * 10, seed=3)
    assert large["ci95"][1] - large["ci95"][0] < small["ci95"][1] - small["ci95"][0]


def test_battery_evaluator_on_floyd_with_a_scorer_that_prefers_long_text(data_root):
    from pragmeter.impscore.ood import BatteryItem

    items = [BatteryItem(i.id, i.task, i.utterance, list(i.options), i.answer) for i in load_floyd_battery(data_root)]
    evaluator = BatteryEvaluator(items, "floyd")
    run = evaluator.evaluate(LengthScorer())
    expected = np.mean([len(i.utterance) > len(i.meaning) for i in items])
    assert evaluator.primary_metric == "floyd_implicitness_accuracy"
    assert run.metrics["floyd_implicitness_accuracy"] == pytest.approx(expected)
    assert run.metrics["floyd_implicitness_accuracy_n"] == run.metrics["floyd_items"] == 40
    assert (run.metrics["floyd_choice_accuracy_ci_low"] <= run.metrics["floyd_choice_accuracy"]
            <= run.metrics["floyd_choice_accuracy_ci_high"])
    assert set(run.details["per_category"]) == {"Metaphor", "Maxims"}
    assert evaluator(LengthScorer()) == run.metrics


def test_held_out_pairs_are_never_in_the_train_split(suite_corpus):
    pairs = held_out_pairs(list(HUMAN_PAIR_SOURCES), corpus=suite_corpus)
    train = suite_corpus[suite_corpus["split"] == "train"]
    train_texts = set(train["implicit"]) | set(train["explicit"])
    for source, (implicit, explicit) in pairs.items():
        assert len(implicit) >= 50, source  # every human-written source contributes a usable held-out set
        assert not (set(implicit) & train_texts), source
    # only hand-written files of IMPLI, FLUTE's gold test, Fig-QA's dev file
    test = suite_corpus[suite_corpus["split"] == "test"]
    impli = test[test["source"] == "impli"]
    assert len(pairs["impli"][0]) < len(impli)
    assert not set(LLM_PAIR_SOURCES) & set(pairs)


def test_human_suite_decision_with_the_real_default_model(suite_corpus, data_root):
    from pragmeter.impscore.model import ImpScore

    suite = HumanSuite(data_root, politeness_sample=200, corpus=suite_corpus, pairs_per_source=60)
    run = suite.evaluate(ImpScore.load())
    result, summary = run.metrics, suite.summary(run)
    assert suite.primary_metric == "human_decision"
    assert all(isinstance(value, float) for value in result.values())
    assert result["floyd_battery_implicitness_accuracy_n"] == 40 and summary["floyd_battery"]["n"] == 40
    assert {f"pairs:{s}" for s in HUMAN_PAIR_SOURCES} <= set(summary)
    assert all(result[f"pairs:{s}_implicit_above_explicit_n"] <= 60 for s in HUMAN_PAIR_SOURCES)
    macro = np.mean([result[f"pairs:{s}_implicit_above_explicit"] for s in HUMAN_PAIR_SOURCES])
    assert result["human_pairs_macro"] == summary["pairs_macro"] == pytest.approx(macro)
    assert result["human_decision"] == pytest.approx((result["floyd_battery_implicitness_accuracy"] + macro) / 2)
    assert "politeness_spearman_rho_ci_high" in result
    # a trained ImpScore orders the human-written pairs far above chance; the hedge-word count does not
    assert macro > 0.7
    assert suite(HedgingBaseline())["human_pairs_macro"] < macro - 0.1


def test_cli_human_suite_writes_its_figures(tmp_path):
    out = tmp_path / "human.json"
    assert main(["impscore", "evaluate", "human", "--baseline", "hedging", "--politeness-sample", "100",
                 "--output", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert payload["human"]["primary_metric"] == "human_decision" in payload["human"]["metrics"]
    assert payload["human"]["metrics"]["floyd_battery_implicitness_accuracy_n"] == 40
    assert payload["llm_written"]["primary_metric"] == "dev_ranking_kendall_tau" in payload["llm_written"]["metrics"]
    assert len(payload["human"]["details"]["floyd_battery"]["per_item"]) == 40
    assert payload["run"]["command"]


@pytest.fixture(scope="module")
def corpus_slice(suite_corpus):
    """Ten test triplets of each human-written source (real pairs)."""
    test = suite_corpus[suite_corpus["split"] == "test"]
    return test.groupby("source").head(10)


RUNTIMES = [("openvino", "fp32"), ("torch", "fp32"),
            pytest.param("openvino", "bf16", marks=pytest.mark.skipif(not cpu_has_bf16(),
                                                                       reason="bf16 needs AVX-512 BF16 or AMX"))]


@pytest.fixture(scope="module")
def corpus_figures(corpus_slice):
    """The corpus check on the shipped MiniLM heads loaded each way this host runs, beside that loaded model's own
    scores and distances of the split's texts (the same texts in the same order: the same batches)."""
    from pragmeter.impscore.evaluators import CorpusEvaluator
    from pragmeter.impscore.model import ImpScore

    figures = {}
    for backend, precision in [("openvino", "fp32"), ("torch", "fp32"), *([("openvino", "bf16")] * cpu_has_bf16())]:
        model = ImpScore.load("impscore-minilm", backend=backend, precision=precision)
        evaluator = CorpusEvaluator(corpus_slice, "test")
        texts = list(dict.fromkeys(pd.concat([corpus_slice[c] for c in ("implicit", "explicit", "negative")])))
        embeddings = model.encode(texts)
        own = {"score": dict(zip(texts, model.score_embeddings(embeddings).astype(np.float64))),
               "pragmatic": dict(zip(texts, model.features_of_embeddings(embeddings).pragmatic))}
        figures[backend, precision] = (model, evaluator(model), own)
    return figures


@pytest.mark.parametrize("backend, precision", RUNTIMES)
def test_the_corpus_check_measures_the_model_as_loaded(corpus_slice, corpus_figures, backend, precision):
    model, metrics, own = corpus_figures[backend, precision]
    assert model.runtime.backend == backend and model.precision == precision
    i1, i2, i3 = (np.array([own["score"][t] for t in corpus_slice[c]]) for c in ("implicit", "explicit", "negative"))
    # exactly the loaded model's own scores, not those of another runtime
    assert metrics["corpus_mean_I_implicit"] == np.mean(i1)
    assert metrics["corpus_mean_I_explicit"] == np.mean(np.concatenate([i2, i3]))
    assert metrics["corpus_implicitness_accuracy"] == ((i1 > i2).sum() + (i1 > i3).sum()) / (2 * len(i1))
    h1, h3 = (np.stack([own["pragmatic"][t] for t in corpus_slice[c]]) for c in ("implicit", "negative"))
    paraphrases = corpus_slice["pragmatic"].to_numpy(dtype=bool)  # ΔP means are over the paraphrase triplets
    distances = model.distances_of_features(h1, h3).astype(np.float64)[paraphrases]
    assert paraphrases.any() and metrics["corpus_mean_dP_negative"] == pytest.approx(np.mean(distances), rel=1e-12)
    assert metrics["corpus_n_triplets"] == len(corpus_slice)
    # the two other runtimes give other figures (bf16 moves scores by up to the bound; fp32 runtimes by rounding)
    others = [other for key, (_, other, _) in corpus_figures.items() if key != (backend, precision)]
    assert others and all(other["corpus_mean_I_implicit"] != metrics["corpus_mean_I_implicit"] for other in others)


def test_cli_corpus_check_prints_the_figures_and_writes_them_flat(corpus_slice, tmp_path, capsys):
    corpus = tmp_path / "corpus.parquet"
    corpus_slice.to_parquet(corpus)
    out = tmp_path / "corpus.json"
    assert main(["impscore", "evaluate", "corpus", "--model", "impscore-minilm", "--corpus", str(corpus),
                 "--cache", str(tmp_path / "embeddings"), "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    payload = json.loads(out.read_text())
    metrics = payload["metrics"]
    assert payload["primary_metric"] == "corpus_implicitness_accuracy" and "|backend=torch|precision=fp32|" in payload["model"]
    assert f"| implicitness_accuracy | {metrics['corpus_implicitness_accuracy']:.3f} |" in printed
    assert f"| n_triplets | {len(corpus_slice)} |" in printed
    sources = sorted(corpus_slice["source"].unique())
    assert [row["source"] for row in payload["details"]["per_source"]] == sources
    counts = corpus_slice["source"].value_counts()
    assert all(f"| {source} | {counts[source]} | " in printed for source in sources)
    assert any((tmp_path / "embeddings").iterdir())  # the split's embeddings went through the cache given
