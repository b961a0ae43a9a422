"""Fine-tune a :class:`TextClassifier` end to end: seeded, AdamW with linear warmup and decay, gradient
accumulation, bf16 autocast on CUDA (fp32 on CPU unless asked), model selection on validation macro-F1 or accuracy.

Batches are length-grouped (on by default): each epoch's seeded shuffle is cut into windows of
``LENGTH_WINDOW`` batches, each window sorted by token length and cut into batches, and the batches shuffled
again, so a batch pads to its own (similar) lengths instead of its longest random member. The loss is the same
per example; only which examples share a batch changes.

Choice items (:class:`ChoiceExamples`, given beside the labelled pairs) are trained for what
``Interpreter.choose`` decides on: each reading's score is log(P(implied) + w P(explicit)) of its (premise, reading)
pair, w the run's ``choice_explicit_weight`` (1: the plain sum; recorded as the trained folder's explicit weight), and
the loss is the cross-entropy of a softmax over one item's readings with the meant one as target. Their
batches (as many whole items as fit ``batch_size`` pairs) are shuffled in among the pair batches.

Resumable: after every epoch (and, with ``checkpoint_every``, every that many optimizer steps within one) the
work folder gets the weights, the AdamW state and the random state (safetensors, never pickles) and ``state.json``
(epochs done, the unfinished epoch's place, history, best epoch, the run's settings and a digest of its data); an
interrupted run started again with the same settings and data continues from its last checkpoint (a setting the code
gained since, left at its default, does not stop it). Shuffling is seeded per epoch and the dropout state is saved, so a
resumed run follows the same path as an uninterrupted one. Checkpoints within an epoch are what makes an epoch of
hours (a base-size encoder on two CPU cores) safe to interrupt.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from pragmeter.classify.examples import ChoiceExamples, Examples, run_fingerprint
from pragmeter.classify.model import TextClassifier, decide
from pragmeter.errors import InvalidParameter
from pragmeter.metrics.classification import classification_report
from pragmeter.io import write_json_atomic
from pragmeter.io.atomic import atomic_path, naming

log = logging.getLogger("pragmeter")

SELECT_ON = ("macro_f1", "accuracy")
LENGTH_WINDOW = 50  # batches per sorted window: large enough to pad little, small enough to stay random


@dataclass
class FineTuneConfig:
    epochs: int = 3
    batch_size: int = 32
    grad_accumulation: int = 1
    lr: float = 3e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.06
    max_length: int = 128
    seed: int = 0
    select_on: str = "macro_f1"
    eval_batch_size: int = 128
    head_lr_scale: float = 1.0  # learning rate of the new classification layer = lr × this
    group_by_length: bool = True
    precision: str = "auto"  # auto | fp32 | bf16 (autocast); auto = bf16 on CUDA, fp32 on CPU
    checkpoint_every: int = 0  # optimizer steps between checkpoints within an epoch; 0: at epoch ends only
    # each pair's target: (1 - soft_weight) × its label + soft_weight × a teacher's probabilities (Examples.soft)
    soft_weight: float = 0.0
    # the groups (Examples.groups, e.g. a general NLI set) whose pairs train on their own labels alone, the teacher's
    # share 0: a set whose labels should hold as they are while the teacher keeps the others near what it knew
    label_only_groups: tuple[str, ...] = ()
    # the weight of a cross-entropy pulling each choice item's readings towards a teacher's probabilities on them
    # (ChoiceExamples.soft), beside the loss over their scores: the readings' order is learnt while each reading's
    # own probabilities stay near the teacher's
    choice_anchor: float = 0.0
    # the explicit weight w of the reading score the choice loss trains, log(P(implied) + w P(explicit)): the score
    # the folder will rank readings by (its ``explicit_weight``, recorded with the trained model); 1: the plain sum
    choice_explicit_weight: float = 1.0

    def __post_init__(self):
        from pragmeter.encoders.runtime import TRAINING_PRECISIONS

        if self.select_on not in SELECT_ON:
            raise InvalidParameter("select_on", self.select_on, choices=SELECT_ON)
        if self.precision not in TRAINING_PRECISIONS:
            raise InvalidParameter("precision", self.precision, choices=TRAINING_PRECISIONS)
        for name in ("epochs", "batch_size", "grad_accumulation", "max_length", "eval_batch_size"):
            if getattr(self, name) < 1:
                raise InvalidParameter(name, getattr(self, name), "must be at least 1")
        if self.checkpoint_every < 0:
            raise InvalidParameter("checkpoint_every", self.checkpoint_every, "must be 0 (epoch ends only) or more")
        if not 0.0 <= self.soft_weight <= 1.0:
            raise InvalidParameter("soft_weight", self.soft_weight, "must be between 0 (the labels only) and 1 (the "
                                   "teacher's probabilities only)")
        self.label_only_groups = tuple(self.label_only_groups)  # a list when read back from JSON
        if self.label_only_groups and not self.soft_weight:
            raise InvalidParameter("label_only_groups", list(self.label_only_groups), "keeps some pairs off a "
                                   "teacher's probabilities: it needs a teacher and a soft weight above 0")
        if self.choice_anchor < 0:
            raise InvalidParameter("choice_anchor", self.choice_anchor, "must be 0 (no anchor) or more")
        if not 0.0 <= self.choice_explicit_weight <= 1.0:
            raise InvalidParameter("choice_explicit_weight", self.choice_explicit_weight, "must be between 0 "
                                   "(P(implied) alone) and 1 (the plain sum)")


def config_from_options(options: Mapping[str, Any]) -> FineTuneConfig:
    """The FineTuneConfig that command options ask for: keys named as its fields (others ignored), and
    ``no_length_grouping`` for plain shuffled batches."""
    values = {f.name: options[f.name] for f in fields(FineTuneConfig) if f.name in options}
    return FineTuneConfig(**values, group_by_length=not options.get("no_length_grouping", False))


@dataclass
class FineTuneResult:
    history: list[dict] = field(default_factory=list)  # per epoch: train_loss, val metrics, seconds
    best_epoch: int = 0
    best_val: float = float("-inf")


BIAS_GRID = sorted(np.round(np.arange(-4.0, 4.0001, 0.1), 1), key=lambda v: (abs(v), v))  # small biases first


def tune_decision_bias(probabilities: np.ndarray, golds: list[str], labels: list[str],
                       select_on: str = "macro_f1", passes: int = 3) -> tuple[dict[str, float], float, float]:
    """Per-label log-probability biases that maximise the ``select_on`` metric of ``golds`` (validation), by
    coordinate ascent over ``BIAS_GRID`` (the first label stays at 0: only differences move the argmax; among equal
    values the smallest bias wins). Returns (bias per label, metric before, metric after)."""
    def value(bias: np.ndarray) -> float:
        predicted = decide(probabilities, labels, dict(zip(labels, bias.tolist())))
        return classification_report(golds, predicted, labels)[select_on]

    bias = np.zeros(len(labels))
    before = best = value(bias)
    for _ in range(passes):
        improved = False
        for column in range(1, len(labels)):
            for candidate in BIAS_GRID:
                trial = bias.copy()
                trial[column] = candidate
                score = value(trial)
                if score > best + 1e-12:
                    best, bias, improved = score, trial, True
        if not improved:
            break
    return {label: float(b) for label, b in zip(labels, bias)}, before, best


def fingerprint(config: FineTuneConfig, classifier: TextClassifier, train: Examples, val: Examples,
                choice: ChoiceExamples | None = None) -> str:
    """What a resumed run must share with the interrupted one: settings, labels and data (how often it checkpoints
    is not among them: a resumed run may checkpoint more or less often)."""
    return run_fingerprint({**_identity_settings(config), **asdict(classifier.settings)}, train, val,
                           *_choice_splits(choice))


def _choice_splits(choice: ChoiceExamples | None) -> list[Examples]:
    """What a run's digest records of its choice items: the items, and the teacher's answers on their readings where
    there are any (none: the digest stays as it was)."""
    if choice is None or not len(choice):
        return []
    return [choice.as_examples()] + ([choice.reading_pairs()] if choice.soft is not None else [])


# Settings the run's digest gained later, left out of it at their default so that an earlier run's digest still holds
LATER_SETTINGS = {"soft_weight": 0.0, "choice_anchor": 0.0, "label_only_groups": (), "choice_explicit_weight": 1.0}


def _identity_settings(config: FineTuneConfig) -> dict:
    """The training settings a resumed run must share: all but ``checkpoint_every``, and a later setting at its
    default left out (LATER_SETTINGS)."""
    return {k: v for k, v in asdict(config).items()
            if k != "checkpoint_every" and not (k in LATER_SETTINGS and v == LATER_SETTINGS[k])}


# A pair's label when it is meant but whether it is said or implied is not known (a general NLI set's entailment):
# in a model without that label, the labels a reading's score sums (implied and explicit) are one class for its loss.
ENTAILED = "entailed"


def joined_columns(labels: list[str]) -> list[int]:
    """The columns an ``ENTAILED`` pair's loss reads as one class: those of the labels a reading's score sums; none
    when ``labels`` has ``entailed`` itself (a 3-way model) or lacks two such labels."""
    from pragmeter.interpreter.model import MEANT_LABELS

    if ENTAILED in labels:
        return []
    columns = [i for i, label in enumerate(labels) if label in MEANT_LABELS]
    return columns if len(columns) > 1 else []


def joined_rows(train: Examples, labels: list[str]) -> torch.Tensor:
    """Which training pairs' loss reads :func:`joined_columns` as one class (those labelled ``ENTAILED``)."""
    joined = bool(joined_columns(labels))
    return torch.tensor([joined and label == ENTAILED for label in train.labels], dtype=torch.bool)


def missing_groups(train: Examples, names) -> list[str]:
    """The names among ``names`` that no training pair's group carries, sorted."""
    return sorted(set(names) - set(train.groups or ()))


def pair_targets(train: Examples, labels: list[str], soft_weight: float = 0.0,
                 label_only_groups: tuple[str, ...] = ()) -> torch.Tensor:
    """Each training pair's target for the cross-entropy: its label's index, or with ``soft_weight`` a distribution,
    (1 - soft_weight) × its label's one-hot + soft_weight × the teacher's probabilities (``train.soft``, columns in
    ``labels`` order); a pair of one of ``label_only_groups`` keeps its label's one-hot. Where any pair is labelled
    ``ENTAILED`` (and ``labels`` lacks it), every target is a distribution and such a pair's label part is spread
    evenly over :func:`joined_columns` (its loss reads only their sum: :func:`pair_loss`)."""
    index = {label: i for i, label in enumerate(labels)}
    columns = joined_columns(labels)
    unknown = next((label for label in train.labels if label not in index and not (columns and label == ENTAILED)),
                   None)
    if unknown is not None:
        raise InvalidParameter("labels", unknown, f"is not one of the model's labels ({', '.join(labels)})")
    joined = joined_rows(train, labels)
    hard = torch.tensor([index.get(label, 0) for label in train.labels])
    if not soft_weight and not joined.any():
        return hard
    label_part = torch.nn.functional.one_hot(hard, len(labels)).float()
    if columns:
        spread = torch.zeros(len(labels))
        spread[columns] = 1.0 / len(columns)
        label_part[joined] = spread
    if not soft_weight:
        return label_part
    if train.soft is None:
        raise InvalidParameter("soft_weight", soft_weight, "needs a teacher's probabilities for the training "
                               "examples (classify/distillation.py: with_teacher)")
    soft = torch.tensor(train.soft, dtype=torch.float32)
    if soft.shape != (len(train), len(labels)):
        raise InvalidParameter("soft_weight", soft_weight, f"the teacher's probabilities are {tuple(soft.shape)}, not "
                               f"one row of {len(labels)} per training example")
    weight = torch.full((len(train), 1), float(soft_weight))
    if label_only_groups:
        missing = missing_groups(train, label_only_groups)
        if missing:
            raise InvalidParameter("label_only_groups", missing[0], "names no group of the training pairs (they are "
                                   f"{', '.join(sorted(set(train.groups or ()) - {None})) or 'ungrouped'})")
        groups = train.groups or [None] * len(train)
        weight[torch.tensor([g in label_only_groups for g in groups], dtype=torch.bool)] = 0.0
    return (1 - weight) * label_part + weight * soft


def pair_loss(logits: torch.Tensor, targets: torch.Tensor, joined: torch.Tensor | None = None,
              columns: list[int] = ()) -> torch.Tensor:
    """The mean cross-entropy of pairs' logits against their targets (indices or distributions); a row in ``joined``
    reads ``columns`` as one class: its target's mass there against the log of their summed probabilities, so how it
    splits between them is left to the other pairs."""
    if joined is None or not columns or not joined.any():
        return torch.nn.functional.cross_entropy(logits, targets)
    log_p = torch.nn.functional.log_softmax(logits, dim=-1)
    dist = targets if targets.dim() == 2 else torch.nn.functional.one_hot(targets, logits.shape[-1]).float()
    plain = -(dist * log_p).sum(-1)
    others = [c for c in range(logits.shape[-1]) if c not in columns]
    merged = -(dist[:, columns].sum(-1) * torch.logsumexp(log_p[:, columns], dim=-1)
               + (dist[:, others] * log_p[:, others]).sum(-1))
    return torch.where(joined, merged, plain).mean()


def run_identity(config: FineTuneConfig, classifier: TextClassifier, train: Examples, val: Examples,
                 choice: ChoiceExamples | None = None) -> dict:
    """What a resumed run must share with the interrupted one, kept field by field: ``settings`` (the training
    settings but ``checkpoint_every``, and the classifier's) and ``data`` (a digest of every example). Kept field by
    field so that a setting the code gains later, left at its default, still lets an earlier run resume."""
    return {"settings": json.loads(json.dumps({**_identity_settings(config), **asdict(classifier.settings)})),
            "data": run_fingerprint({}, train, val, *_choice_splits(choice))}


def _setting_defaults() -> dict:
    from pragmeter.classify.model import ClassifierSettings

    defaults = {}
    for kind in (FineTuneConfig, ClassifierSettings):
        for item in fields(kind):
            if item.default is not MISSING:
                defaults[item.name] = item.default
            elif item.default_factory is not MISSING:
                defaults[item.name] = item.default_factory()
    return json.loads(json.dumps(defaults))


def identity_problem(recorded: dict, current: dict) -> str | None:
    """Why a checkpoint recorded with ``recorded`` (:func:`run_identity`) cannot continue as ``current``, or None: other
    data, a setting of another value, or a setting the checkpoint does not know that is not at its default."""
    if recorded.get("data") != current["data"]:
        return "other training or validation data"
    known, defaults = recorded.get("settings") or {}, _setting_defaults()
    for name, value in current["settings"].items():
        if name in known:
            if known[name] != value:
                return f"{name} was {known[name]!r}, is {value!r}"
        elif name not in defaults or defaults[name] != value:
            return f"{name} is {value!r}, a setting the checkpoint predates, away from its default"
    return None


def choice_batches(choice: ChoiceExamples, batch_size: int, generator: torch.Generator) -> list[list[int]]:
    """One epoch's batches of choice items: a seeded shuffle cut into runs of as many items as fit ``batch_size``
    pairs when every item has as many readings as the largest (at least one item a batch)."""
    per_batch = max(1, batch_size // max(len(options) for options in choice.readings))
    order = torch.randperm(len(choice), generator=generator).tolist()
    return [order[begin:begin + per_batch] for begin in range(0, len(order), per_batch)]


def choice_loss(logits: torch.Tensor, sizes: list[int], golds: list[int], meant: list[int],
                weights: list[float] | None = None) -> torch.Tensor:
    """The mean over items of the cross-entropy of a softmax over each item's reading scores, a reading's score being
    log(sum of its meant labels' probabilities, each times its weight in ``weights``, 1 when None); ``logits`` holds
    the items' readings one after another."""
    log_probabilities = torch.log_softmax(logits.float(), dim=-1)[:, meant]
    if weights is not None and any(w != 1 for w in weights):
        log_probabilities = log_probabilities + torch.log(torch.tensor(weights, dtype=torch.float32,
                                                                       device=logits.device))
    scores = torch.logsumexp(log_probabilities, dim=-1)
    losses, start = [], 0
    for size, gold in zip(sizes, golds):
        item = scores[start:start + size]
        losses.append(torch.logsumexp(item, dim=0) - item[gold])
        start += size
    return torch.stack(losses).mean()


def _optimizer(model: torch.nn.Module, config: FineTuneConfig) -> torch.optim.AdamW:
    """No weight decay on biases and norms; the freshly initialised head may learn faster (head_lr_scale)."""
    groups: dict[tuple[bool, bool], list] = {}
    head = {id(p) for p in _head(model).parameters()}
    for name, parameter in model.named_parameters():
        decays = not (parameter.ndim < 2 or "LayerNorm" in name or "bias" in name)
        groups.setdefault((id(parameter) in head, decays), []).append(parameter)
    return torch.optim.AdamW([{"params": params, "weight_decay": config.weight_decay if decays else 0.0,
                               "lr": config.lr * (config.head_lr_scale if is_head else 1.0)}
                              for (is_head, decays), params in groups.items()], lr=config.lr)


def _head(model: torch.nn.Module) -> torch.nn.Module:
    """The classification layer transformers adds on top of the encoder (``classifier`` in BERT/MPNet/DeBERTa)."""
    return getattr(model, "classifier", None) or torch.nn.Module()


def epoch_batches(count: int, batch_size: int, generator: torch.Generator,
                  lengths: np.ndarray | None = None) -> list[list[int]]:
    """One epoch's batches of example indices: a seeded shuffle cut in order, or (``lengths`` given) cut into
    windows of ``LENGTH_WINDOW`` batches that are each sorted by length, with the batches shuffled again."""
    order = torch.randperm(count, generator=generator).tolist()
    if lengths is None:
        return [order[begin:begin + batch_size] for begin in range(0, count, batch_size)]
    window = batch_size * LENGTH_WINDOW
    batches = []
    for begin in range(0, count, window):
        chunk = sorted(order[begin:begin + window], key=lambda i: lengths[i])
        batches.extend(chunk[start:start + batch_size] for start in range(0, len(chunk), batch_size))
    shuffle = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in shuffle]


def _schedule(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / max(1, warmup)
    return max(0.0, (total - step) / max(1, total - warmup))


def _optimizer_tensors(model: torch.nn.Module, optimizer: torch.optim.AdamW) -> dict[str, torch.Tensor]:
    names = {id(p): n for n, p in model.named_parameters()}
    tensors = {}
    for parameter, state in optimizer.state.items():
        for key, value in state.items():
            tensors[f"{names[id(parameter)]}::{key}"] = torch.as_tensor(value).detach().cpu().contiguous()
    return tensors


RNG_KEY = "::torch_rng_state"  # the dropout generator's state, stored beside the AdamW slots


def _load_optimizer_tensors(model: torch.nn.Module, optimizer: torch.optim.AdamW, tensors: dict) -> None:
    parameters = dict(model.named_parameters())
    for key, value in tensors.items():
        if key == RNG_KEY:
            continue
        name, _, slot = key.rpartition("::")
        optimizer.state[parameters[name]][slot] = value.to(parameters[name].device if value.ndim else "cpu")


def _weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    # Tied/shared tensors are cloned so safetensors can store them.
    return {k: v.detach().cpu().clone().contiguous() for k, v in model.state_dict().items()}


CHECKPOINT_FILES = ("state.json", "last-*.safetensors", "optimizer-*.safetensors", "best-*.safetensors",
                    "svm-C*.safetensors")  # what the fine-tuning loop and the svm head write into a work folder


def remove_checkpoints(work_dir: Path | None) -> None:
    """Once the model folder is saved, its checkpoints (hundreds of MB for a fine-tuned encoder) serve no resume:
    remove them, and the work folder when that leaves it empty (a --work-dir keeps whatever else it holds)."""
    if work_dir is None or not Path(work_dir).is_dir():
        return
    for pattern in CHECKPOINT_FILES:
        for path in Path(work_dir).glob(pattern):
            path.unlink(missing_ok=True)
    try:
        Path(work_dir).rmdir()
    except OSError:  # not empty
        pass


class Trainer:
    """Runs the epoch loop of one training job in ``work_dir``."""

    def __init__(self, classifier: TextClassifier, config: FineTuneConfig, work_dir: Path, progress: bool = True):
        self.classifier = classifier
        self.config = config
        self.work_dir = Path(work_dir)
        self.progress = progress
        self._identity: dict = {}  # run_identity of the run in progress (fit)

    def _save_checkpoint(self, optimizer, result: FineTuneResult, epoch: int, key: str, improved: bool,
                         partial: dict | None = None) -> None:
        """After epoch ``epoch`` (``partial`` None), or within it: ``partial`` = the unfinished epoch's place
        (``epoch``, ``batches_done``, its losses so far and seconds), ``epoch`` then being the epochs finished."""
        with naming(self.work_dir):  # a full disk names the work folder, in one line
            self._write_checkpoint(optimizer, result, epoch, key, improved, partial)

    def _write_checkpoint(self, optimizer, result: FineTuneResult, epoch: int, key: str, improved: bool,
                          partial: dict | None) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        weights = _weights(self.classifier.model)
        # Stamped files first, state.json (which names them) last, old files removed after it: a crash anywhere
        # leaves a state.json whose files are complete.
        # each through a new temporary file renamed into place: a link planted at a checkpoint's name is replaced,
        # never written through
        stamp = f"{epoch}" if partial is None else f"{partial['epoch']}.{partial['batches_done']}"
        last, moments = f"last-{stamp}.safetensors", f"optimizer-{stamp}.safetensors"
        with atomic_path(self.work_dir / last) as tmp:
            save_file(weights, tmp)
        with atomic_path(self.work_dir / moments) as tmp:
            save_file({**_optimizer_tensors(self.classifier.model, optimizer),
                       RNG_KEY: torch.get_rng_state()}, tmp)
        if improved:
            with atomic_path(self.work_dir / f"best-{epoch}.safetensors") as tmp:
                save_file(weights, tmp)
        state = {"fingerprint": key, "identity": self._identity, "epochs_done": epoch, "history": result.history,
                 "best_epoch": result.best_epoch, "best_val": result.best_val, "weights": last,
                 "optimizer": moments, "partial": partial}
        write_json_atomic(self.work_dir / "state.json", state)
        keep = {last, moments, f"best-{result.best_epoch}.safetensors"}
        for old in self.work_dir.glob("*.safetensors"):
            if old.name not in keep:
                old.unlink()

    def _resume(self, optimizer, key: str) -> tuple[int, FineTuneResult, dict | None]:
        """(epochs finished, their result, the unfinished epoch's place or None) from the work folder's last
        checkpoint; the weights, AdamW state and dropout state are restored."""
        state_path = self.work_dir / "state.json"
        if not state_path.is_file():
            return 0, FineTuneResult(), None
        state = json.loads(state_path.read_text(encoding="utf-8"))
        if isinstance(state.get("identity"), dict):
            problem = identity_problem(state["identity"], self._identity)
        else:  # a checkpoint that records only the digest of everything
            problem = None if state.get("fingerprint") == key else "other settings or data"
        if problem is not None:
            raise InvalidParameter("work_dir", str(self.work_dir), f"holds a checkpoint of a different run ({problem}); "
                                   "give another or delete it")
        done, partial = state["epochs_done"], state.get("partial")
        device = self.classifier.device
        weights = state.get("weights", f"last-{done}.safetensors")
        self.classifier.model.load_state_dict(
            {k: v.to(device) for k, v in load_file(self.work_dir / weights).items()})
        moments = load_file(self.work_dir / state.get("optimizer", f"optimizer-{done}.safetensors"))
        _load_optimizer_tensors(self.classifier.model, optimizer, moments)
        if partial is not None:
            torch.set_rng_state(moments[RNG_KEY])
            log.info(f"resuming epoch {partial['epoch']} after {partial['batches_done']} batches from {self.work_dir}")
        else:
            log.info(f"resuming after epoch {done} from {self.work_dir}")
        return done, FineTuneResult(state["history"], state["best_epoch"], state["best_val"]), partial

    def best_weights_path(self, result: FineTuneResult) -> Path:
        return self.work_dir / f"best-{result.best_epoch}.safetensors"

    def fit(self, train: Examples, val: Examples, stop_after: int | None = None,
            choice: ChoiceExamples | None = None, stop_after_steps: int | None = None) -> FineTuneResult:
        """Train; ``stop_after`` ends the run after that many epochs, ``stop_after_steps`` after that many optimizer
        steps of the whole run (as an interruption would). ``choice``: items trained with the loss over their
        readings' scores (:func:`choice_loss`) beside ``train``'s pairs."""
        from tqdm import tqdm

        config, classifier = self.config, self.classifier
        model = classifier.model
        optimizer = _optimizer(model, config)
        choice = choice if choice is not None and len(choice) else None
        meant, weights = [], None
        if choice is not None:
            from pragmeter.interpreter.model import meant_columns

            meant = meant_columns(classifier.settings)
            labels = list(classifier.settings.labels)
            if config.choice_explicit_weight != 1 and "explicit" not in labels:
                raise InvalidParameter("choice_explicit_weight", config.choice_explicit_weight,
                                       f"weighs P(explicit), which a model with labels {labels} does not give")
            # the folder ranks readings by the score its choice items were trained for
            classifier.settings.explicit_weight = config.choice_explicit_weight
            weights = [config.choice_explicit_weight if labels[i] == "explicit" else 1.0 for i in meant]
            if config.choice_anchor and choice.soft is None:
                raise InvalidParameter("choice_anchor", config.choice_anchor, "needs a teacher's probabilities for "
                                       "the choice items' readings (classify/distillation.py: with_teacher)")
        choice_count = 0 if choice is None else len(choice_batches(choice, config.batch_size, torch.Generator()))
        steps_per_epoch = math.ceil((math.ceil(len(train) / config.batch_size) + choice_count)
                                    / config.grad_accumulation)
        total = steps_per_epoch * config.epochs
        warmup = int(config.warmup_ratio * total)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: _schedule(step, total, warmup))
        key = fingerprint(config, classifier, train, val, choice)
        self._identity = run_identity(config, classifier, train, val, choice)
        start, result, partial = self._resume(optimizer, key)
        scheduler.last_epoch = start * steps_per_epoch + (partial["batches_done"] // config.grad_accumulation
                                                          if partial else 0)
        for group, base in zip(optimizer.param_groups, scheduler.base_lrs):
            group["lr"] = base * _schedule(scheduler.last_epoch, total, warmup)
        from pragmeter.classify.evaluators import ClassificationEvaluator

        validation = ClassificationEvaluator(val, "val", config.select_on, config.eval_batch_size)
        targets_all = pair_targets(train, classifier.labels, config.soft_weight, config.label_only_groups)
        joined_all, joined_at = joined_rows(train, classifier.labels), joined_columns(classifier.labels)
        lengths = classifier.token_lengths(train.texts, train.pairs) if config.group_by_length else None
        for epoch in range(start + 1, config.epochs + 1):
            if stop_after is not None and epoch > stop_after:
                break
            model.train()
            generator = torch.Generator().manual_seed(config.seed * 1000 + epoch)
            if partial is None:
                torch.manual_seed(config.seed * 1000 + epoch)  # dropout (a resumed epoch's state was restored)
            batches = [("pairs", index) for index in epoch_batches(len(train), config.batch_size, generator, lengths)]
            if choice is not None:  # its own generator: the pair batches stay those of a run without choice items
                mixer = torch.Generator().manual_seed(config.seed * 1000 + epoch + 7919)
                batches += [("choice", index) for index in choice_batches(choice, config.batch_size, mixer)]
                batches = [batches[i] for i in torch.randperm(len(batches), generator=mixer).tolist()]
            skip, losses, choice_losses, seconds_before = 0, [], [], 0.0
            if partial is not None:
                skip, losses, choice_losses = partial["batches_done"], partial["losses"], partial["choice_losses"]
                seconds_before, partial = partial["seconds"], None
            started = _clock()
            bar = tqdm(batches[skip:], desc=f"epoch {epoch}/{config.epochs}", unit="batch", initial=skip,
                       total=len(batches), disable=not self.progress, dynamic_ncols=True, file=sys.stderr)
            optimizer.zero_grad(set_to_none=True)
            for number, (kind, index) in enumerate(bar, skip + 1):
                if kind == "pairs":
                    batch = train.subset(index)
                    inputs = classifier.tokenize(batch.texts, batch.pairs).to(classifier.device)
                    targets = targets_all[index].to(classifier.device)
                    with classifier.autocast():
                        logits = model(**inputs).logits
                    loss = pair_loss(logits.float(), targets, joined_all[index].to(classifier.device), joined_at)
                    losses.append(loss.item())
                else:
                    items = choice.subset(index)
                    premises = [p for p, options in zip(items.premises, items.readings) for _ in options]
                    inputs = classifier.tokenize(premises, [r for options in items.readings for r in options])
                    with classifier.autocast():
                        logits = model(**inputs.to(classifier.device)).logits
                    loss = choice_loss(logits, [len(options) for options in items.readings], items.golds, meant,
                                       weights)
                    choice_losses.append(loss.item())  # the loss over reading scores alone, anchored or not
                    if config.choice_anchor:
                        anchor = torch.tensor([row for rows in items.soft for row in rows], dtype=torch.float32)
                        loss = loss + config.choice_anchor * torch.nn.functional.cross_entropy(
                            logits.float(), anchor.to(logits.device))
                (loss / config.grad_accumulation).backward()
                if number % config.grad_accumulation == 0 or number == len(batches):
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad(set_to_none=True)
                    if stop_after_steps is not None and scheduler.last_epoch >= stop_after_steps:
                        bar.close()  # as a kill would: nothing saved since the last checkpoint
                        return result
                    in_epoch = number // config.grad_accumulation
                    if config.checkpoint_every and in_epoch % config.checkpoint_every == 0 and number < len(batches):
                        self._save_checkpoint(optimizer, result, epoch - 1, key, False, {
                            "epoch": epoch, "batches_done": number, "losses": losses,
                            "choice_losses": choice_losses, "seconds": round(seconds_before + _clock() - started, 2)})
                bar.set_postfix(loss=f"{np.mean(losses[-20:] or [0.0]):.4f}", refresh=False)
            bar.close()
            train_seconds = seconds_before + _clock() - started
            figures = validation(classifier)
            value = figures[validation.primary_metric]
            improved = value > result.best_val
            if improved:
                result.best_val, result.best_epoch = value, epoch
            result.history.append({"epoch": epoch, "train_loss": float(np.mean(losses)) if losses else None,
                                   "train_seconds": round(train_seconds, 2), "examples": len(train),
                                   "val_accuracy": figures["val_accuracy"], "val_macro_f1": figures["val_macro_f1"],
                                   **({"choice_loss": float(np.mean(choice_losses)), "choice_items": len(choice)}
                                      if choice is not None else {})})
            log.info(f"epoch {epoch}: train loss {np.mean(losses or [float('nan')]):.4f}, val accuracy {figures['val_accuracy']:.4f}, "
                     f"val macro-F1 {figures['val_macro_f1']:.4f}{' (best)' if improved else ''}")
            self._save_checkpoint(optimizer, result, epoch, key, improved)
        return result

    def load_best(self, result: FineTuneResult) -> None:
        device = self.classifier.device
        self.classifier.model.load_state_dict(
            {k: v.to(device) for k, v in load_file(self.best_weights_path(result)).items()})


def _clock() -> float:
    import time

    return time.perf_counter()
