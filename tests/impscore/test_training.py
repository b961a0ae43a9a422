"""Training on a small real slice: the loss falls, runs are deterministic, the saved model reloads identically."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pragmeter import ImpScore
from pragmeter.errors import PragmeterError
from pragmeter.impscore.training import TrainConfig, save_trained, train, train_heads
from pragmeter.impscore.triplets import embed_corpus


@pytest.fixture(scope="module")
def small_corpus(corpus_and_report):
    corpus, _ = corpus_and_report
    parts = [corpus[corpus["split"] == s].groupby("source").head(n) for s, n in (("train", 60), ("val", 10), ("test", 10))]
    import pandas as pd

    return pd.concat(parts)


@pytest.fixture(scope="module")
def embedding_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def splits(small_corpus, embedding_cache):
    return embed_corpus(small_corpus, "all-MiniLM-L6-v2", embedding_cache, show_progress=False)


def config(**kwargs) -> TrainConfig:
    """A quick recipe on this module's embeddings (the ``splits`` fixture: torch fp32, the reference path)."""
    return TrainConfig(**{"epochs": 15, "batch_size": 64, "seed": 3, "encoder_backend": "torch", **kwargs})


def test_loss_falls_and_validation_improves(splits):
    result = train_heads(splits, config(), show_progress=False)
    losses = [h["train_loss"] for h in result.history]
    assert losses[-1] < 0.7 * losses[0]
    assert result.val["implicitness_accuracy"] > 0.75
    assert result.history[result.best_epoch - 1]["val_implicitness_accuracy"] == max(
        h["val_implicitness_accuracy"] for h in result.history)


def test_deterministic_under_a_seed(splits):
    first = train_heads(splits, config(epochs=3), show_progress=False)
    second = train_heads(splits, config(epochs=3), show_progress=False)
    other = train_heads(splits, config(epochs=3, seed=4), show_progress=False)
    for key, value in first.heads.state_dict().items():
        assert torch.equal(value, second.heads.state_dict()[key])
    assert not torch.equal(first.heads.W_p, other.heads.W_p)


@pytest.mark.parametrize("variant", [{"transform": "s2p"}, {"transform": "both", "imp_metric": "euclidean"},
                                     {"prag_metric": "cosine"}])
def test_paper_variants_train(splits, variant):
    """Each variant learns: its trained heads beat the heads it started from (the same seed, untrained) on the
    held-out test triplets by a wide margin."""
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.triplets import evaluate_heads

    recipe = config(epochs=3, **variant)
    result = train_heads(splits, recipe, show_progress=False)
    torch.manual_seed(recipe.seed)  # train_heads' first step: the initial heads, bit for bit
    untrained = ImpScoreHeads(HeadsConfig(384, recipe.dim, recipe.transform, recipe.imp_metric, recipe.prag_metric))
    before = evaluate_heads(untrained, splits["test"])[0]["implicitness_accuracy"]
    after = result.test["implicitness_accuracy"]
    assert after >= before + 0.15 and after > 0.75, (variant, before, after)


def test_saved_model_reloads_to_identical_scores(splits, tmp_path):
    result = train_heads(splits, config(epochs=2), show_progress=False)
    folder = save_trained(result, tmp_path / "model", "tiny", {"sources": ["test"]})
    loaded = ImpScore.load(folder, backend="torch")  # the heads in torch, as trained: bit-identical
    embeddings = splits["test"].e1.numpy()
    direct = result.heads(torch.as_tensor(embeddings))[0].detach().numpy()
    assert np.array_equal(loaded.score_embeddings(embeddings), direct)
    from huggingface_hub import ModelCard

    card = ModelCard.load(folder / "README.md")  # the Hub's reader: front matter, then the card
    assert card.text.lstrip().startswith("# tiny")
    assert card.data.license == "other" and card.data.base_model == "sentence-transformers/all-MiniLM-L6-v2"
    assert card.data.datasets == ["test"] and card.data.pipeline_tag and card.data.metrics == ["accuracy"]
    assert loaded.config["training"]["seed"] == 3


def test_heads_with_a_hidden_layer_train_save_and_score_alike_in_numpy(splits, tmp_path):
    result = train_heads(splits, config(epochs=3, hidden=32), show_progress=False)
    assert result.heads.U_p.shape == (384, 32) and result.heads.W_p.shape == (32, 64)
    folder = save_trained(result, tmp_path / "mlp", "mlp", {"sources": ["test"]})
    assert "through a 32-wide hidden layer" in (folder / "README.md").read_text(encoding="utf-8")
    embeddings = splits["test"].e1.numpy()
    direct = result.heads(torch.as_tensor(embeddings))[0].detach().numpy()
    # the CPU backends score with the numpy heads (GELU's tanh form in both): the same scores without torch
    numpy_scores = ImpScore.load(folder, backend="openvino").score_embeddings(embeddings)
    assert np.abs(numpy_scores - direct).max() < 1e-5
    assert np.array_equal(ImpScore.load(folder, backend="torch").score_embeddings(embeddings), direct)


def test_a_hidden_layer_the_weights_lack_is_refused_naming_the_file(splits, tmp_path):
    import json

    from pragmeter.errors import DataError

    folder = save_trained(train_heads(splits, config(epochs=1), show_progress=False), tmp_path / "m", "m", {})
    config_file = folder / "config.json"
    data = json.loads(config_file.read_text())
    data["heads"]["hidden"] = 16  # linear heads' weights under a config that says hidden layers
    config_file.write_text(json.dumps(data))
    with pytest.raises(DataError, match="heads.safetensors: .*'W_p' has shape \\[384, 64\\].*hidden 16"):
        ImpScore.load(folder, backend="openvino")


def test_source_weights_change_what_is_learned_and_name_known_sources(splits):
    from pragmeter.impscore.triplets import train_weights

    sources = sorted(set(splits["train"].sources))
    plain = train_heads(splits, config(epochs=3), show_progress=False)
    ones = train_heads(splits, config(epochs=3, source_weights={s: 1.0 for s in sources}), show_progress=False)
    heavy = train_heads(splits, config(epochs=3, source_weights={sources[0]: 8.0}), show_progress=False)
    # weight 1 everywhere is the paper's mean; weighting one source moves the heads
    assert torch.allclose(plain.heads.W_p, ones.heads.W_p, atol=1e-5)
    assert not torch.allclose(plain.heads.W_p, heavy.heads.W_p, atol=1e-3)
    assert train_weights(["a", "b", "a"], {"a": 2.0}).tolist() == [2.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="not in the training split: nope"):
        train_weights(["a"], {"nope": 2.0})
    with pytest.raises(ValueError, match="positive"):
        train_weights(["a"], {"a": 0.0})


def test_weighted_loss_equals_the_mean_over_repeated_rows():
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.losses import ImpScoreLoss

    torch.manual_seed(0)
    heads = ImpScoreHeads(HeadsConfig(embedding_dim=8, dim=4))
    e1, e2, e3 = (torch.randn(3, 8) for _ in range(3))
    loss = ImpScoreLoss(heads, alpha=2.0)
    weighted = loss(e1, e2, e3, weights=torch.tensor([3.0, 1.0, 1.0]))
    repeated = loss(*(torch.cat([t[:1], t[:1], t]) for t in (e1, e2, e3)))
    assert weighted.item() == pytest.approx(repeated.item(), rel=1e-6)


@pytest.mark.parametrize("text", ["written", "=2", "written=0", "written=-1", "written=x"])
def test_source_weight_option_refuses_malformed_values(text):
    import argparse

    from pragmeter.cli.impscore import source_weight

    assert source_weight("written_graded_everyday=4") == ("written_graded_everyday", 4.0)
    with pytest.raises(argparse.ArgumentTypeError, match="SOURCE=WEIGHT"):
        source_weight(text)


def test_in_batch_negatives_change_what_is_learned_and_are_named_in_the_card(splits, tmp_path):
    plain = train_heads(splits, config(epochs=3), show_progress=False)
    in_batch = train_heads(splits, config(epochs=3, in_batch_negatives=0.5), show_progress=False)
    again = train_heads(splits, config(epochs=3, in_batch_negatives=0.5), show_progress=False)
    assert not torch.allclose(plain.heads.W_p, in_batch.heads.W_p, atol=1e-3)
    assert torch.equal(in_batch.heads.W_p, again.heads.W_p)  # the sub-batch draw is seeded
    folder = save_trained(in_batch, tmp_path / "model", "tiny-in-batch", {"sources": ["test"]})
    assert "in-batch hardest negatives × 0.5" in (folder / "README.md").read_text(encoding="utf-8")
    assert ImpScore.load(folder).config["training"]["in_batch_negatives"] == 0.5


def test_train_goes_from_a_corpus_to_a_model_folder_as_the_separate_steps_do(small_corpus, splits, embedding_cache,
                                                                               tmp_path):
    result = train(config(epochs=2), tmp_path / "model", small_corpus, cache_root=embedding_cache, show_progress=False)
    steps = train_heads(splits, config(epochs=2), show_progress=False)
    assert result.folder == tmp_path / "model" and result.test == steps.test
    loaded = ImpScore.load(result.folder)
    corpus = loaded.config["training"]["corpus"]
    assert corpus["sources"] == sorted(small_corpus["source"].unique()) and len(corpus["sha256"]) == 64
    with pytest.raises(PragmeterError, match="already holds a model"):
        train(config(epochs=1), result.folder, small_corpus, cache_root=embedding_cache, show_progress=False)
    with pytest.raises(PragmeterError, match="no 'val' rows"):
        train(config(), None, small_corpus[small_corpus["split"] != "val"], cache_root=embedding_cache)
    with pytest.raises(PragmeterError, match="source_weights: source weights name sources not in the corpus: nope"):
        train(config(source_weights={"nope": 2.0}), None, small_corpus, cache_root=embedding_cache)


def teacher_gap(student, targets, data) -> float:
    """Mean squared gap between a student's and the teacher's five scores on one split."""
    from pragmeter.impscore.distillation import distillation_loss
    from pragmeter.impscore.losses import triplet_outputs

    with torch.no_grad():
        return float(distillation_loss(triplet_outputs(student.heads, data.e1, data.e2, data.e3), targets.outputs))


def test_a_distilled_student_scores_as_its_teacher_does(small_corpus, splits, embedding_cache, tmp_path):
    from pragmeter.impscore.distillation import teacher_targets

    # the teacher: another recipe on the same corpus (s2p transform, more epochs), saved as a model folder
    teacher = train(config(epochs=10, transform="s2p", seed=11), tmp_path / "teacher", small_corpus,
                    cache_root=embedding_cache, show_progress=False)
    targets = teacher_targets(teacher.folder, small_corpus, embedding_cache, show_progress=False)
    plain = train_heads(splits, config(epochs=10), show_progress=False)
    distilled = train(config(epochs=10, teacher=str(teacher.folder), distill_weight=20.0), tmp_path / "student",
                      small_corpus, cache_root=embedding_cache, show_progress=False)
    # held-out triplets: the student learnt the teacher's grading, not only the training rows
    gap = {name: teacher_gap(model, targets["test"], splits["test"]) for name, model in
           (("plain", plain), ("distilled", distilled))}
    assert gap["distilled"] < 0.5 * gap["plain"], gap
    assert distilled.test["implicitness_accuracy"] > 0.7
    saved = ImpScore.load(distilled.folder).config["training"]
    assert saved["teacher"] == str(teacher.folder) and saved["distill_weight"] == 20.0
    with pytest.raises(ValueError, match="teacher's targets cover"):
        train_heads(splits, config(epochs=1, distill_weight=1.0), show_progress=False,
                    targets={"train": type(targets["train"])(targets["val"].outputs)})


def test_the_corpus_embedded_through_openvino_matches_torch_under_its_own_cache_key(small_corpus, splits,
                                                                                    embedding_cache):
    rows = small_corpus[small_corpus["split"] == "val"]
    openvino = embed_corpus(rows, "all-MiniLM-L6-v2", embedding_cache, show_progress=False, backend="openvino",
                            precision="fp32")
    assert torch.allclose(openvino["val"].e1, splits["val"].e1, atol=1e-4)
    keys = sorted(p.name for p in embedding_cache.iterdir())
    assert any(k.endswith("-openvino-fp32") for k in keys) and any(k.endswith("-torch-fp32") for k in keys)
    with pytest.raises(ValueError, match="backend='onnx': does not run the corpus embedding"):
        embed_corpus(rows, "all-MiniLM-L6-v2", embedding_cache, show_progress=False, backend="onnx")


def test_distilling_differences_ignores_the_students_offset_and_scores_do_not():
    from pragmeter.impscore.distillation import distillation_loss
    from pragmeter.impscore.losses import TripletOutputs

    generator = torch.Generator().manual_seed(0)
    teacher = TripletOutputs(*(torch.rand(50, generator=generator) for _ in range(5)))
    shifted = TripletOutputs(*(t + 0.3 for t in (teacher.implicit, teacher.positive, teacher.negative,
                                                 teacher.distance_positive, teacher.distance_negative)))
    assert float(distillation_loss(shifted, teacher, on="differences")) < 1e-10
    assert float(distillation_loss(shifted, teacher, on="scores")) == pytest.approx(5 * 0.09, rel=1e-4)
    with pytest.raises(ValueError, match="scores, differences"):
        distillation_loss(shifted, teacher, on="features")


def test_a_missing_teacher_is_refused_before_any_embedding(small_corpus, tmp_path):
    # an empty cache folder stays empty: the teacher is checked before the corpus is embedded
    with pytest.raises(PragmeterError, match="no ImpScore model at 'no-such-teacher'"):
        train(config(teacher="no-such-teacher", distill_weight=1.0), None, small_corpus, cache_root=tmp_path / "cache")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


@pytest.mark.parametrize("rank, adapters", [(0, False), (8, False), (8, True)])
def test_encoder_layers_train_with_the_heads_and_travel_in_the_model_folder(small_corpus, embedding_cache, tmp_path,
                                                                            rank, adapters):
    import pandas as pd
    from safetensors.torch import load_file

    from pragmeter.encoders import load_encoder

    # a dozen training pairs per source: a CPU trains one layer on them in seconds (the held-out splits stay whole)
    train_part = small_corpus[small_corpus["split"] == "train"].groupby("source").head(12)
    corpus = pd.concat([train_part, small_corpus[small_corpus["split"] != "train"]])
    # adapters start at zero change and train at a higher rate (K5: 1e-3)
    tuned = train(config(epochs=5, encoder_layers=1, encoder_lr=1e-3 if adapters else 1e-4, encoder_epochs=1,
                         encoder_batch_size=64,
                         encoder_rank=rank, encoder_adapters=adapters), tmp_path / "model", corpus,
                  cache_root=embedding_cache, show_progress=False)
    assert [h.get("phase") for h in tuned.history][-1] == "encoder" and tuned.best_epoch == 1
    model = ImpScore.load(tuned.folder, backend="torch")
    assert model.config["training"]["encoder_layers"] == 1 and "+ft-" in model.signature()
    assert [s["file"] for s in model.config["encoder_weights"]] == ["encoder-1.safetensors"]
    stored = load_file(str(tuned.folder / "encoder-1.safetensors"))
    query = "encoder.layer.5.attention.self.query.weight"
    if rank:  # each matrix's change as two rank-8 factors; vectors whole
        assert query not in stored and stored[query + ".up"].shape == (384, rank)
        assert stored[query + ".down"].shape == (rank, 384)
        assert stored["encoder.layer.5.output.LayerNorm.weight"].dim() == 1
        how = "trained as such: low-rank adapters" if adapters else "truncated SVD"
        assert f"rank-{rank} factors of each matrix's change ({how})" in (tuned.folder / "README.md").read_text()
    else:
        assert stored[query].shape == (384, 384)
    test = corpus[corpus["split"] == "test"]
    texts = test["implicit"].tolist()
    base = load_encoder("all-MiniLM-L6-v2", "cpu").encode(texts, convert_to_numpy=True)
    assert np.abs(model.encode(texts) - base).max() > 1e-3  # the trained layer is used, not the packaged one
    # the reloaded folder orders the test pairs as the run measured (its layer stored in fp16; compressed, the run
    # measured the compressed layer)
    above = np.mean(model.score(texts) > model.score(test["explicit"].tolist()))
    assert above == pytest.approx(tuned.test["implicitness_accuracy_positive"], abs=0.03)


def test_training_embeds_the_corpus_on_scorings_fast_path_by_default():
    """``impscore train`` without --backend/--precision embeds as ``score`` runs the same encoder (OpenVINO on a
    CPU, bf16 where this CPU and the encoder allow it); the config records what ran, never "auto"."""
    from pragmeter.impscore.training import config_from_options

    scoring = ImpScore.load("impscore-minilm")  # all-MiniLM-L6-v2, frozen: the encoder training uses by default
    trained = config_from_options({})
    assert (trained.encoder_backend, trained.encoder_precision) == (scoring.backend, scoring.precision)
    assert (TrainConfig().encoder_backend, TrainConfig().encoder_precision) == (scoring.backend, scoring.precision)
    reference = config_from_options({"encoder_backend": "torch"})
    assert (reference.encoder_backend, reference.encoder_precision) == ("torch", "fp32")
    with pytest.raises(PragmeterError, match="backend='onnx': does not run the corpus embedding"):
        TrainConfig(encoder_backend="onnx")


def test_train_shows_each_phase_with_counts_before_its_work_and_moves_every_step(small_corpus, tmp_path,
                                                                                 monkeypatch, capsys):
    """The corpus bar is drawn (0 of N texts) before the encoder sees its first text, then moves once per step of
    scoring's chunk size; the epochs and the held-out evaluation have their own bars; --no-progress draws none."""
    from encoder_watch import watch_openvino_encoder

    from pragmeter.cli import main

    corpus = small_corpus.groupby("split", group_keys=False).head(20)
    texts = pd.unique(pd.concat([corpus[c] for c in ("implicit", "explicit", "negative")]))
    corpus.to_parquet(tmp_path / "corpus.parquet")
    calls, err = watch_openvino_encoder(monkeypatch, capsys, step=16)
    cache = tmp_path / "cache"
    assert main(["impscore", "train", "--corpus", str(tmp_path / "corpus.parquet"), "--output", str(tmp_path / "m"),
                 "--epochs", "3", "--batch-size", "16", "--cache", str(cache)]) == 0
    err.append(capsys.readouterr().err)
    assert "embedding the corpus (all-MiniLM-L6-v2, openvino " in err[0] and f"0/{len(texts)}" in err[0]
    assert calls and max(calls) <= 16 and sum(calls) == len(texts) and len(calls) >= len(texts) // 16
    whole = "".join(err)
    assert f"{len(texts)}/{len(texts)}" in whole
    assert "training the heads" in whole and "3/3" in whole
    assert "evaluating the best epoch" in whole and "2/2" in whole
    # again, from the cache, without bars: nothing to encode, nothing drawn
    assert main(["impscore", "train", "--corpus", str(tmp_path / "corpus.parquet"), "--output", str(tmp_path / "m2"),
                 "--epochs", "3", "--batch-size", "16", "--cache", str(cache), "--no-progress"]) == 0
    assert "embedding the corpus" not in capsys.readouterr().err and sum(calls) == len(texts)
