"""The shipped form of a fine-tuned pair classifier: a few MB of low-rank changes over an installable base encoder.

A ``classifier train`` folder holds the whole fine-tuned weights (90 MB for MiniLM, 420 MB for mpnet). What ships in
the package instead is what training changed, over the base encoder that installs on its own:

- ``config.json``: the transformers config (architecture, labels) with the ``pragmeter`` settings, plus
  ``encoder_weights`` (the shards below, with sha256) and ``head_weights`` (the classification layer's file);
- ``encoder-N.safetensors``: each changed matrix of the base encoder as rank-R factors ``NAME.up`` (out × R) and
  ``NAME.down`` (R × in) of its change (truncated SVD, fp16), other changed tensors (biases, layer norms) whole; shards
  under ``SHARD_BYTES``;
- ``head.safetensors``: the layers on top of the encoder (the classifier, fp32), with the labels of its outputs in
  order in its metadata (``labels``, a JSON list): the head's sha256 in the config covers them, so labels renamed in
  the config alone (``id2label`` and the settings permuted alike) are refused, never read as the model's;
- ``README.md`` (the model card) and ``metrics.json``.

Loading goes the same path as ImpScore's fine-tuned layers (:func:`pragmeter.encoders.finetuned.finetuned_encoder`):
on first use the base folder is copied into the cache with the changes applied, once per set of shards; the
classification model is then read from that folder with the head's tensors put in place, and every tensor is
checked (a missing, damaged or mis-shaped one is a DataError naming the file).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pragmeter.errors import DataError, PragmeterError

HEAD_KEY = "head_weights"
HEAD_FILE = "head.safetensors"
HEAD_LABELS = "labels"  # the head file's metadata entry: its outputs' labels in order, covered by its sha256
SHARD_BYTES = 3 * 2**20 - 64 * 2**10  # under 3 MiB: the package's size budget per file
DEFAULT_RANK = 32
BF16_KEY = "bf16_check"  # bf16 against fp32 on validation pairs, measured when the folder is written
# The bounds bf16 must keep to be chosen by ``auto`` (pragmeter.encoders.runtime: ImpScore's bounds, read on the
# interpreter's outputs): every label probability and each reading's score (P(implied) + P(explicit)) within
# MAX_ABS_DIFF of fp32's, and the same label (argmax) on every checked pair.
BF16_MIN_AGREEMENT = 1.0
# What a folder's recorded check may claim for ``auto`` to believe it (the config is someone else's file): measured on
# at least BF16_MIN_PAIRS pairs, through a path that runs bf16 (``openvino`` or ``torch``), each figure a finite number
# in its range, and some change seen (bf16 that equals fp32 to five decimals on every pair was not run in bf16).
BF16_MIN_PAIRS = 256
BF16_PATHS = ("openvino", "torch")


def is_shipped(folder: Path) -> bool:
    """Whether a model folder is in the shipped form (its config lists encoder shards, no whole weights)."""
    from pragmeter.encoders.finetuned import WEIGHTS_KEY

    try:
        config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and WEIGHTS_KEY in config


def base_prefix(model) -> str:
    """The name under which a transformers classification model holds its encoder (``bert``, ``mpnet``…)."""
    return model.base_model_prefix


def split_weights(model) -> tuple[dict, dict]:
    """(encoder tensors named as in the base encoder's folder, the other tensors: the head on top of it)."""
    prefix = base_prefix(model) + "."
    encoder, head = {}, {}
    for name, tensor in model.state_dict().items():
        (encoder if name.startswith(prefix) else head)[name[len(prefix):] if name.startswith(prefix) else name] = tensor
    return encoder, head


def changes(base: dict, encoder: dict, rank: int) -> dict:
    """The encoder tensors that differ from ``base``, each matrix's change as rank-``rank`` factors (fp16); tensors
    the base lacks (none in a classifier over its own base) are refused."""
    from pragmeter.encoders.low_rank import fit_bytes, low_rank_change

    changed = {}
    for name, tensor in encoder.items():
        if name not in base:
            if name.endswith("position_ids"):  # a buffer some architectures keep and their folders omit
                continue
            raise PragmeterError(f"encoder tensor {name!r} is not in the base encoder")
        if tensor.shape != base[name].shape:
            raise PragmeterError(f"encoder tensor {name!r} has shape {tuple(tensor.shape)}, the base's "
                                 f"{tuple(base[name].shape)}")
        if not tensor.detach().cpu().float().equal(base[name].float()):
            changed[name] = tensor
    # each factor under the package's per-file budget: the word embeddings' change keeps its largest directions only
    return fit_bytes(low_rank_change(base, changed, rank), SHARD_BYTES)


def base_weights(base_encoder: str) -> dict:
    from safetensors.torch import load_file

    from pragmeter.encoders.finetuned import WEIGHTS_FILE
    from pragmeter.encoders.registry import require_encoder

    return load_file(str(Path(require_encoder(base_encoder)) / WEIGHTS_FILE))


def compress(classifier, rank: int = DEFAULT_RANK) -> tuple[dict, dict]:
    """(the encoder's changes as shipped: :func:`changes`, the head tensors) of a fine-tuned classifier; the
    classifier's own encoder is replaced by the compressed one, so what is measured next is what ships."""
    from pragmeter.encoders.finetuned import apply_changes

    base = base_weights(classifier.settings.base_encoder)
    encoder, head = split_weights(classifier.model)
    factors = changes(base, encoder, rank)
    rebuilt = {name: base[name].clone() for name in encoder if name in base}
    apply_changes(rebuilt, factors, "the compressed encoder", classifier.settings.base_encoder)
    classifier.model.base_model.load_state_dict(rebuilt, strict=False)
    return factors, head


def folder_config(classifier) -> dict:
    """The config a model folder of ``classifier`` holds: its transformers config with the ``pragmeter`` settings,
    without the fields that describe one machine's copy (path, versions, dtype)."""
    from dataclasses import asdict

    classifier.model.config.pragmeter = asdict(classifier.settings)
    config = classifier.model.config.to_dict()
    for key in ("_name_or_path", "transformers_version", "dtype", "torch_dtype"):
        config.pop(key, None)
    return config


def save_shipped(classifier, factors: dict, head: dict, folder: str | os.PathLike, card: str,
                 metrics: dict | None = None, bf16: dict | None = None) -> Path:
    """Write the shipped form (module notes) atomically."""
    from safetensors.torch import save_file

    from pragmeter.data.root import sha256_of
    from pragmeter.encoders.finetuned import WEIGHTS_KEY, shard_files
    from pragmeter.io.atomic import replace_folder

    config = folder_config(classifier)

    def write(staging: Path) -> None:
        shards = shard_files(factors, staging, "encoder", "float16", SHARD_BYTES)
        save_file({k: v.detach().cpu().float().contiguous() for k, v in head.items()}, str(staging / HEAD_FILE),
                  metadata={HEAD_LABELS: json.dumps(list(classifier.settings.labels))})
        config[WEIGHTS_KEY] = shards
        config[HEAD_KEY] = {"file": HEAD_FILE, "sha256": sha256_of(staging / HEAD_FILE)}
        if bf16 is not None:
            config[BF16_KEY] = bf16
        (staging / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        (staging / "README.md").write_text(card, encoding="utf-8")
        if metrics is not None:
            (staging / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")

    return replace_folder(Path(folder), write)


def build_on(encoder_folder, model_config, base_name: str, config_path):
    """(tokenizer, model, loading info) of the classification model ``model_config`` describes, built on the encoder
    folder's weights; its head is left unset on purpose (the caller puts it in place). A DataError naming
    ``config_path`` when it cannot be built."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from pragmeter.classify.model import first_line
    from pragmeter.encoders.registry import quiet_loading

    try:
        with quiet_loading():  # the head is missing from the base on purpose: the caller loads it next
            tokenizer = AutoTokenizer.from_pretrained(encoder_folder)
            model, info = AutoModelForSequenceClassification.from_pretrained(
                encoder_folder, config=model_config, use_safetensors=True, output_loading_info=True)
    except (OSError, ValueError, TypeError, KeyError, RuntimeError) as error:
        raise DataError(f"{config_path}: the model cannot be built on {base_name} ({first_line(error)})") from None
    return tokenizer, model, info


def load_shipped(folder: str | os.PathLike, device: str | None = None, precision: str = "auto"):
    """A :class:`TextClassifier` from a shipped folder: the base encoder with the changes applied (built once in the
    cache), the head's tensors in place, the labels checked against the model's."""
    import torch

    from pragmeter.classify.model import TextClassifier, base_encoder, check_finite_tensors, pick_device, read_settings
    from pragmeter.encoders.finetuned import WEIGHTS_KEY, check_shards, finetuned_encoder

    folder = Path(folder)
    config_path, config, settings = read_settings(folder)
    where = str(config_path)
    head_entry = config.get(HEAD_KEY)
    head_path = check_shards(folder, [head_entry] if isinstance(head_entry, dict) else head_entry,
                             f"{where} ({HEAD_KEY})")[0]
    settings.base_encoder = base_encoder(folder, settings)  # a relative folder is the model folder's
    encoder_folder = finetuned_encoder(settings.base_encoder, folder, config.get(WEIGHTS_KEY), where)
    model_config = transformers_config(config_path, config, settings)
    head = read_head(head_path, settings.labels, config_path)
    tokenizer, model, info = build_on(encoder_folder, model_config, settings.base_encoder, config_path)
    missing = set(info.get("missing_keys") or ())
    if missing != set(head):
        raise DataError(f"{head_path}: holds {sorted(head)[:3]}…, the model on {settings.base_encoder} lacks "
                        f"{sorted(missing)[:3]}… (a head for another architecture)")
    state = model.state_dict()
    for name, tensor in head.items():
        if tuple(tensor.shape) != tuple(state[name].shape):
            raise DataError(f"{head_path}: tensor {name!r} has shape {tuple(tensor.shape)}, the model's "
                            f"{tuple(state[name].shape)}")
    with torch.no_grad():
        model.load_state_dict({name: tensor.to(state[name].dtype) for name, tensor in head.items()}, strict=False)
    # the base encoder's own tensors too (the shards' were checked when applied): no tensor of the model is NaN
    check_finite_tensors(model.base_model.state_dict(), f"{encoder_folder} (base encoder {settings.base_encoder!r})")
    classifier = TextClassifier(model, tokenizer, settings, pick_device(device), precision)
    classifier.source = str(folder)
    return classifier


def read_head(head_path: Path, labels: list[str], config_path: Path) -> dict:
    """The tensors of a shipped folder's head file (checked against its sha256 already), each finite, the file written
    for ``labels`` (its metadata's, which its sha256 covers): a DataError naming the file otherwise."""
    from safetensors import SafetensorError, safe_open
    from safetensors.torch import load_file

    from pragmeter.classify.model import check_finite_tensors, first_line

    try:
        head = load_file(str(head_path))
        with safe_open(str(head_path), "pt") as handle:
            recorded = (handle.metadata() or {}).get(HEAD_LABELS)
    except (OSError, SafetensorError) as error:
        raise DataError(f"{head_path}: not readable safetensors ({first_line(error)})") from None
    check_finite_tensors(head, head_path)
    if recorded is not None and recorded != json.dumps(list(labels)):
        raise DataError(f"{config_path}: labels {labels} are not the ones {head_path.name} was written with "
                        f"({recorded}; its sha256 covers them): predictions would be renamed")
    return head


NOT_MODEL_KEYS = ("pragmeter", BF16_KEY, HEAD_KEY)  # a folder config's entries that are pragmeter's, not transformers'


def transformers_config(config_path: Path, config: dict, settings, extra_keys: tuple[str, ...] = ()):
    """The transformers config of a model folder's ``config`` (pragmeter's own entries, and ``extra_keys``, left
    out), its labels checked against the ``pragmeter`` settings': a DataError naming ``config_path`` otherwise."""
    from transformers import AutoConfig

    from pragmeter.classify.model import check_id2label, first_line
    from pragmeter.encoders.finetuned import WEIGHTS_KEY

    check_id2label(config_path, config, settings)
    left_out = (WEIGHTS_KEY, *NOT_MODEL_KEYS, *extra_keys)
    try:
        return AutoConfig.for_model(**{k: v for k, v in config.items() if k not in left_out})
    except (ValueError, TypeError, KeyError) as error:
        raise DataError(f"{config_path}: not a transformers model config ({first_line(error)})") from None


def bf16_check(classifier, premises: list[str], hypotheses: list[str], meant: list[int], fp32,
               batch_size: int = 64) -> dict:
    """bf16 autocast on the CPU on these pairs against their ``fp32`` probabilities (:func:`bf16_bounds`)."""
    saved = classifier.precision
    try:
        classifier.precision = "bf16"
        bf16 = classifier.probabilities(premises, hypotheses, batch_size)
    finally:
        classifier.precision = saved
    return bf16_bounds(fp32, bf16, meant)


def bf16_bounds(fp32, bf16, meant: list[int]) -> dict:
    """How far bf16 probabilities (rows of pairs) lie from fp32's: the largest change of a label probability and of a
    pair's score (the sum of the ``meant`` label columns: P(implied) + P(explicit) for an interpreter), the share of
    pairs whose label (argmax) stays, and whether all are within the bounds (module notes)."""
    import numpy as np

    from pragmeter.encoders.runtime import MAX_ABS_DIFF

    fp32, bf16 = np.asarray(fp32, dtype=np.float64), np.asarray(bf16, dtype=np.float64)
    probability = float(np.abs(fp32 - bf16).max()) if len(fp32) else 0.0
    score = float(np.abs(fp32[:, meant].sum(1) - bf16[:, meant].sum(1)).max()) if len(fp32) else 0.0
    agreement = float((fp32.argmax(1) == bf16.argmax(1)).mean()) if len(fp32) else 1.0
    return {"max_abs_probability_diff": round(probability, 5), "max_abs_score_diff": round(score, 5),
            "label_agreement": round(agreement, 5), "pairs": len(fp32),
            "bounds": {"max_abs_probability_diff": MAX_ABS_DIFF, "max_abs_score_diff": MAX_ABS_DIFF,
                       "label_agreement": BF16_MIN_AGREEMENT},
            "within_bounds": bool(len(fp32)) and max(probability, score) <= MAX_ABS_DIFF
            and agreement >= BF16_MIN_AGREEMENT}


BACKENDS = ("openvino", "torch")  # how a fine-tuned classifier runs (pragmeter.encoders.runtime.resolve_runtime)


def recorded_bf16_check(folder: Path) -> bool | str:
    """Whether the folder's config records a bf16 check (``bf16_check``) within today's bounds: its figures read
    again (a folder written under other bounds is judged by these), each a number, and the claim one a measurement
    makes (:func:`bf16_claim_problem`; an implausible one is warned about); NOT_CHECKED where it records none (no
    check measured, as for a freshly trained classifier), False where its config cannot be read."""
    from pragmeter.encoders.runtime import MAX_ABS_DIFF, NOT_CHECKED

    try:
        check = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8")).get(BF16_KEY)
    except (OSError, ValueError, AttributeError):
        return False
    if check is None or isinstance(check, dict) and "pairs" in check and not check["pairs"]:  # measured on none
        return NOT_CHECKED

    def figure(name: str, default=None):
        value = check.get(name, default)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    if not isinstance(check, dict) or check.get("within_bounds") is not True:
        return False
    # a check written before each probability was bounded has only the score's figure: judged by that
    changes = [figure("max_abs_score_diff"), figure("max_abs_probability_diff", 0.0)]
    agreement = figure("label_agreement")
    if not (None not in changes and agreement is not None and max(changes) <= MAX_ABS_DIFF
            and agreement >= BF16_MIN_AGREEMENT):
        return False
    problem = bf16_claim_problem(check)
    if problem:
        import logging

        logging.getLogger("pragmeter").warning("%s: its bf16_check claims bf16 within bounds, but %s; it runs in "
                                               "fp32", Path(folder) / "config.json", problem)
        return False
    return True


def bf16_claim_problem(check: dict) -> str | None:
    """Why a recorded bf16 check is not a claim a measurement makes (None when it is): too few pairs, an unknown path,
    a figure that is not a finite number in its range, or no change at all."""
    import math

    pairs, path = check.get("pairs"), check.get("path")
    if not isinstance(pairs, int) or isinstance(pairs, bool) or pairs < BF16_MIN_PAIRS:
        return f"it was measured on {pairs!r} pairs (at least {BF16_MIN_PAIRS} are needed)"
    if path not in BF16_PATHS:
        return f"its path {path!r} is not one that runs bf16 ({', '.join(BF16_PATHS)})"
    figures = {name: check.get(name) for name in ("max_abs_probability_diff", "max_abs_score_diff",
                                                  "label_agreement") if name in check}
    for name, value in figures.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) \
                or not 0 <= value <= (1 if name == "label_agreement" else 2):
            return f"{name} is {value!r}, not a finite number in its range"
    if not figures.get("max_abs_score_diff"):
        return "it records no change at all from fp32 (bf16 rounds every probability)"
    return None


def interpreter_runtime(folder: Path, backend: str = "auto", precision: str = "auto", device: str | None = None,
                        threads: int | str | None = None):
    """How the classifier of ``folder`` runs here, resolved by :func:`pragmeter.encoders.runtime.resolve_runtime`
    (the one place that decides): ``auto`` is OpenVINO on a CPU (torch on a GPU ``device``), in bf16 only where the
    CPU has bf16 instructions and the folder's config records a bf16 check within bounds, else fp32 (fp16 on a CUDA
    device)."""
    from pragmeter.encoders.runtime import resolve_runtime

    return resolve_runtime(backend, precision, threads, device=device, bf16_check=recorded_bf16_check(folder),
                           backends=BACKENDS)
