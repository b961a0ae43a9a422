"""Every script in experiments/ runs on tiny real data (a public-API change that breaks one fails here)."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import numpy as np
import pytest

from pragmeter.cli import main

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p.name for p in (REPO / "experiments").glob("*.py"))


@pytest.fixture
def run_script(run_as_main):
    """``run_script(name, *args)``: what ``python experiments/NAME ARGS`` prints."""
    return lambda name, *args: run_as_main(REPO / "experiments" / name, *args)


@pytest.fixture(scope="module")
def classifier_runs(tmp_path_factory, data_root) -> Path:
    """RUNS/ishate-b-minilm: a tiny frozen-encoder SVM classifier (ISHate Task B), as the method table names it."""
    runs = tmp_path_factory.mktemp("runs")
    assert main(["classifier", "train", "ishate-b", "--head", "svm", "--svm-c", "1", "--limit-train", "200",
                 "--limit-eval", "60", "--output", str(runs / "ishate-b-minilm"), "--device", "cpu",
                 "--no-progress", "--data-root", str(data_root)]) == 0
    return runs


def test_every_experiment_has_a_smoke_test():
    tested = {"classifier_table.py", "ishate_method_table.py", "inli_split_overlap.py", "impscore_ablation.py",
              "impscore_human_selection.py", "impscore_encoder_finetune.py", "interpreter_contamination.py",
              "interpreter_train.py", "interpreter_ship.py", "interpreter_multisource.py", "interpreter_nli_eval.py",
              "interpreter_choice_rule.py", "interpreter_average.py", "interpreter_explicit_weight.py",
              "interpreter_dev_rule.py", "interpreter_release_gate.py"}
    assert set(SCRIPTS) == tested


def test_classifier_table(classifier_runs, run_script):
    out = run_script("classifier_table.py", classifier_runs / "ishate-b-minilm", classifier_runs / "absent").splitlines()
    assert out[0].startswith("| folder | augmentation") and len(out) == 3
    assert out[2].startswith("| ishate-b-minilm | none | 0 | 0 | C=1 (val macro-F1 ")


def test_ishate_method_table(classifier_runs, run_script):
    out = run_script("ishate_method_table.py", classifier_runs, "minilm").splitlines()
    none = next(line for line in out if line.startswith("| none |"))
    assert none.startswith("| none | not run | 0.390 | ") and none.endswith(" | 0.178 |") and "(+0)" in none
    assert "| bt | not run | 0.496 | not run | 0.548 |" in out


def test_inli_split_overlap(data_root, run_script):
    out = run_script("inli_split_overlap.py", "--limit", "20", "--data-root", data_root)
    assert "premise: " in out and "of 20 test items occur in train" in out
    assert out.strip().splitlines()[-1].endswith("(of 20)")


def test_interpreter_contamination(tmp_path, data_root, run_script):
    import pandas as pd

    out = run_script("interpreter_contamination.py", "--limit", "60", "--threshold", "0.8", "--output",
                     tmp_path / "overlaps.csv", "--data-root", data_root).splitlines()
    assert [line.split(":")[0] for line in out] == ["drinq", "drinq_options", "floyd", "floyd_options", "ludwig_test",
                                                   "circa", "inli_test"]
    assert all(": 60 items;" in line for line in out if not line.startswith("floyd:"))  # the battery has 40 items
    overlaps = pd.read_csv(tmp_path / "overlaps.csv", keep_default_na=False)
    # INLI's conversational premises were written from Circa exchanges: some of the first 60 Circa items are inside one
    seen = overlaps[(overlaps["set"] == "circa") & (overlaps["exchange_in_premise"] != "")]
    assert len(seen) == int(out[5].split("exchange inside a training premise: ")[1].split(";")[0]) > 0


def test_interpreter_contamination_with_the_recipes_training_text(data_root, run_script):
    out = run_script("interpreter_contamination.py", "--recipe", "--limit", "20", "--data-root", data_root).splitlines()
    assert [line.split(":")[0] for line in out][-1] == "xnli_en_test" and ": 20 items;" in out[-1]


def test_interpreter_train_smoke_run_ships_a_loadable_interpreter(tmp_path, data_root, run_script, monkeypatch):
    """The GPU script on a CPU: 2 optimizer steps, then the best run shipped as low-rank factors that load, and the
    release gate read over the shipped folder and its test commands' outputs."""
    from pragmeter.interpreter.model import Interpreter

    out = run_script("interpreter_train.py", "--out", tmp_path, "--encoders", "all-MiniLM-L6-v2", "--seeds", "0",
                     "--extras", "none", "--max-steps", "2", "--batch-size", "8", "--limit-eval", "16", "--rank", "8",
                     "--bf16-pairs", "0", "--device", "cpu", "--no-progress", "--data-root", data_root)
    result = json.loads(out.strip().splitlines()[-1])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert result["chosen"] == summary["chosen"] == "all-MiniLM-L6-v2-inli-s0"
    assert summary["runs"][0]["train_pairs"] == 16 and summary["shipped"]["val_compressed"]["n"] == 16
    interpreter = Interpreter.load(tmp_path / "interpreter", device="cpu")
    assert interpreter.choose("Ann offers Bob a coffee.", "It would keep me awake.",
                              ["Bob declines.", "Bob accepts."]) in (0, 1)
    assert not (tmp_path / "interpreter" / "model.safetensors").exists()

    # the trained run shipped again, the rank chosen on validation among two: the best of them ships
    out = run_script("interpreter_ship.py", "--run", tmp_path / "runs" / "all-MiniLM-L6-v2-inli-s0", "--output",
                     tmp_path / "shipped", "--rank", "8,2", "--limit-eval", "16", "--evaluate-test", "--bf16-pairs", "0",
                     "--no-progress",
                     "--data-root", data_root)
    result = json.loads(out.strip().splitlines()[-1])
    by_rank = result["val_by_rank"]
    assert set(by_rank) == {"2", "8"} and by_rank[str(result["rank"])] == max(by_rank.values())
    assert result["val_shipped"] == by_rank[str(result["rank"])] and 0 <= result["test_shipped"] <= 1
    card = json.loads((tmp_path / "shipped" / "metrics.json").read_text())
    assert card["rank"] == result["rank"] and card["test_compressed"]["n"] == 16

    # the release gate over the shipped folder and the two test commands' outputs
    shipped = tmp_path / "shipped"
    # LUDWIG's dev split stands in for its test split: its first six items are on both sides of INLI's premises
    assert main(["eval", "--tasks", "drinq_vanilla,floyd,ludwig", "--task-arg", "ludwig.split=dev", "--model",
                 f"local:{shipped}", "--model-args", "precision=fp32", "--output", str(tmp_path / "tasks"), "--limit",
                 "6", "--no-progress", "--data-root", str(data_root)]) == 0
    run_script("interpreter_nli_eval.py", "--model", shipped, "--sets", "xnli_en:test", "--limit", "8", "--precision",
               "fp32", "--output", tmp_path / "xnli.json", "--data-root", data_root)
    monkeypatch.syspath_prepend(str(REPO / "experiments"))  # as `python experiments/...` has it
    gate = runpy.run_path(str(REPO / "experiments" / "interpreter_release_gate.py"))
    status = gate["main"](["--shipped", str(shipped), "--tasks", str(tmp_path / "tasks"), "--xnli-test",
                           str(tmp_path / "xnli.json"), "--output", str(tmp_path / "gate.json")])
    report = json.loads((tmp_path / "gate.json").read_text())
    figures = report["figures"]
    assert figures["inli_test"]["figure"] == card["test_compressed"]["accuracy"]
    assert figures["xnli_en_test"]["figure"] == json.loads((tmp_path / "xnli.json").read_text())[
        "results"]["xnli_en:test"]["accuracy"]
    assert figures["inli_test"]["floor"] == 0.85 and figures["floyd"]["floor"] == gate["DEFAULT"]["floyd"]
    from pragmeter.packaged import INTERPRETERS

    assert gate["DEFAULT_NAME"] == INTERPRETERS.default  # a release that replaces the default replaces its figures
    assert figures["drinq"]["floor"] is None and figures["drinq"]["holds"]  # a mark the default misses is reported
    assert status == (0 if report["passes"] else 1) and report["passes"] == all(f["holds"] for f in figures.values())
    xnli = json.loads((tmp_path / "xnli.json").read_text())
    xnli["results"]["xnli_en:test"]["accuracy"] = True
    (tmp_path / "xnli.json").write_text(json.dumps(xnli))
    with pytest.raises(SystemExit, match=r"xnli.json: results.xnli_en:test.accuracy is True; expected an accuracy"):
        gate["main"](["--shipped", str(shipped), "--tasks", str(tmp_path / "tasks"), "--xnli-test",
                      str(tmp_path / "xnli.json")])


def test_impscore_human_selection(tmp_path, data_root, run_script):
    from pragmeter.impscore.corpus import build_corpus
    from pragmeter.impscore.evaluators import HUMAN_PAIR_SOURCES

    corpus, _ = build_corpus(sources=["bbh_snarks", *HUMAN_PAIR_SOURCES], seed=0, root=data_root, cap=60)
    corpus.to_parquet(tmp_path / "corpus.parquet")
    variants = [{"name": "tiny", "sources": "bbh_snarks", "epochs": 1}]
    args = ["--corpus", tmp_path / "corpus.parquet", "--output", tmp_path / "selection.jsonl", "--variants",
            json.dumps(variants), "--seeds", "0", "--limit", "40", "--politeness-sample", "50"]
    run_script("impscore_human_selection.py", *args)
    rows = [json.loads(line) for line in (tmp_path / "selection.jsonl").read_text().splitlines()]
    assert [(r["variant"], r["seed"]) for r in rows] == [("tiny", 0)] and "decision" in rows[0]["human"]
    run_script("impscore_human_selection.py", *args)  # finished (variant, seed) pairs are not run again
    assert len((tmp_path / "selection.jsonl").read_text().splitlines()) == 1


def test_impscore_encoder_finetune(tmp_path, data_root, run_script, private_cache):
    from pragmeter.impscore.corpus import build_corpus
    from pragmeter.impscore.evaluators import HUMAN_PAIR_SOURCES

    corpus, _ = build_corpus(sources=["written_graded_everyday", *HUMAN_PAIR_SOURCES], seed=0, root=data_root, cap=30)
    corpus.to_parquet(tmp_path / "corpus.parquet")
    common = ["--corpus", tmp_path / "corpus.parquet", "--bundle", tmp_path / "bundle"]
    run_script("impscore_encoder_finetune.py", "prepare", *common, "--limit", "3", "--politeness-sample", "20")
    out = ["--bundle", tmp_path / "bundle", "--output", tmp_path / "out", "--device", "cpu", "--seeds", "0"]
    run_script("impscore_encoder_finetune.py", "train", *out, "--variants", "top2", "--epochs", "1",
               "--batch-size", "16", "--no-bf16", "--save-models", tmp_path / "models", "--save-runs", "top2/0,all6/0")
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert [(r["variant"], r["seed"], r["best_epoch"]) for r in rows] == [("top2", 0, 1)]
    assert 0 <= rows[0]["paper_test_implicitness"] <= 1
    table = run_script("impscore_encoder_finetune.py", "evaluate", *common, "--results", tmp_path / "out")
    assert next(line for line in table.splitlines() if line.startswith("| top2 | 1 | "))

    from pragmeter.impscore.model import ImpScore

    folder = tmp_path / "models" / "top2-s0"  # a fine-tuned run saved as a model folder loads and scores
    model = ImpScore.load(folder, backend="torch", device="cpu")
    assert model.config["training"]["encoder_layers"] == 2
    assert "top 2 transformer layers" in (folder / "README.md").read_text()
    # the loaded folder answers as the run did (its layers stored in fp16: within the accuracy bounds)
    import numpy as np
    import pandas as pd

    from pragmeter.encoders.runtime import MAX_ABS_DIFF

    texts = pd.read_parquet(tmp_path / "bundle" / "texts.parquet")["text"].tolist()
    with np.load(tmp_path / "bundle" / "questions.npz") as questions, np.load(tmp_path / "out" / "answers.npz") as answers:
        asked = [texts[i] for i in questions["texts"][:50]]
        assert np.abs(model.score(asked) - answers["top2/0/scores"][:50]).max() <= MAX_ABS_DIFF

    # compressed for shipping: each changed matrix as rank-4 factors, the held-out figures measured again
    run_script("impscore_encoder_finetune.py", "compress", "--bundle", tmp_path / "bundle", "--model", folder,
               "--rank", "4", "--output", tmp_path / "compressed")
    small = ImpScore.load(tmp_path / "compressed", backend="torch", device="cpu")
    assert small.config["training"]["encoder_rank"] == 4 and "rank-4 factors" in (
        tmp_path / "compressed" / "README.md").read_text()
    assert small.signature() != model.signature()
    assert 0 <= small.config["metrics"]["test"]["implicitness_accuracy"] <= 1


def test_impscore_ablation(tmp_path, data_root, run_script):
    from pragmeter.impscore.corpus import build_corpus

    corpus, _ = build_corpus(sources=["bbh_snarks"], seed=0, root=data_root)
    corpus.to_parquet(tmp_path / "corpus.parquet")
    variants = [{"name": "tiny", "epochs": 1, "bs": 16, "seeds": [0, 1]}]
    out = run_script("impscore_ablation.py", tmp_path / "corpus.parquet", json.dumps(variants), "--limit", "40")
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [(r["v"], r["seed"]) for r in rows] == [("tiny", 0), ("tiny", 1)]
    assert all(0 <= r["imp"] <= 1 and "sec" in r for r in rows)


def test_the_recorded_selection_variants_name_known_sources_and_settings():
    from dataclasses import fields

    from pragmeter.impscore.corpus.build import resolve_sources
    from pragmeter.impscore.training import TrainConfig

    from pragmeter.impscore.model import resolve_model_dir

    known = {f.name for f in fields(TrainConfig)} | {"name", "sources"}
    for file in ("impscore_human_selection_variants.json", "impscore_distillation_variants.json",
                 "impscore_head_capacity_variants.json"):
        variants = json.loads((Path(__file__).resolve().parents[2] / "experiments" / file).read_text(encoding="utf-8"))
        assert len({v["name"] for v in variants}) == len(variants)
        for variant in variants:
            assert resolve_sources(variant["sources"].split(",")), variant["name"]
            assert set(variant) <= known, variant["name"]
            if variant.get("teacher"):  # a teacher the checkout has (the shipped mpnet model is the run's teacher)
                assert (resolve_model_dir(variant["teacher"]) / "heads.safetensors").is_file()
        assert any(v["name"] == "phgo-a16" for v in variants)  # the shipped default's recipe


def test_interpreter_multisource_smoke_run_trains_both_stages_and_scores_circa_dev(tmp_path, data_root, run_script):
    """Two stages of 2 steps each (and GRICE choice items in the second); the second starts from the first's
    weights, and its card lists the general stage's files and GRICE's with their licences; both stages record that
    the general sets' entailment was read as implied or explicit (--nli-entailment entailed); the pragmatic folder
    records the explicit weight its choice items were trained for (--choice-explicit-weight)."""
    out = run_script("interpreter_multisource.py", "--out", tmp_path, "--variant", "smoke", "--families",
                     "presupposition", "--sources", "circa,general", "--cap", "50", "--mix-cap", "5",
                     "--circa-cap", "20", "--max-steps", "2", "--nli-entailment", "entailed",
                     "--choice", "grice", "--grice-cap", "40", "--choice-explicit-weight", "0.5",
                     "--batch-size", "8", "--limit-eval", "16", "--precision", "fp32", "--no-progress",
                     "--data-root", data_root)
    result = json.loads(out.strip().splitlines()[-1])
    summary = json.loads((tmp_path / "smoke.json").read_text())
    assert result["variant"] == "smoke" and 0 <= result["circa_dev_yes_no_accuracy"] <= 1
    assert 0 <= result["grice_dev_accuracy"] <= 1 and summary["grice_dev_turns"] == 16
    assert 0 <= result["flute_dev_accuracy"] <= 1 and summary["flute_dev_items"] == 16
    assert 0 <= result["sarcasm_dev_accuracy"] <= 1 and summary["sarcasm_dev_items"] == 16
    assert 0 <= result["figqa_dev_accuracy"] <= 1 and summary["figqa_dev_items"] == 16
    assert 0 <= result["impli_dev_accuracy"] <= 1 and summary["impli_dev_items"] == 16
    assert 0 <= result["figqa_dev_framed_accuracy"] <= 1 and summary["impli_dev_framed_items"] == 16
    assert 0 <= result["figqa_dev_framed_reworded_accuracy"] <= 1 and summary["impli_dev_framed_reworded_items"] == 16
    assert summary["general"]["train_pairs"] == summary["pragmatic"]["train_pairs"] == 16
    assert summary["pragmatic"]["history"][0]["choice_items"] == 4  # 2 steps of 8 pairs: 2 GRICE turns each
    config = json.loads((tmp_path / "runs" / "smoke-pragmatic" / "config.json").read_text())
    assert config["pragmeter"]["recipe"]["init_from"]["folder"] == "smoke-general"
    general = json.loads((tmp_path / "runs" / "smoke-general" / "config.json").read_text())["pragmeter"]["recipe"]
    assert (general["cap"], config["pragmeter"]["recipe"]["cap"]) == (50, 5)  # --mix-cap: the pragmatic stage's mix
    assert general["nli_entailment"] == config["pragmeter"]["recipe"]["nli_entailment"] == "entailed"
    # the choice items were trained for P(implied) + 0.5 P(explicit): the pragmatic folder ranks readings by it
    assert config["pragmeter"]["explicit_weight"] == 0.5
    assert json.loads((tmp_path / "runs" / "smoke-general" / "config.json").read_text())["pragmeter"].get(
        "explicit_weight", 1) == 1
    card = (tmp_path / "runs" / "smoke-pragmatic" / "README.md").read_text()
    assert "imppres/dataset/presupposition/only_presupposition.jsonl" in card and "circa/data/CIRCA" in card
    assert "grice/data/impl_dial" in card
    for name in ("smoke-general", "smoke-pragmatic"):  # no stage reads INLI test: the shipped form does, once
        assert json.loads((tmp_path / "runs" / name / "metrics.json").read_text())["test"] is None
    assert "Not measured: the test split was left unread" in card


def test_interpreter_multisource_distils_a_teacher_on_the_pragmatic_stage(tmp_path, data_root, run_script, capsys):
    """--teacher: the pragmatic stage's pairs carry the teacher's probabilities (kept in the work folder), the run
    records the teacher and the soft weight; --soft-weight alone is refused; --choice-anchor has the teacher label the
    choice items' readings too, and is refused without a teacher and choice items; --label-only-groups keeps a group
    off the teacher, and is refused without one or for a group the pairs lack."""
    from pragmeter.testing.tiny_nli import tiny_nli_folder

    teacher = tiny_nli_folder(tmp_path / "teacher", labels=("implied", "explicit", "neutral", "contradiction"), seed=3)
    common = ["--families", "none", "--sources", "circa", "--cap", "50", "--circa-cap", "20", "--max-steps", "2",
              "--batch-size", "8", "--limit-eval", "16", "--precision", "fp32", "--no-progress", "--data-root", data_root]
    with pytest.raises(AssertionError, match="exited with 2"):
        run_script("interpreter_multisource.py", "--out", tmp_path / "alone", "--variant", "s", "--soft-weight", "0.3",
                   *common)
    assert "--soft-weight weighs a teacher's probabilities: give --teacher too" in capsys.readouterr().err
    assert not (tmp_path / "alone").exists()
    run_script("interpreter_multisource.py", "--out", tmp_path / "out", "--variant", "student", "--teacher", teacher,
               "--soft-weight", "0.3", *common)
    assert json.loads((tmp_path / "out" / "student.json").read_text())["teacher"] == str(teacher)
    config = json.loads((tmp_path / "out" / "runs" / "student-pragmatic" / "config.json").read_text())["pragmeter"]
    assert config["recipe"]["teacher"]["folder"] == "teacher"
    metrics = json.loads((tmp_path / "out" / "runs" / "student-pragmatic" / "metrics.json").read_text())
    assert metrics["train_config"]["soft_weight"] == 0.3
    kept = list((tmp_path / "out" / "work" / "student-pragmatic").glob("teacher-*.npy"))
    assert len(kept) == 1 and np.load(kept[0]).shape == (16, 4)
    for extra in ([], ["--choice", "grice"], ["--teacher", teacher]):
        with pytest.raises(AssertionError, match="exited with 2"):
            run_script("interpreter_multisource.py", "--out", tmp_path / "alone", "--variant", "a", "--choice-anchor",
                       "1", *extra, *common)
        assert "--choice-anchor pulls choice items' readings" in capsys.readouterr().err
    run_script("interpreter_multisource.py", "--out", tmp_path / "out", "--variant", "anchored", "--teacher", teacher,
               "--choice", "grice", "--grice-cap", "40", "--choice-anchor", "1", *common)
    metrics = json.loads((tmp_path / "out" / "runs" / "anchored-pragmatic" / "metrics.json").read_text())
    assert metrics["train_config"]["choice_anchor"] == 1.0 and metrics["history"][0]["choice_items"] == 4
    card = (tmp_path / "out" / "runs" / "anchored-pragmatic" / "README.md").read_text()
    assert ("the choice items keep their own loss, beside a cross-entropy (weight 1) towards the teacher's "
            "probabilities on their readings.") in card  # the run's own card, as the shipped one would say
    kept = sorted(np.load(p).shape for p in (tmp_path / "out" / "work" / "anchored-pragmatic").glob("teacher-*.npy"))
    assert kept == [(16, 4), (16, 4)]  # the pairs, and the 4 GRICE turns' four readings each
    with pytest.raises(AssertionError, match="exited with 2"):
        run_script("interpreter_multisource.py", "--out", tmp_path / "alone", "--variant", "l", "--label-only-groups",
                   "circa", *common)
    assert "--label-only-groups keeps pairs off a teacher's probabilities" in capsys.readouterr().err
    with pytest.raises(AssertionError, match="'circa_yesno' is no group of the pragmatic stage's training pairs"):
        run_script("interpreter_multisource.py", "--out", tmp_path / "out", "--variant", "typo", "--teacher", teacher,
                   "--label-only-groups", "circa_yesno", *common)
    assert not (tmp_path / "out" / "work" / "typo-pragmatic").exists()  # refused before the teacher labels a pair
    run_script("interpreter_multisource.py", "--out", tmp_path / "out", "--variant", "labels", "--teacher", teacher,
               "--soft-weight", "0.8", "--label-only-groups", "circa,ludwig", *common)
    metrics = json.loads((tmp_path / "out" / "runs" / "labels-pragmatic" / "metrics.json").read_text())
    assert metrics["train_config"]["label_only_groups"] == ["circa", "ludwig"]



def test_interpreter_multisource_set_caps_are_checked_before_anything_is_read(tmp_path, data_root, run_script,
                                                                              capsys):
    """--set-caps NAME=PAIRS: a malformed value, a set the families do not read, and caps that no stage would use
    (--init-from without the general source) end the command with one line, before anything is written."""
    common = ["--out", tmp_path / "out", "--variant", "caps", "--families", "nli", "--max-steps", "2",
              "--precision", "fp32", "--no-progress", "--data-root", data_root]
    for value, extra, message in (
            ("taxinli", [], "'taxinli' is not NAME=PAIRS"),
            ("med=10", [], "--set-caps: 'med' is no set of the families nli (they read taxinli, esnli,"),
            ("sick=10", ["--init-from", "interpreter-minilm-inli", "--sources", "circa"],
             "--set-caps sizes the general sets: with --init-from, add general to --sources")):
        with pytest.raises(AssertionError, match="exited with 2"):
            run_script("interpreter_multisource.py", "--set-caps", value, *extra, *common)
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_interpreter_nli_eval(tmp_path, data_root, run_script):
    out = run_script("interpreter_nli_eval.py", "--sets", "xnli_en:validation,monli:test,grice,circa_dev,flute_dev,"
                     "sarcasm_dev,figqa_dev,impli_dev_framed,figqa_dev_framed_reworded",
                     "--limit", "12", "--output", tmp_path / "eval.json", "--data-root", data_root)
    results = json.loads((tmp_path / "eval.json").read_text())["results"]
    assert json.loads(out.strip().splitlines()[-1])["results"] == results
    assert {k: (v["n"], v["form"]) for k, v in results.items()} == {
        "xnli_en:validation": (12, "3-way"), "monli:test": (12, "2-way"), "grice": (12, "4-way choice"),
        "circa_dev": (12, "yes/no choice"), "flute_dev": (12, "3-way choice (meaning, opposite, restated)"),
        "sarcasm_dev": (12, "2-way choice (rewrite, restated)"),
        "figqa_dev": (12, "3-way choice (meaning, opposite, restated)"),
        "impli_dev_framed": (12, "3-way choice, the sentence said in a frame"),
        "figqa_dev_framed_reworded": (12, "3-way choice, the metaphor said in a frame and restated as a near copy")}
    assert all(0 <= v["accuracy"] <= 1 for v in results.values())
    for name, classes in (("xnli_en:validation", 3), ("monli:test", 2)):  # the confusion adds up to the accuracy
        confusion = results[name]["confusion"]
        assert len(confusion) == classes and sum(map(sum, (row.values() for row in confusion.values()))) == 12
        assert sum(row[gold] for gold, row in confusion.items()) == round(results[name]["accuracy"] * 12)


def test_interpreter_gpu_script_keeps_what_each_call_carried(tmp_path):
    """experiments/interpreter_gpu.sh collect: the pieces a call carried (.transfer/) join the stash, the data
    archive is unpacked once; an unknown verb is refused."""
    import subprocess
    import tarfile

    first = tmp_path / "call" / ".transfer"
    (tmp_path / "data" / "inli").mkdir(parents=True)
    (tmp_path / "data" / "inli" / "val.csv").write_text("premise,hypothesis,label\n", encoding="utf-8")
    first.mkdir(parents=True)
    (first / "weights-0.safetensors").write_bytes(b"0")
    with tarfile.open(first / "data.tar.xz", "w:xz") as archive:
        archive.add(tmp_path / "data" / "inli", arcname="inli")
    env = {"PATH": "/usr/bin:/bin", "STASH": str(tmp_path / "stash")}
    script = str(REPO / "experiments" / "interpreter_gpu.sh")

    def run(*args):
        return subprocess.run(["bash", script, *args], cwd=tmp_path / "call", env=env, capture_output=True, text=True)

    assert run("collect").returncode == 0
    (first / "data.tar.xz").unlink(), (first / "weights-0.safetensors").unlink()
    (first / "weights-1.safetensors").write_bytes(b"1")
    done = run("collect")
    assert done.returncode == 0 and "weights-0.safetensors weights-1.safetensors" in done.stdout
    assert (tmp_path / "stash" / "data" / "inli" / "val.csv").read_text().startswith("premise")
    refused = run("fly")
    assert refused.returncode == 2 and "unknown verb fly" in refused.stderr


def test_interpreter_choice_rule_reads_each_development_set_once_and_scores_every_rule(tmp_path, data_root,
                                                                                       run_script):
    """Each set's accuracy under each weighting, from one pass; the P(implied) + P(explicit) rule is what the
    interpreter's own choice gives (ReadingChoiceEvaluator on the same items)."""
    from pragmeter.classify.recipes.interpreter import grice_evaluator, grice_items
    from pragmeter.interpreter.model import Interpreter

    out = run_script("interpreter_choice_rule.py", "--limit", "10", "--output", tmp_path / "rule.json",
                     "--data-root", data_root)
    report = json.loads((tmp_path / "rule.json").read_text())
    assert set(report["sets"]) == {"grice_dev", "circa_dev", "ludwig_dev", "flute_figurative",
                                   "flute_figurative_restated"}
    assert all(v["n"] == 10 and set(report["rules"]) <= set(v) for v in report["sets"].values())
    assert "mean" in out and report["mean"].keys() == report["rules"].keys()
    own = grice_evaluator(grice_items(data_root)[1][:10])(Interpreter.load(None, precision="fp32", progress=False))
    assert report["sets"]["grice_dev"]["implied+explicit"] == pytest.approx(own["grice_dev_accuracy"])


def test_interpreter_explicit_weight_measures_the_grid_applies_the_rule_and_records_it(tmp_path, data_root,
                                                                                     run_script):
    """Every weight on every split through the interpreter's own scoring; the chosen weight lands in the folder's
    config and its evidence in metrics.json (a tiny INLI model written here)."""
    from pragmeter.interpreter.model import Interpreter
    from pragmeter.testing.tiny_nli import tiny_nli_folder

    folder = tmp_path / "inli"
    Interpreter.load(tiny_nli_folder(tmp_path / "plain", ["implied", "explicit", "neutral", "contradiction"]),
                     device="cpu", backend="torch").save(folder)
    out = run_script("interpreter_explicit_weight.py", "--model", folder, "--limit", "12", "--record", "--rule",
                     "mean", "--output", tmp_path / "weight.json", "--data-root", data_root)
    report = json.loads((tmp_path / "weight.json").read_text())
    assert list(report["accuracies"]) == ["1", "0.5", "0.25", "0.1", "0"] and "chosen" in out
    assert all(len(row) == 12 for row in report["accuracies"].values())  # every split
    assert report["sizes"]["situated_dev"] == 12 and report["sizes"]["ludwig_dev"] == 12
    assert report["weight"] in [1.0, *report["admissible"]]
    assert report["rule"] == "mean" and report["mean_floor"] <= report["means"]["1"]
    recorded = json.loads((folder / "config.json").read_text())["pragmeter"]["explicit_weight"]
    assert recorded == report["weight"] == Interpreter.load(folder, backend="torch").explicit_weight
    evidence = json.loads((folder / "metrics.json").read_text())["explicit_weight"]
    assert evidence["accuracies"] == report["accuracies"] and evidence["rule"] == "mean"
    assert "mean accuracy" in evidence["rule_text"]


def test_interpreter_dev_rule_reads_the_three_development_outputs_and_says_each_clause(tmp_path, data_root,
                                                                                      run_script):
    """The three development commands run on a tiny INLI model written here, then the rule over their outputs: every
    clause's figure is the mean of the outputs' accuracies it names, and the exit status says whether all hold; an
    output whose accuracy is not a number is refused naming the file."""
    from pragmeter.interpreter.model import Interpreter
    from pragmeter.testing.tiny_nli import tiny_nli_folder

    folder = tmp_path / "inli"
    Interpreter.load(tiny_nli_folder(tmp_path / "plain", ["implied", "explicit", "neutral", "contradiction"]),
                     device="cpu", backend="torch").save(folder)
    sets = ("xnli_en:validation,grice,circa_dev,flute_dev,sarcasm_dev,figqa_dev,impli_dev,figqa_dev_framed,"
            "impli_dev_framed,figqa_dev_framed_reworded,impli_dev_framed_reworded,situated_dev")
    run_script("interpreter_nli_eval.py", "--model", folder, "--sets", sets, "--limit", "8", "--precision", "fp32",
               "--output", tmp_path / "dev.json", "--data-root", data_root)
    for task, limit in (("inli", ["--limit", "8"]), ("ludwig", [])):  # LUDWIG's dev split whole: both sides of INLI
        split = "val" if task == "inli" else "dev"
        assert main(["eval", "--tasks", task, "--task-arg", f"{task}.split={split}", "--model", f"local:{folder}",
                     "--model-args", "precision=fp32", "--output", str(tmp_path / task), *limit, "--no-progress",
                     "--data-root", str(data_root)]) == 0
    rule = runpy.run_path(str(REPO / "experiments" / "interpreter_dev_rule.py"))
    status = rule["main"](["--dev", str(tmp_path / "dev.json"), "--inli-val", str(tmp_path / "inli"),
                           "--ludwig-dev", str(tmp_path / "ludwig"), "--output", str(tmp_path / "rule.json")])
    report = json.loads((tmp_path / "rule.json").read_text())
    dev = {k: v["accuracy"] for k, v in json.loads((tmp_path / "dev.json").read_text())["results"].items()}
    assert report["clauses"]["bare_five"]["figure"] == pytest.approx(
        np.mean([dev[s] for s in ("grice", "circa_dev", "flute_dev", "sarcasm_dev", "impli_dev")]))
    inli = json.loads((tmp_path / "inli" / "results.json").read_text())["results"]["inli"]["metrics"]["accuracy"]
    assert report["clauses"]["inli_validation"] == {"figure": inli, "floor": 0.849, "holds": inli >= 0.849}
    assert status == (0 if report["passes"] else 1) and report["passes"] == all(
        c["holds"] for c in report["clauses"].values()) and "situated_dev" in report["reported"]
    # the choice splits from the weight experiment's pass over the same items: the same clauses
    run_script("interpreter_explicit_weight.py", "--model", folder, "--limit", "8", "--output",
               tmp_path / "weights.json", "--data-root", data_root)
    (tmp_path / "xnli.json").write_text(json.dumps({"results": {
        "xnli_en:validation": json.loads((tmp_path / "dev.json").read_text())["results"]["xnli_en:validation"]}}))
    rule["main"](["--dev", str(tmp_path / "xnli.json"), "--weights", str(tmp_path / "weights.json"), "--inli-val",
                  str(tmp_path / "inli"), "--ludwig-dev", str(tmp_path / "ludwig"), "--output",
                  str(tmp_path / "rule-from-weights.json")])
    assert json.loads((tmp_path / "rule-from-weights.json").read_text()) == report
    with pytest.raises(SystemExit, match="--dev and --weights both give circa_dev"):
        rule["main"](["--dev", str(tmp_path / "dev.json"), "--weights", str(tmp_path / "weights.json"),
                      "--inli-val", str(tmp_path / "inli"), "--ludwig-dev", str(tmp_path / "ludwig")])
    results = json.loads((tmp_path / "inli" / "results.json").read_text())
    results["results"]["inli"]["metrics"]["accuracy"] = "0.99"
    (tmp_path / "inli" / "results.json").write_text(json.dumps(results))
    with pytest.raises(SystemExit, match=r"inli/results.json: results.inli.metrics.accuracy is '0.99'"):
        rule["main"](["--dev", str(tmp_path / "dev.json"), "--inli-val", str(tmp_path / "inli"),
                      "--ludwig-dev", str(tmp_path / "ludwig")])
