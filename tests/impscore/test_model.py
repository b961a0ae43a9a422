"""The shipped model loads offline and scores as the paper describes; save/load round trips."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pragmeter import ImpScore
from pragmeter.encoders.runtime import score_tolerance
from pragmeter.errors import PragmeterError
from pragmeter.impscore.model import DEFAULT_MODEL, MODELS_DIR, shipped_models


@pytest.fixture(scope="module")
def model() -> ImpScore:
    return ImpScore.load(DEFAULT_MODEL)


def test_default_model_ships_with_weights_config_and_card():
    folder = MODELS_DIR / DEFAULT_MODEL
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["format"] == "pragmeter-impscore"
    assert (folder / "heads.safetensors").stat().st_size < 1_000_000  # heads only, never the encoder
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "implicitness accuracy" in card and config["encoder"] in card
    # The paper's in-distribution bars on the paper's sources (0.9662 / 0.9617 at ship time: the default's release
    # figures, recorded by tools/record_model_figures.py); the whole test split also holds people's figurative pairs
    # and the graded groups' adjacent levels, which are harder.
    from pragmeter.datasets.pairs.registry import PRESETS

    per_source = pd.read_csv(folder / "test_per_source.csv")
    paper = per_source[per_source["source"].isin(PRESETS["paper"])]
    assert paper["implicitness_correct"].sum() / (2 * paper["pairs"].sum()) >= 0.95
    assert paper["pragmatics_correct"].sum() / paper["pragmatic_pairs"].sum() >= 0.96
    recorded = config["evaluation"]["paper_test"]
    assert recorded["implicitness_accuracy"] >= 0.95 and recorded["pragmatics_accuracy"] >= 0.96
    assert DEFAULT_MODEL in shipped_models()


def test_the_model_and_package_show_what_they_are(model):
    import pragmeter

    assert "ImpScore" in dir(pragmeter)  # the lazy entry point is listed for completion
    shown = repr(model)  # names model, encoder (its fine-tuned layers' key too) and arithmetic, without loading
    assert shown == (f"ImpScore(model={DEFAULT_MODEL!r}, encoder={model.encoder_label!r}, backend={model.backend!r}, "
                     f"precision={model.precision!r})")
    assert model.encoder_label in model.signature() and "object at 0x" not in shown


def test_acceptance_pair(model):
    scores = model.score(["You are talking too loudly.", "I'm finding it a bit hard to concentrate."])
    assert scores.shape == (2,)
    assert ((scores >= 0) & (scores <= 2)).all()
    assert scores[1] > scores[0]


def test_implicit_posts_score_above_their_explicit_statements(model):
    implicit = ["if you are white in that state watch yourself !",
                "- Are you a fan of Korean food? - I'd rather have a burger."]
    explicit = ["non-white people are dangerous", "- Are you a fan of Korean food? - No, I am not a fan of Korean food."]
    assert (model.score(implicit) > model.score(explicit)).all()


@pytest.fixture(scope="module")
def fp32_model() -> ImpScore:
    """The default model in fp32, its encoder ready: where a test compares scores of the same texts encoded in other
    batches (bf16 moves with batching, by 0.0016 on an AMX host), fp32 moves by float rounding only."""
    model = ImpScore.load(DEFAULT_MODEL, precision="fp32")
    model.encoder  # built (on a fresh cache: converted, with a one-time line on stderr) before any test reads stderr
    return model


def test_progress_bar_moves_a_step_at_a_time_and_changes_no_score(fp32_model, monkeypatch, capsys):
    from pragmeter.data.root import data_file

    model = fp32_model
    posts = pd.read_csv(data_file("implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg3_posts.tsv"),
                        sep="\t")["post"].head(300).tolist()
    monkeypatch.setenv("PRAGMETER_CHUNK_SIZE", "128")
    quiet = model.score(posts)
    assert capsys.readouterr().err == ""  # no bar unless asked for
    steps, encode = [], model._encode_or_reuse
    monkeypatch.setattr(model, "_encode_or_reuse", lambda texts: steps.append(len(texts)) or encode(texts))
    with_bar = model.score(posts, show_progress_bar=True)
    bar = capsys.readouterr().err
    assert steps == [128, 128, 44] and "embedding" in bar and "300/300" in bar  # the bar's steps (tqdm may skip
    # drawing the middle ones on a fast machine)
    assert np.abs(with_bar - quiet).max() <= score_tolerance("fp32")  # the same texts, encoded in steps


def test_embed_and_distance_are_consistent(fp32_model):
    model = fp32_model  # a pair and a triple are other batches: fp32, where they change float rounding only
    texts = ["It's getting late.", "You should go home now.", "The sky is blue."]
    features = model.embed(texts)
    assert features.pragmatic.shape == (3, model.heads.config.dim) == features.semantic.shape
    expected = np.linalg.norm(features.pragmatic[0] - features.pragmatic[1])
    assert model.pragmatic_distance(texts[0], texts[1]) == pytest.approx(expected, rel=1e-4)
    matrix = model.distance_matrix(texts)
    assert matrix.shape == (3, 3) and np.allclose(matrix, matrix.T, atol=1e-5) and np.allclose(np.diag(matrix), 0, atol=1e-4)
    elementwise = model.pragmatic_distance(texts[:2], texts[1:])
    assert elementwise.shape == (2,)


def test_bad_inputs_raise_clear_errors(model):
    with pytest.raises(PragmeterError, match="text 1: empty text"):
        model.score(["fine", ""])
    with pytest.raises(PragmeterError, match="text 0: missing value"):
        model.score([float("nan")])
    with pytest.raises(PragmeterError, match="equal length"):
        model.pragmatic_distance(["a", "b"], ["c"])
    with pytest.raises(PragmeterError, match="no ImpScore model"):
        ImpScore.load("no-such-model")


def test_save_and_reload_give_identical_scores(model, tmp_path):
    texts = ["I have an early start tomorrow.", "Please leave."]
    model.save(tmp_path / "copy")
    again = ImpScore.load(tmp_path / "copy")
    assert np.array_equal(model.score(texts), again.score(texts))


def test_a_save_that_fails_midway_leaves_the_old_folder_whole(model, tmp_path):
    folder = model.save(tmp_path / "model", card="first")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    def fail(staging):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        model.save(folder, card="second", also=fail)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["model"]  # no staging folder left beside it


def test_loads_offline_in_a_fresh_process(tmp_path):
    code = ("from pragmeter import ImpScore; m = ImpScore.load(); "
            "print(m.score(['Is the pope Catholic?'])[0])")
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path), "PRAGMETER_CACHE": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert 0.0 <= float(result.stdout.strip()) <= 2.0


def test_every_shipped_card_lists_its_sources_licences():
    # Model cards name every training source with its licence; CAPP (CC BY-NC-SA) puts its terms on the weights.
    for name in shipped_models():
        folder = MODELS_DIR / name
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        card = (folder / "README.md").read_text(encoding="utf-8")
        assert (folder / "heads.safetensors").stat().st_size < 1_000_000, name
        if "## Sources and licences" in card:
            if "| capp |" in card:
                assert "non-commercial" in card, name
        else:  # the older paper-corpus models list their sources in the data section
            assert "Data" in card and config["encoder"] in card, name


def test_saved_weights_follow_the_umask(model, tmp_path):
    import os
    import stat

    old = os.umask(0o022)
    try:
        folder = model.save(tmp_path / "copy")
    finally:
        os.umask(old)
    assert stat.S_IMODE((folder / "heads.safetensors").stat().st_mode) == 0o644


def test_default_agrees_with_human_written_language(model, suite_corpus):
    # The default is chosen on the human-written suite (release figures: Floyd (a) 0.900, human pairs 0.873, decision
    # 0.886; the old default's recipe on MiniLM: 0.80 / 0.80 / 0.80): a quick form of it, 100 pairs per source.
    from pragmeter.impscore.evaluators import HumanSuite

    result = HumanSuite(politeness_sample=100, pairs_per_source=100, corpus=suite_corpus)(model)
    assert result["floyd_battery_implicitness_accuracy"] >= 0.8
    assert result["human_pairs_macro"] >= 0.82
    assert result["human_decision"] >= 0.83


def test_default_still_ranks_our_llm_written_groups(tmp_path):
    # Reported beside the human suite, never deciding alone: the graded groups (LLM-written) are still ordered
    # (dev τ 0.625 at ship time; the paper corpus alone 0.13).
    from pragmeter.encoders.embedding_cache import attach_embedding_cache
    from pragmeter.impscore.ood import DATA_DIR, evaluate_ranking, load_ranking

    model = attach_embedding_cache(ImpScore.load(DEFAULT_MODEL), tmp_path)
    ranking = evaluate_ranking(model, load_ranking(DATA_DIR / "dev_ranking.json"))
    assert ranking["kendall_tau"] >= 0.55


def test_the_environment_names_the_model_used_when_none_is_given(monkeypatch):
    from pragmeter.impscore.model import DEFAULT_MODEL_ENV, resolve_model_dir

    monkeypatch.setenv(DEFAULT_MODEL_ENV, "impscore-minilm")
    assert resolve_model_dir(None) == MODELS_DIR / "impscore-minilm"
    monkeypatch.delenv(DEFAULT_MODEL_ENV)
    assert resolve_model_dir(None) == MODELS_DIR / DEFAULT_MODEL


def test_every_shipped_model_has_a_purpose_and_its_human_suite_figures():
    from pragmeter.impscore.catalogue import catalogue

    rows = catalogue()
    assert 1 <= len(rows) <= 4 and rows[0]["default"] and rows[0]["name"] == DEFAULT_MODEL
    for row in rows:
        assert row["purpose"] and row["human_decision"] is not None, row["name"]
    default = rows[0]
    # chosen on the human suite among the models at MiniLM's cost; a model above it is on a slower encoder
    # (the rule: a slower default must win beyond noise and pay for its speed)
    assert default["human_decision"] == max(r["human_decision"] for r in rows if r["encoder"] == default["encoder"])
    for row in rows:
        if row["human_decision"] > default["human_decision"]:
            assert row["sentences_per_second"] < default["sentences_per_second"] / 4, row["name"]
    card = (MODELS_DIR / DEFAULT_MODEL / "README.md").read_text(encoding="utf-8")
    assert "## Sentences written by a language model" in card and "written_graded_everyday" in card


def test_an_unknown_model_name_lists_the_shipped_ones():
    from pragmeter.errors import PragmeterError

    with pytest.raises(PragmeterError, match="no ImpScore model at 'impscore-mpnet': give a model folder or one of: "
                                             "impscore-minilm, .*impscore-mpnet-general"):
        ImpScore.load("impscore-mpnet")


def test_the_mpnet_model_was_trained_on_the_defaults_corpus_and_recipe():
    # Same sources, loss settings and splits as the default; the encoder (frozen mpnet, fine-tuned MiniLM) and the
    # training seed (the default's was chosen among three) differ.
    mpnet, default = (json.loads((MODELS_DIR / name / "config.json").read_text(encoding="utf-8"))["training"]
                      for name in ("impscore-mpnet-general", DEFAULT_MODEL))
    same = ("alpha", "source_weights", "dim", "transform", "epochs")
    assert not mpnet.get("encoder_layers") and default["encoder_layers"] == 6
    assert {k: mpnet[k] for k in same} == {k: default[k] for k in same}
    assert mpnet["corpus"]["sha256"] == default["corpus"]["sha256"] and mpnet["encoder"] == "all-mpnet-base-v2"
    assert (mpnet["encoder_backend"], mpnet["encoder_precision"]) == ("openvino", "bf16")
