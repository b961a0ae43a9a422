"""One training job: a recipe's splits -> fine-tuned classifier -> model folder with weights, config, card
and metrics.json (validation history, test report per label, per source and per group of sources)."""

from __future__ import annotations

import platform
import sys
from dataclasses import asdict
from pathlib import Path

from pragmeter.classify.card import model_card
from pragmeter.provenance import RunRecord
from pragmeter.classify.examples import RecipeData
from pragmeter.classify.model import ClassifierSettings, TextClassifier
from pragmeter.classify.training import Trainer, FineTuneConfig, FineTuneResult, tune_decision_bias
from pragmeter.encoders import canonical_name
from pragmeter.metrics.classification import accuracy_by_group, classification_report, correct


def group_accuracies(golds, predictions, groups, report_groups: dict[str, list[str]]) -> dict:
    out = {}
    for name, members in report_groups.items():
        values = [correct(g, p) for g, p, s in zip(golds, predictions, groups) if s in members]
        out[name] = {"accuracy": sum(values) / len(values) if values else float("nan"), "n": len(values),
                     "sources": members}
    return out


def run_recipe(data: RecipeData, encoder: str, config: FineTuneConfig, output: Path, work_dir: Path,
               device: str | None = None, command: str = "", progress: bool = True,
               stop_after: int | None = None, tune_bias: bool = False) -> dict | None:
    """Train, select, test and save. Returns the metrics (also in OUTPUT/metrics.json), or None when
    ``stop_after`` ended the run early (the work folder then holds the checkpoint to resume from).
    ``tune_bias``: after selection, per-label decision biases are tuned on validation (``tune_decision_bias``) and
    saved with the model; the test report is then the biased one, the plain argmax's beside it."""
    import torch
    import transformers

    settings = ClassifierSettings(labels=data.labels, base_encoder=canonical_name(encoder),
                                  max_length=config.max_length, input_kind=data.input_kind,
                                  recipe={"name": data.name, **data.arguments}, answer_words=data.answer_words)
    torch.manual_seed(config.seed)
    classifier = TextClassifier.from_encoder(encoder, settings, device, seed=config.seed, precision=config.precision)
    trainer = Trainer(classifier, config, work_dir, progress)
    result: FineTuneResult = trainer.fit(data.train, data.val, stop_after)
    if len(result.history) < config.epochs:
        return None
    trainer.load_best(result)
    test_probabilities = classifier.probabilities(data.test.texts, data.test.pairs, config.eval_batch_size, progress)
    bias_info = {}
    if tune_bias:
        val_probabilities = classifier.probabilities(data.val.texts, data.val.pairs, config.eval_batch_size)
        bias, before, after = tune_decision_bias(val_probabilities, data.val.labels, classifier.labels,
                                                 config.select_on)
        plain = classification_report(data.test.labels, classifier.decide(test_probabilities), classifier.labels)
        bias_info = {"decision_bias": {"bias": bias, "selected_on": config.select_on, "val_before": before,
                                       "val_after": after, "test_without_bias": plain}}
        classifier.settings.decision_bias = bias
        print(f"decision bias {bias}: validation {config.select_on} {before:.4f} -> {after:.4f}", file=sys.stderr)
    predictions = classifier.decide(test_probabilities)
    test = classification_report(data.test.labels, predictions, classifier.labels)
    run = RunRecord.now()
    info = {
        "name": output.name, "recipe": data.name, "description": data.description, "command": command,
        "commit": run.commit or "unknown", "run": run.to_dict(), "torch": torch.__version__, "transformers": transformers.__version__,
        "device": f"{classifier.device.type} ({torch.cuda.get_device_name(0) if classifier.device.type == 'cuda' else platform.processor() or platform.machine()})",
        "settings": asdict(settings), "train_config": asdict(config), "arguments": data.arguments,
        "train_examples": len(data.train), "val_examples": len(data.val), "data_files": data.data_files,
        "best_epoch": result.best_epoch, "history": result.history, "test": test,
        "test_by_group": accuracy_by_group(data.test.labels, predictions, data.test.groups) if data.test.groups else {},
        "test_report_groups": group_accuracies(data.test.labels, predictions, data.test.groups, data.report_groups),
        "paper": data.paper, **bias_info,
    }
    classifier.save(output, model_card(info), info)
    print(f"test accuracy {test['accuracy']:.4f}, macro-F1 {test['macro_f1']:.4f} -> {output}", file=sys.stderr)
    return info
