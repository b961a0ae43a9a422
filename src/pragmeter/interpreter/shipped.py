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
from pragmeter.interpreter.runtime import BF16_KEY

HEAD_KEY = "head_weights"
HEAD_FILE = "head.safetensors"
HEAD_LABELS = "labels"  # the head file's metadata entry: its outputs' labels in order, covered by its sha256
SHARD_BYTES = 3 * 2**20 - 64 * 2**10  # under 3 MiB: the package's size budget per file
DEFAULT_RANK = 32


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
    from pragmeter.encoders.low_rank import apply_changes

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
