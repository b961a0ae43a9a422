"""One training job: a recipe's splits -> fine-tuned classifier (or a frozen encoder with an SVM) -> model folder
with weights, config, card and metrics.json (validation history, test report per label, per source and per group
of sources)."""

from __future__ import annotations

import logging
import platform
from dataclasses import asdict
from pathlib import Path

from pragmeter.classify.card import model_card
from pragmeter.provenance import RunRecord
from pragmeter.classify.examples import RecipeData
from pragmeter.classify.model import ClassifierSettings, TextClassifier
from pragmeter.classify.training import (Trainer, FineTuneConfig, FineTuneResult, remove_checkpoints,
                                        tune_decision_bias)
from pragmeter.encoders import canonical_name
from pragmeter.encoders.registry import is_packaged
from pragmeter.errors import InvalidParameter, OutputExists, PragmeterError
from pragmeter.metrics.classification import accuracy_by_group, classification_report, correct

log = logging.getLogger("pragmeter")


def group_accuracies(golds, predictions, groups, report_groups: dict[str, list[str]]) -> dict:
    out = {}
    for name, members in report_groups.items():
        values = [correct(g, p) for g, p, s in zip(golds, predictions, groups) if s in members]
        out[name] = {"accuracy": sum(values) / len(values) if values else float("nan"), "n": len(values),
                     "sources": members}
    return out


def recipe_settings(data: RecipeData, encoder: str, max_length: int) -> ClassifierSettings:
    # a folder is recorded where it is: a relative path in a model's config is read from the model folder
    folder = Path(encoder).expanduser()
    recorded = str(folder.resolve()) if not is_packaged(encoder) and folder.is_dir() else canonical_name(encoder)
    return ClassifierSettings(labels=data.labels, base_encoder=recorded, max_length=max_length,
                              input_kind=data.input_kind, recipe={"name": data.name, **data.arguments},
                              answer_words=data.answer_words)


def run_recipe(data: RecipeData, encoder: str, config: FineTuneConfig, output: Path, work_dir: Path,
               device: str | None = None, command: str = "", progress: bool = True,
               stop_after: int | None = None, tune_bias: bool = False, init_from: Path | None = None,
               evaluate_test: bool = True) -> dict | None:
    """Train, select, test and save. Returns the metrics (also in OUTPUT/metrics.json), or None when
    ``stop_after`` ended the run early (the work folder then holds the checkpoint to resume from).
    ``evaluate_test=False`` leaves the test split unread (``test`` is None in the metrics): for the intermediate
    runs of a recipe, which are chosen on validation and read the test split only once shipped.
    ``tune_bias``: after selection, per-label decision biases are tuned on validation (``tune_decision_bias``) and
    saved with the model; the test report is then the biased one, the plain argmax's beside it.
    ``init_from``: a classifier folder of the same encoder and labels whose weights training starts from (a stage of
    a multi-stage recipe); the base encoder recorded stays ``encoder``, so the result ships over it."""
    import torch
    import transformers

    torch.manual_seed(config.seed)
    classifier = TextClassifier.from_encoder(encoder, recipe_settings(data, encoder, config.max_length), device,
                                             seed=config.seed, precision=config.precision)
    if init_from is not None:
        start_from(classifier, Path(init_from))
    trainer = Trainer(classifier, config, work_dir, progress)
    result: FineTuneResult = trainer.fit(data.train, data.val, stop_after, data.choice)
    if len(result.history) < config.epochs:
        return None
    trainer.load_best(result)
    training = {"head": "linear", "transformers": transformers.__version__, "train_config": asdict(config),
                "best_epoch": result.best_epoch, "history": result.history}
    info = test_and_save(data, classifier, training, output, command, progress, tune_bias, config.select_on,
                         config.eval_batch_size, evaluate_test)
    remove_checkpoints(work_dir)
    return info


def start_from(classifier: TextClassifier, folder: Path) -> None:
    """Load ``folder``'s whole weights into ``classifier``: refused in one line unless the folder is a classifier of
    the same labels whose weights name exactly the classifier's tensors, with the same shapes, all finite."""
    import torch
    from safetensors.torch import load_file

    from pragmeter.classify.model import read_settings

    _, _, settings = read_settings(folder)
    if settings.labels != classifier.labels:
        raise PragmeterError(f"{folder}: labels {settings.labels} differ from the recipe's {classifier.labels}")
    weights = load_file(folder / TextClassifier.WEIGHTS_FILE)
    own = classifier.model.state_dict()
    if set(weights) != set(own) or any(weights[k].shape != own[k].shape for k in own):
        raise PragmeterError(f"{folder}: its weights are not those of a {classifier.settings.base_encoder} classifier")
    if not all(bool(torch.isfinite(v).all()) for v in weights.values() if v.is_floating_point()):
        raise PragmeterError(f"{folder}: a weight tensor holds NaN or infinity")
    classifier.model.load_state_dict({k: v.to(classifier.device) for k, v in weights.items()})


def run_svm_recipe(data: RecipeData, encoder: str, c_values: list[float], output: Path, select_on: str = "macro_f1",
                   device: str | None = None, precision: str = "auto", command: str = "", progress: bool = True,
                   tune_bias: bool = False, work_dir: Path | None = None) -> dict:
    """The frozen encoder + RBF SVM form (:class:`EmbeddingSVMClassifier`): fit one SVM per C (checkpointed in
    ``work_dir``, so an interrupted run resumes), keep the best on validation, then test and save as
    :func:`run_recipe` does. The encoder runs as scoring runs it (``precision`` auto, fp32 or bf16:
    :func:`pragmeter.classify.svm.embedding_runtime`)."""
    from pragmeter.classify.svm import EmbeddingSVMClassifier, embedding_runtime

    if data.input_kind != "single":
        raise InvalidParameter("head", "svm", "classifies single texts; INLI's (premise, hypothesis) pairs need the "
                               "fine-tuned head (linear)")
    runtime = embedding_runtime(precision, device, canonical_name(encoder))
    # max_length 0 here: fit records the encoder's own max_seq_length (embeddings are cached per encoder name)
    classifier, history = EmbeddingSVMClassifier.fit(recipe_settings(data, encoder, 0), data.train,
                                                     data.val, c_values, select_on, runtime, progress, work_dir)
    best = next(i for i, row in enumerate(history, 1) if row["C"] == classifier.c)
    training = {"head": "svm", "train_config": {"head": "svm", "kernel": "rbf", "gamma": "scale",
                                                "C_grid": [float(c) for c in c_values], "select_on": select_on,
                                                "backend": runtime.backend, "precision": runtime.precision},
                "best_epoch": best, "history": history}
    info = test_and_save(data, classifier, training, output, command, progress, tune_bias, select_on)
    remove_checkpoints(work_dir)
    return info


def test_and_save(data: RecipeData, classifier, training: dict, output: Path, command: str, progress: bool,
                  tune_bias: bool, select_on: str, batch_size: int = 128, evaluate_test: bool = True) -> dict:
    """Test report (with a decision bias tuned on validation when asked), card, metrics.json and the folder;
    without ``evaluate_test`` the test split is not read and the report is None."""
    import torch

    if not evaluate_test and tune_bias:
        raise InvalidParameter("tune_bias", tune_bias, "reports the tuned bias on the test split, which "
                               "evaluate_test=False leaves unread")
    test_probabilities = (classifier.probabilities(data.test.texts, data.test.pairs, batch_size, progress)
                          if evaluate_test else None)
    bias_info = {}
    if tune_bias:
        val_probabilities = classifier.probabilities(data.val.texts, data.val.pairs, batch_size)
        bias, before, after = tune_decision_bias(val_probabilities, data.val.labels, classifier.labels, select_on)
        plain = classification_report(data.test.labels, classifier.decide(test_probabilities), classifier.labels)
        bias_info = {"decision_bias": {"bias": bias, "selected_on": select_on, "val_before": before,
                                       "val_after": after, "test_without_bias": plain}}
        classifier.settings.decision_bias = bias
        log.info(f"decision bias {bias}: validation {select_on} {before:.4f} -> {after:.4f}")
    predictions = classifier.decide(test_probabilities) if evaluate_test else None
    test = classification_report(data.test.labels, predictions, classifier.labels) if evaluate_test else None
    run = RunRecord.now()
    info = {
        "name": output.name, "recipe": data.name, "description": data.description, "command": command,
        "commit": run.commit or "unknown", "run": run.to_dict(), "torch": torch.__version__,
        "device": f"{classifier.device.type} ({torch.cuda.get_device_name(0) if classifier.device.type == 'cuda' else platform.processor() or platform.machine()})",
        "settings": asdict(classifier.settings), **training, "arguments": data.arguments,
        "train_examples": len(data.train), "val_examples": len(data.val), "data_files": data.data_files,
        **({"train_choice_items": len(data.choice)} if data.choice is not None else {}),
        "test": test,
        "test_by_group": (accuracy_by_group(data.test.labels, predictions, data.test.groups)
                          if evaluate_test and data.test.groups else {}),
        "test_report_groups": (group_accuracies(data.test.labels, predictions, data.test.groups, data.report_groups)
                               if evaluate_test else {}),
        "paper": data.paper, **bias_info,
    }
    classifier.save(output, model_card(info), info)
    log.info(f"test accuracy {test['accuracy']:.4f}, macro-F1 {test['macro_f1']:.4f} -> {output}" if test
             else f"test split not read -> {output}")
    return info


def train_classifier(data: RecipeData, encoder: str, output: str | Path, config: FineTuneConfig, *,
                     svm_c: list[float] | None = None, device: str | None = None, work_dir: str | Path | None = None,
                     limit_train: int | None = None, limit_eval: int | None = None, tune_bias: bool = False,
                     command: str = "", progress: bool = True, overwrite: bool = False,
                     teacher: str | Path | None = None) -> dict | None:
    """A recipe's data -> classifier folder: the fine-tuned encoder, or with ``svm_c`` the frozen encoder's RBF SVM
    for those C values (``config`` gives selection metric and precision). ``limit_train``/``limit_eval`` keep the
    first examples (smoke runs); ``work_dir`` (default OUTPUT.work) holds the checkpoints a rerun resumes from.
    ``teacher``: a classifier whose probabilities on the training examples are the soft targets
    (``config.soft_weight``; :mod:`pragmeter.classify.distillation`)."""
    output = Path(output)
    if (output / "config.json").exists() and not overwrite:
        raise OutputExists(output, "already holds a model")
    data.train = data.train.head(limit_train)
    data.choice = data.choice.head(limit_train) if data.choice is not None else None
    data.val, data.test = data.val.head(limit_eval), data.test.head(limit_eval)
    if not len(data.train) or not len(data.val):
        raise InvalidParameter("limit_train", limit_train, "leaves no training or validation examples",
                               also={"limit_eval": limit_eval})
    if (teacher is None) != (config.soft_weight == 0):
        raise InvalidParameter("soft_weight", config.soft_weight, "distils a teacher: give both a teacher and a "
                               "soft_weight above 0, or neither", also={"teacher": teacher})
    work = Path(work_dir) if work_dir else output.with_name(output.name + ".work")
    if teacher is not None:
        if svm_c is not None:
            raise InvalidParameter("head", "svm", "fits hard labels; a teacher's probabilities train the fine-tuned "
                                   "head (linear)", also={"teacher": teacher})
        from pragmeter.classify.distillation import with_teacher

        with_teacher(data, teacher, work, config.eval_batch_size, progress)
    if svm_c is not None:
        return run_svm_recipe(data, encoder, svm_c, output, config.select_on, device, config.precision, command,
                              progress, tune_bias, work)
    return run_recipe(data, encoder, config, output, work, device, command, progress, tune_bias=tune_bias)
