"""A fine-tuned transformers encoder that labels single texts or (premise, hypothesis) pairs.

A model folder holds ``model.safetensors`` + the transformers ``config.json`` (with ``pragmeter`` settings:
labels, base encoder, max length, input kind, recipe, answer words), the tokenizer files and a README.md
model card. Weights are only ever read from and written as safetensors (never pickles).

A plain Hugging Face sequence-classification folder without ``pragmeter`` settings (an NLI cross-encoder such as
``cross-encoder/nli-deberta-v3-base``) reads as a pair classifier when its ``id2label`` names NLI's labels
(:func:`nli_label`): the settings are derived from its config and tokenizer (:func:`plain_settings`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from pragmeter.errors import DataError, InvalidParameter, PragmeterError

if TYPE_CHECKING:
    from pragmeter.encoders.runtime import Runtime

INPUT_KINDS = ("pair", "single")


@dataclass
class ClassifierSettings:
    """What pragmeter needs besides the transformers config to use a model folder."""

    labels: list[str]
    base_encoder: str
    max_length: int
    input_kind: str  # "pair" (premise, hypothesis) or "single"
    recipe: dict = field(default_factory=dict)  # name and arguments of the recipe that trained it
    answer_words: dict[str, str] = field(default_factory=dict)  # label -> word a harness task parses
    # label -> number added to its log-probability before the argmax, tuned on validation (`classifier train
    # --tune-decision-bias`): moves the decision boundary towards a rare class. Empty: the plain argmax.
    decision_bias: dict[str, float] = field(default_factory=dict)
    # An interpreter's weight on P(explicit) in a reading's score, P(implied) + weight * P(explicit), chosen on
    # development choice splits (pragmeter.interpreter.model: explicit weight); 1: the plain sum.
    explicit_weight: float = 1.0

    def __post_init__(self):
        if self.input_kind not in INPUT_KINDS:
            raise PragmeterError(f"input kind {self.input_kind!r} is not one of {', '.join(INPUT_KINDS)}")
        problem = explicit_weight_problem(self.explicit_weight)
        if problem:
            raise PragmeterError(f"explicit_weight {problem}")


def explicit_weight_problem(weight) -> str | None:
    """Why ``weight`` cannot be an interpreter's explicit weight (a number from 0 to 1), or None."""
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
        return f"must be a number from 0 to 1, got {weight!r}"
    return None


def parse_explicit_weight(text: str) -> float:
    """An explicit weight given as text (a command-line flag, a model argument); a PragmeterError saying what is
    wrong otherwise (:func:`explicit_weight_problem`)."""
    try:
        weight = float(text)
    except ValueError:
        weight = text
    problem = explicit_weight_problem(weight)
    if problem:
        raise PragmeterError(problem)
    return weight


# Label names of NLI models, matched case-insensitively, -> the name pragmeter uses: a 3-way model's ``entailment``
# is the interpreter's ``entailed``; INLI's four keep theirs.
NLI_LABELS = {"entailment": "entailed", "entailed": "entailed", "neutral": "neutral", "contradiction": "contradiction",
              "implied": "implied", "explicit": "explicit"}
PLAIN_MAX_LENGTH = 512  # the longest input a plain folder's settings allow (its tokenizer's or position limit below)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model",
                   "tokenizer.model")  # any one of them holds a vocabulary; without all, transformers makes up one


def first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__


def read_json_object(path: Path) -> dict:
    """A model folder's JSON file that must hold an object (config.json, adapter_config.json): a DataError naming
    the file when it is unreadable, not JSON, or not an object."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: not readable JSON ({first_line(error)})") from None
    if not isinstance(config, dict):
        raise DataError(f"{path}: not a JSON object")
    return config


def read_settings(folder: Path) -> tuple[Path, dict, ClassifierSettings]:
    """(config path, config, settings) of a classifier folder, checked: a DataError naming config.json when it is
    not JSON, or its ``pragmeter`` settings are missing, of the wrong type or name no distinct labels."""
    path = folder / "config.json"
    if not path.is_file():
        raise PragmeterError(f"{folder} is not a classifier folder (no config.json)")
    config = read_json_object(path)
    raw = config.get("pragmeter")
    if not raw:
        return path, config, plain_settings(folder, config)
    try:
        settings = ClassifierSettings(**raw)
    except (TypeError, PragmeterError) as error:
        raise DataError(f"{path}: 'pragmeter' settings are malformed ({error})") from None
    labels = settings.labels
    if not (isinstance(labels, list) and labels and all(isinstance(label, str) and label for label in labels)
            and len(set(labels)) == len(labels)):
        raise DataError(f"{path}: 'pragmeter' labels must be a list of distinct label names, got {labels!r}")
    if not isinstance(settings.max_length, int) or not isinstance(settings.decision_bias, dict):
        raise DataError(f"{path}: 'pragmeter' max_length must be a number and decision_bias an object")
    return path, config, settings


def nli_label(name) -> str | None:
    """pragmeter's name of an NLI model's label (``NLI_LABELS``, case-insensitive), None for another label."""
    return NLI_LABELS.get(name.strip().lower()) if isinstance(name, str) else None


def check_id2label(config_path: Path, config: dict, settings: ClassifierSettings) -> None:
    """The one check, for every folder kind (whole, shipped, peft), that a config's ``id2label`` names the model's
    outputs as its settings do, in order (a plain NLI folder's names read through :func:`nli_label`): a DataError
    naming ``config_path`` otherwise, since predictions would be renamed."""
    id2label = config.get("id2label")
    try:
        outputs = {int(key): value for key, value in id2label.items()}
    except (AttributeError, TypeError, ValueError):
        outputs = None
    if outputs is not None and not config.get("pragmeter"):  # a plain NLI folder: its labels by pragmeter's names
        outputs = {index: nli_label(name) for index, name in outputs.items()}
    if outputs != dict(enumerate(settings.labels)):
        raise DataError(f"{config_path}: 'pragmeter' labels {settings.labels} do not match the model's id2label "
                        f"{id2label} (predictions would be renamed)")


def plain_settings(folder: Path, config: dict) -> ClassifierSettings:
    """The settings of a plain sequence-classification folder (no ``pragmeter`` settings) whose ``id2label`` names
    NLI's labels: a pair classifier with those labels (:func:`nli_label`), base encoder the folder's name, max length
    its tokenizer's ``model_max_length`` within its position embeddings (at most ``PLAIN_MAX_LENGTH``). Any other
    folder is refused naming config.json."""
    path = folder / "config.json"
    id2label = config.get("id2label")
    try:
        names = {int(key): value for key, value in id2label.items()}
    except (AttributeError, TypeError, ValueError):
        names = {}
    labels = [nli_label(names.get(i)) for i in range(len(names))]
    if len(labels) < 2 or None in labels or len(set(labels)) != len(labels):
        shown = [names[i] for i in sorted(names)] if names else id2label
        raise PragmeterError(f"{path} has no 'pragmeter' settings and its id2label {shown!r} are not NLI's labels "
                             f"(entailment, neutral, contradiction, or INLI's four); train a classifier with "
                             f"`pragmeter classifier train`")

    def limit(value) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    try:
        tokenizer = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        tokenizer = {}
    limits = [PLAIN_MAX_LENGTH, limit(config.get("max_position_embeddings")),
              limit(tokenizer.get("model_max_length")) if isinstance(tokenizer, dict) else None]
    return ClassifierSettings(labels=labels, base_encoder=Path(folder).resolve().name,
                              max_length=min(value for value in limits if value), input_kind="pair")


def warm_start_head(model, folder: Path, labels: Sequence[str]) -> list[str]:
    """Start the classification layer of ``model`` (labels ``labels``) from the one of the NLI cross-encoder in
    ``folder`` it was built on: each label's output row is the cross-encoder's row of the same NLI label (INLI's
    ``implied`` and ``explicit`` both its ``entailed``); a label it lacks keeps its new row. Nothing for a sentence
    encoder (no NLI labels). A Hub name is read from the Hugging Face cache, where loading the model put it. Returns
    the labels started from the cross-encoder's rows."""
    from safetensors import safe_open

    if not (folder / "config.json").is_file():
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(folder.as_posix(), "config.json")
        except Exception:  # noqa: BLE001  (not a Hub name: no head to start from)
            cached = None
        if not isinstance(cached, str):
            return []
        folder = Path(cached).parent
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        source = [nli_label(config["id2label"][key]) for key in sorted(config["id2label"], key=int)]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return []
    if not source or None in source or not (folder / TextClassifier.WEIGHTS_FILE).is_file():
        return []
    meant = {"implied": "entailed", "explicit": "entailed"}
    rows = [source.index(label) if label in source else source.index(meant[label])
            if meant.get(label) in source else None for label in labels]
    prefix = model.base_model_prefix + "."
    state = model.state_dict()
    with safe_open(str(folder / TextClassifier.WEIGHTS_FILE), "pt") as weights:
        outputs = {name: weights.get_tensor(name) for name in weights.keys()
                   if not name.startswith(prefix) and name in state and weights.get_slice(name).get_shape()[:1]
                   == [len(source)] and state[name].shape[:1] == (len(labels),)}
    if not outputs:
        return []
    with torch.no_grad():
        for name, tensor in outputs.items():
            if tensor.shape[1:] != state[name].shape[1:]:
                return []
            for target, row in enumerate(rows):
                if row is not None:
                    state[name][target] = tensor[row].to(state[name].dtype)
    return [label for label, row in zip(labels, rows) if row is not None]


def base_encoder(folder: Path, settings: ClassifierSettings) -> str:
    """Where the encoder that a classifier folder's settings name (``base_encoder``) loads from, read as
    :func:`pragmeter.encoders.registry.config_encoder` reads a config's encoder: a packaged name, a folder (a relative
    path read from the model folder, never from the working directory) or a hub name already in the local cache."""
    from pragmeter.encoders.registry import config_encoder

    return config_encoder(folder, settings.base_encoder, f"{Path(folder) / 'config.json'}: 'pragmeter' base_encoder")


def decide(probabilities: np.ndarray, labels: Sequence[str], decision_bias: dict[str, float]) -> list[str]:
    """Labels of rows of class probabilities (columns in ``labels`` order): the argmax after ``decision_bias`` (label
    -> number) is added to the log-probabilities; without a bias, the plain argmax."""
    if not any(decision_bias.values()):
        return [labels[i] for i in probabilities.argmax(axis=1)]
    return [labels[i] for i in biased_log_probabilities(probabilities, labels, decision_bias).argmax(axis=1)]


def biased_log_probabilities(probabilities: np.ndarray, labels: Sequence[str],
                             decision_bias: dict[str, float]) -> np.ndarray:
    """What :func:`decide` takes the argmax of: the log-probabilities (fp64) plus each label's ``decision_bias``."""
    shift = np.array([decision_bias.get(label, 0.0) for label in labels], dtype=np.float64)
    return np.log(np.clip(np.asarray(probabilities, dtype=np.float64), 1e-30, None)) + shift


def check_finite_tensors(tensors: dict, where: str | os.PathLike) -> None:
    """A DataError naming ``where`` (the file or folder the tensors came from) and the first tensor (name -> torch
    tensor or numpy array) that holds NaN or infinity: such a model gives NaN probabilities for every input, which no
    answer may be read from."""
    for name in sorted(tensors):
        value = tensors[name]
        if isinstance(value, torch.Tensor):
            finite = bool(torch.isfinite(value).all())
        else:
            finite = bool(np.isfinite(value).all())
        if not finite:
            raise DataError(f"{where}: tensor {name!r} holds NaN or infinite values (a diverged training or a "
                            "damaged file); this model cannot classify")


def check_probabilities(probabilities: np.ndarray, name: str | os.PathLike) -> np.ndarray:
    """``probabilities`` (rows of class probabilities) when every one is a finite number; a DataError naming the model
    and the first row otherwise (weights that overflow give NaN): an error, never an answer read from NaN."""
    broken = ~np.isfinite(probabilities).all(axis=1) if probabilities.ndim == 2 else np.zeros(0, dtype=bool)
    if broken.any():
        raise DataError(f"{name}: the model gives NaN or infinite probabilities for input {int(np.argmax(broken))} "
                        f"({int(broken.sum())} of {len(probabilities)}); its weights are damaged, no answer is given")
    return probabilities


def cut_long_inputs(tokenizer, max_length: int, texts: Sequence[str],
                    pairs: Sequence[str] | None) -> tuple[list[str], list[str] | None]:
    """``texts`` and ``pairs`` with each text far longer than ``max_length`` tokens cut by characters before anything
    tokenizes it (:func:`pragmeter.encoders.tokens.cut_long_text`, as ImpScore cuts): the tokens truncation keeps are
    the same, from either side of a pair, and time and memory stay bounded for a text of any length."""
    from pragmeter.encoders.tokens import cut_long_text, token_counter

    count = token_counter(tokenizer)

    def cut(values: Sequence[str]) -> list[str]:
        return [cut_long_text(value, max_length, count) for value in values]

    return cut(texts), None if pairs is None else cut(pairs)


def pick_device(device: str | torch.device | None) -> torch.device:
    """The torch device asked for (a PragmeterError, in one line, for one this machine lacks: torch would fail deep
    inside with an AssertionError), else torch's best device (pragmeter.encoders.registry.default_device)."""
    if device:
        from pragmeter.encoders.runtime import device_problem

        problem = device_problem(str(device))
        if problem:
            raise PragmeterError(f"device={problem}")
        return torch.device(device)
    from pragmeter.encoders.registry import default_device

    return torch.device(default_device())


def torch_runtime(device: str | torch.device | None, precision) -> "Runtime":
    """The Runtime of a classifier run through torch: ``precision`` a Runtime already resolved, or a precision that
    pragmeter.encoders.runtime.resolve_runtime resolves for torch on ``device`` (``auto``: fp16 on a CUDA device,
    fp32 elsewhere; None device: torch's best one, checked)."""
    from pragmeter.encoders.runtime import Runtime, resolve_runtime

    if isinstance(precision, Runtime):
        return precision
    return resolve_runtime("torch", precision, device=str(pick_device(device)), backends=("torch",),
                           purpose="a fine-tuned classifier")


class TextClassifier:
    """A fine-tuned transformers classifier run through torch as its ``runtime`` (pragmeter.encoders.runtime.Runtime:
    backend torch, a resolved precision it autocasts to, a device) says."""

    WEIGHTS_FILE = "model.safetensors"

    def __init__(self, model, tokenizer, settings: ClassifierSettings, device: str | torch.device | None = None,
                 precision="auto"):
        """``precision``: a resolved Runtime, or a precision resolved for ``device`` by :func:`torch_runtime`."""
        self.runtime = torch_runtime(device, precision)
        if self.runtime.backend != "torch":
            raise PragmeterError(f"a TextClassifier runs backend='torch', not {self.runtime.backend!r}")
        self.device = pick_device(self.runtime.device)
        self.model = model.to(self.device)
        self.tokenizer = tokenizer
        self.settings = settings
        self.truncated = 0  # inputs longer than settings.max_length seen by probabilities() (truncated to it)
        self.source = "the classifier"  # what messages name it by: the folder it was read from, once loaded

    @property
    def labels(self) -> list[str]:
        return self.settings.labels

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_encoder(cls, encoder: str, settings: ClassifierSettings, device: str | None = None,
                     seed: int = 0, precision: str = "auto") -> "TextClassifier":
        """A new classifier on a pre-trained encoder (packaged name, local folder or hub name); the
        classification head is initialised from ``seed``."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from pragmeter.encoders import resolve_encoder
        from pragmeter.encoders.registry import quiet_loading

        location = resolve_encoder(encoder)
        torch.manual_seed(seed)
        try:
            with quiet_loading():  # the new classification layer is reported missing: it is what training makes
                tokenizer = AutoTokenizer.from_pretrained(location)
                # an NLI cross-encoder's own head has its labels' rows: replaced here, then started from them
                model = AutoModelForSequenceClassification.from_pretrained(
                    location, num_labels=len(settings.labels), use_safetensors=True, ignore_mismatched_sizes=True,
                    id2label=dict(enumerate(settings.labels)), label2id={l: i for i, l in enumerate(settings.labels)})
            warm_start_head(model, Path(location), settings.labels)
        except (OSError, ValueError, RuntimeError) as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise PragmeterError(f"cannot load encoder {encoder!r} from {location} with safetensors weights "
                                 f"({first})") from None
        from pragmeter.encoders.runtime import training_runtime

        # a new classifier is one to train: it runs as training runs (encoders.runtime.training_runtime)
        return cls(model, tokenizer, settings, precision=training_runtime(precision, str(pick_device(device))))

    @classmethod
    def load(cls, folder: str | os.PathLike, device: str | None = None, precision: str = "auto") -> "TextClassifier":
        """Open a folder written by :meth:`save`, checked so that a damaged one fails in one line naming the file
        instead of loading as another model: a vocabulary file is there (else transformers builds a 5-token one),
        the labels are the model's ``id2label`` (else predictions are renamed) and the weights are exactly the
        ones the config describes (else transformers drops or re-initialises layers)."""
        from safetensors import SafetensorError
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from pragmeter.encoders.registry import quiet_loading

        folder = Path(folder)
        config_path, config, settings = read_settings(folder)
        check_id2label(config_path, config, settings)
        weights = folder / cls.WEIGHTS_FILE
        if not weights.is_file():
            raise PragmeterError(f"{folder} has no model.safetensors (pickled weights are never loaded)")
        if not any((folder / name).is_file() for name in TOKENIZER_FILES):
            raise DataError(f"{folder / 'tokenizer.json'}: missing (no vocabulary file in the folder: "
                            f"{', '.join(TOKENIZER_FILES)}); copy the whole model folder")
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder)
        except (OSError, ValueError, TypeError, KeyError, RuntimeError) as error:
            raise DataError(f"{folder / 'tokenizer.json'}: the tokenizer cannot be loaded ({first_line(error)})") from None
        try:
            with quiet_loading():  # a mismatch is refused below, in one line
                model, info = AutoModelForSequenceClassification.from_pretrained(folder, use_safetensors=True,
                                                                                 output_loading_info=True)
        except (OSError, ValueError, TypeError, KeyError, RuntimeError, SafetensorError) as error:
            raise DataError(f"{weights}: cannot be loaded with {config_path.name} ({first_line(error)})") from None
        mismatch = [f"{len(info[key])} {what} (e.g. {sorted(info[key])[0]})"
                    for key, what in (("missing_keys", "missing"), ("unexpected_keys", "not in the config"),
                                      ("mismatched_keys", "of another shape")) if info.get(key)]
        if mismatch:
            raise DataError(f"{weights}: the weights do not match {config_path.name}: {'; '.join(map(str, mismatch))}")
        model.config.id2label = dict(enumerate(settings.labels))  # a plain NLI folder's labels by pragmeter's names
        model.config.label2id = {label: index for index, label in enumerate(settings.labels)}
        check_finite_tensors(model.state_dict(), weights)
        classifier = cls(model, tokenizer, settings, device, precision)
        classifier.source = str(folder)
        return classifier

    def save(self, folder: str | os.PathLike, card: str, metrics: dict | None = None) -> Path:
        """Write the folder atomically: everything (weights, config, tokenizer, README.md card, metrics.json)
        goes to a sibling temporary folder that then replaces ``folder``."""
        from pragmeter.io.atomic import replace_folder

        self.model.config.pragmeter = asdict(self.settings)

        def write(staging: Path) -> None:
            self.model.save_pretrained(staging, safe_serialization=True)
            self.tokenizer.save_pretrained(staging)
            (staging / "README.md").write_text(card, encoding="utf-8")
            if metrics is not None:
                (staging / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")

        return replace_folder(Path(folder), write)

    # -- inference ----------------------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str], pairs: Sequence[str] | None):
        if (pairs is None) != (self.settings.input_kind == "single"):
            wanted = "(premise, hypothesis) pairs" if self.settings.input_kind == "pair" else "single texts"
            raise PragmeterError(f"this model classifies {wanted}")
        return self.tokenizer(list(texts), list(pairs) if pairs is not None else None, truncation=True,
                              max_length=self.settings.max_length, padding=True, return_tensors="pt")

    @torch.no_grad()
    def probabilities(self, texts: Sequence[str], pairs: Sequence[str] | None = None, batch_size: int = 64,
                      progress: bool = False) -> np.ndarray:
        """Class probabilities, rows in input order, columns in ``labels`` order."""
        from tqdm import tqdm

        self.model.eval()
        if not len(texts):
            return np.zeros((0, len(self.labels)), dtype=np.float32)
        texts, pairs = cut_long_inputs(self.tokenizer, self.settings.max_length, texts, pairs)
        # Batches of similar length pad less; rows go back to input order at the end.
        full = self.token_lengths(texts, pairs, truncation=False)
        self.truncated += int((full > self.settings.max_length).sum())
        order = np.argsort(np.minimum(full, self.settings.max_length), kind="stable")
        out = np.zeros((len(texts), len(self.labels)), dtype=np.float32)
        starts = range(0, len(texts), batch_size)
        for start in tqdm(starts, desc="predict", unit="batch", disable=not progress, dynamic_ncols=True):
            rows = order[start:start + batch_size]
            batch = self.tokenize([texts[i] for i in rows],
                                  None if pairs is None else [pairs[i] for i in rows]).to(self.device)
            with self.autocast():
                logits = self.model(**batch).logits
            out[rows] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        return check_probabilities(out, self.source)

    def token_lengths(self, texts: Sequence[str], pairs: Sequence[str] | None = None,
                      truncation: bool = True) -> np.ndarray:
        """Tokens per input after truncation (what a batch of it is padded to); ``truncation=False``: before it."""
        encoded = self.tokenizer(list(texts), list(pairs) if pairs is not None else None, truncation=truncation,
                                 max_length=self.settings.max_length if truncation else None, verbose=False)
        return np.array([len(ids) for ids in encoded["input_ids"]], dtype=np.int64)

    def predict(self, texts: Sequence[str], pairs: Sequence[str] | None = None, batch_size: int = 64,
                progress: bool = False) -> list[str]:
        return self.decide(self.probabilities(texts, pairs, batch_size, progress))

    def decide(self, probabilities: np.ndarray) -> list[str]:
        """Labels of rows of class probabilities, with the folder's decision bias (:func:`decide`)."""
        return decide(probabilities, self.labels, self.settings.decision_bias)

    @property
    def precision(self) -> str:
        """The precision the forward pass runs in (fp32, bf16 or fp16: what :meth:`autocast` does; part of an answer
        cache's key); set, it replaces the runtime's (the bf16 check of a release runs one folder both ways)."""
        return self.runtime.precision

    @precision.setter
    def precision(self, value: str) -> None:
        from dataclasses import replace

        from pragmeter.encoders.runtime import LONG_NAMES

        if value not in LONG_NAMES:
            raise InvalidParameter("precision", value, choices=tuple(LONG_NAMES))
        self.runtime = replace(self.runtime, precision=value, reason="as asked")

    def autocast(self):
        """Autocast to :attr:`precision` (disabled in fp32)."""
        dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(self.precision)
        return torch.autocast(self.device.type, dtype=dtype or torch.bfloat16, enabled=dtype is not None)
