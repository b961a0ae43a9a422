"""The peft form of a shipped interpreter: its low-rank changes as a LoRA adapter that ``peft`` opens.

The shipped form (:mod:`pragmeter.interpreter.shipped`) keeps each changed matrix of the base encoder as factors
``NAME.up`` (out × R) and ``NAME.down`` (R × in), the other changed tensors whole, and the classification layer. The
very same numbers make a peft LoRA adapter for sequence classification (``PeftModel.from_pretrained(base, folder)``):

- ``adapter_config.json``: ``peft_type`` LORA, ``task_type`` SEQ_CLS, ``base_model_name_or_path`` the base encoder's
  Hub name, ``r`` the rank most factors have and ``lora_alpha`` = ``r`` (scaling 1: the factors are the change
  itself), ``rank_pattern`` and ``alpha_pattern`` (equal) for the modules at another rank (the word embeddings, cut
  to fit a shard; the token types, two rows), ``target_modules`` exactly the changed matrices' modules, ``bias``
  ``lora_only`` (each target's bias, stored whole), ``modules_to_save`` the modules whose changed tensors are stored
  whole (layer norms) and the classifier;
- ``adapter_model.safetensors``: the tensors under peft's names, ``base_model.model.`` then the module:
  ``lora_A.weight`` = down and ``lora_B.weight`` = up for a linear layer; ``lora_embedding_A`` = upᵀ and
  ``lora_embedding_B`` = downᵀ for an embedding (peft keeps those transposed: the change is (B·A)ᵀ);
  ``base_layer.bias`` for a target's bias; the module's own tensor names for ``modules_to_save`` (each such module
  whole: its unchanged tensors are the base's). Factors, biases and norms in fp16 as shipped, the classifier in fp32;
  the labels of its outputs in the file's metadata (``labels``), as the shipped head records them;
- ``config.json``: the transformers config with the ``pragmeter`` settings (what the base classification model is
  built with: labels, number of outputs) and ``adapter_files``, both peft files with their sha256;
- ``README.md`` (the card: how to open it with peft) and the shipped folder's ``metrics.json``.

peft reads one weights file, so ``adapter_model.safetensors`` holds every factor and is larger than the package's
per-file budget (``SHARD_BYTES``): the packaged interpreters stay in the shipped form, and this form is written on
demand (:func:`export_adapter`, ``pragmeter interpret export --format peft``).

Loading (:func:`load_adapter`, and through it :func:`pragmeter.classify.loading.load_classifier` and
``Interpreter.load``): the files are checked against their sha256, and every tensor is read and checked before
anything is applied: finite, one of the names above, a module the model on the base encoder has and the adapter
config lists, the shapes its weight and rank imply. A bad file is a DataError naming it. Then the adapter is applied
through peft where it is installed (``PeftModel.from_pretrained`` then ``merge_and_unload``), the merged weights
compared with the file's own numbers; by pragmeter's own reader otherwise (the factors added to the base weights as
:func:`pragmeter.encoders.low_rank.apply_changes` adds the shipped ones).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from pathlib import Path

from pragmeter.errors import DataError, PragmeterError

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
ADAPTER_KEY = "adapter_files"  # config.json: the two peft files with their sha256
PREFIX = "base_model.model."  # peft's keys name the wrapped model so
LORA_A, LORA_B = ".lora_A.weight", ".lora_B.weight"  # a linear layer's factors: A (r × in), B (out × r)
EMBEDDING_A, EMBEDDING_B = ".lora_embedding_A", ".lora_embedding_B"  # an embedding's: A (r × rows), B (dim × r)
TARGET_BIAS = ".base_layer.bias"  # bias="lora_only": a target's own bias, on the layer peft wraps
HEAD_MODULES = ("classifier", "score")  # what peft adds to modules_to_save for SEQ_CLS
# LoRA variants pragmeter's reader does not apply: an adapter that turns one on is refused, not read as plain LoRA
UNREAD_FEATURES = ("use_dora", "fan_in_fan_out", "lora_bias", "layers_to_transform", "trainable_token_indices",
                   "target_parameters", "layer_replication")
READERS = ("auto", "peft", "pragmeter")  # who applies the adapter: peft where installed, else pragmeter; or as named
MODULE_NAME = re.compile(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*")
# peft's merged weights against the file's numbers (fp32 sums in another order): the largest difference within
# MERGE_ATOL + MERGE_RTOL × the tensor's largest value
MERGE_RTOL, MERGE_ATOL = 1e-5, 1e-6


def is_adapter(folder: str | os.PathLike) -> bool:
    """Whether a model folder is in the peft form (an ``adapter_config.json``, a link included: refused when read)."""
    path = Path(folder) / ADAPTER_CONFIG
    return path.is_file() or path.is_symlink()


def peft_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("peft") is not None


# -- writing -------------------------------------------------------------------------------------------------------
def peft_form(factors: dict, head: dict, model, base: dict, base_name: str) -> tuple[dict, dict]:
    """(adapter_model.safetensors' tensors under peft's names, adapter_config.json) of the shipped changes ``factors``
    (encoder tensor names: ``NAME.up``/``NAME.down`` pairs and whole tensors) and ``head`` (the model's names) of the
    classification model ``model`` (its modules' kinds and names), ``base`` the base encoder's tensors (a module
    stored whole takes its unchanged tensors from there), ``base_name`` its Hub name or folder."""
    import torch

    from pragmeter.encoders.low_rank import DOWN, UP

    prefix = model.base_model_prefix + "."
    modules = dict(model.named_modules())
    tensors, ranks = {}, {}
    for name in sorted(n for n in factors if n.endswith(UP)):
        target = name[:-len(UP)]
        module = prefix + target.rpartition(".")[0]
        layer = modules.get(module)
        if not target.endswith(".weight") or not isinstance(layer, (torch.nn.Linear, torch.nn.Embedding)):
            raise PragmeterError(f"the change of {target!r} is not a linear or embedding layer's weight: LoRA has no "
                                 f"form for it")
        up, down = factors[name], factors[target + DOWN]
        ranks[module] = int(up.shape[1])
        if isinstance(layer, torch.nn.Embedding):
            tensors[PREFIX + module + EMBEDDING_A] = up.t().contiguous()
            tensors[PREFIX + module + EMBEDDING_B] = down.t().contiguous()
        else:
            tensors[PREFIX + module + LORA_A], tensors[PREFIX + module + LORA_B] = down.contiguous(), up.contiguous()
    if not ranks:
        raise PragmeterError("no matrix of the encoder changed: there is no LoRA adapter to write")
    whole = {name: tensor for name, tensor in factors.items() if not name.endswith((UP, DOWN))}

    def stored(relative: str):
        tensor = whole.get(relative, base.get(relative))
        if tensor is None:
            raise PragmeterError(f"tensor {relative!r} is neither changed nor in the base encoder")
        return tensor.contiguous()

    biased = [module for module in sorted(ranks) if getattr(modules[module], "bias", None) is not None]
    for module in biased:  # peft's bias="lora_only" stores every target's bias, changed or not
        tensors[PREFIX + module + TARGET_BIAS] = stored(module[len(prefix):] + ".bias")
    saved = sorted({(prefix + name).rpartition(".")[0] for name in whole} - set(ranks))
    for module in saved:  # a module to save is stored whole: peft loads every tensor of it
        if module not in modules:
            raise PragmeterError(f"changed tensors of {module!r}, which the model does not have")
        for tensor_name in modules[module].state_dict():
            tensors[f"{PREFIX}{module}.{tensor_name}"] = stored(f"{module[len(prefix):]}.{tensor_name}")
    head_modules = sorted({name.split(".")[0] for name in head})
    for name, tensor in head.items():
        tensors[PREFIX + name] = tensor.detach().cpu().float().contiguous()
    rank = Counter(ranks[module] for module in sorted(ranks)).most_common(1)[0][0]
    other = {module: value for module, value in sorted(ranks.items()) if value != rank}
    config = {"peft_type": "LORA", "task_type": "SEQ_CLS", "base_model_name_or_path": base_name,
              "r": rank, "lora_alpha": rank, "rank_pattern": other, "alpha_pattern": dict(other),
              "target_modules": sorted(ranks), "modules_to_save": saved + head_modules,
              "bias": "lora_only" if biased else "none", "lora_dropout": 0.0, "fan_in_fan_out": False,
              "use_rslora": False, "use_dora": False, "init_lora_weights": True, "inference_mode": True}
    return tensors, config


def write_adapter(config: dict, factors: dict, head: dict, model, folder: str | os.PathLike, card: str,
                  metrics: dict | None = None) -> Path:
    """Write the peft form (module notes) of the shipped changes ``factors`` and ``head`` of the classification
    ``model`` whose folder config (transformers config with the ``pragmeter`` settings) is ``config``, atomically."""
    from safetensors.torch import save_file

    from pragmeter.data.root import sha256_of
    from pragmeter.encoders.finetuned import WEIGHTS_KEY
    from pragmeter.interpreter.shipped import HEAD_KEY, HEAD_LABELS, base_weights
    from pragmeter.io.atomic import replace_folder
    from pragmeter.io.model_card import base_model_id

    settings = config["pragmeter"]
    base_name = base_model_id(settings["base_encoder"]) or settings["base_encoder"]
    tensors, adapter_config = peft_form(factors, head, model, base_weights(settings["base_encoder"]), base_name)
    # the shipped form's config less its shard lists; a recorded bf16 check stays: the same model, the same numbers
    folder_config = {key: value for key, value in config.items() if key not in (WEIGHTS_KEY, HEAD_KEY)}

    def write(staging: Path) -> None:
        save_file(tensors, str(staging / ADAPTER_WEIGHTS),
                  metadata={"format": "pt", HEAD_LABELS: json.dumps(list(settings["labels"]))})
        (staging / ADAPTER_CONFIG).write_text(json.dumps(adapter_config, indent=2, sort_keys=True) + "\n",
                                              encoding="utf-8")
        folder_config[ADAPTER_KEY] = [{"file": name, "sha256": sha256_of(staging / name)}
                                      for name in (ADAPTER_CONFIG, ADAPTER_WEIGHTS)]
        (staging / "config.json").write_text(json.dumps(folder_config, indent=2, sort_keys=True) + "\n",
                                             encoding="utf-8")
        (staging / "README.md").write_text(card, encoding="utf-8")
        if metrics is not None:
            (staging / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")

    return replace_folder(Path(folder), write)


def save_adapter(classifier, factors: dict, head: dict, folder: str | os.PathLike, card: str,
                 metrics: dict | None = None) -> Path:
    """:func:`write_adapter` of what :func:`pragmeter.interpreter.shipped.compress` returned for ``classifier``."""
    from pragmeter.interpreter.shipped import folder_config

    return write_adapter(folder_config(classifier), factors, head, classifier.model, folder, card, metrics)


def export_adapter(source: str | os.PathLike | None, output: str | os.PathLike) -> Path:
    """Write the shipped interpreter ``source`` (a packaged name or a shipped folder; None: the default) in the peft
    form to ``output``: the shipped folder's files checked as loading checks them (each against its sha256, every
    tensor finite, the head written for the config's labels), its factors and head written under peft's names with
    a card, and its metrics.json alongside."""
    from pragmeter.classify.card import adapter_card
    from pragmeter.classify.model import base_encoder, check_finite_tensors, read_settings
    from pragmeter.encoders.finetuned import WEIGHTS_KEY, check_shards, folder_file, read_shards
    from pragmeter.interpreter.hub import resolve_interpreter
    from pragmeter.interpreter.shipped import HEAD_KEY, is_shipped, read_head, transformers_config

    folder = resolve_interpreter(source)
    if not is_shipped(folder):
        raise PragmeterError(f"{folder} is not in the shipped form (low-rank changes over a base encoder, as "
                             f"`pragmeter interpret ship` writes them): only that form has LoRA factors to write")
    config_path, config, settings = read_settings(folder)
    shards = check_shards(folder, config.get(WEIGHTS_KEY), str(config_path))
    head_entry = config.get(HEAD_KEY)
    head = read_head(check_shards(folder, [head_entry] if isinstance(head_entry, dict) else head_entry,
                                  f"{config_path} ({HEAD_KEY})")[0], settings.labels, config_path)
    factors, where_of = read_shards(shards)
    for path in sorted(set(where_of.values())):
        check_finite_tensors({name: tensor for name, tensor in factors.items() if where_of[name] == path}, path)
    settings.base_encoder = base_encoder(folder, settings)  # a folder relative to the shipped one: its full path
    model = skeleton(transformers_config(config_path, config, settings), config_path)
    metrics = None
    if (folder / "metrics.json").is_file() and not (folder / "metrics.json").is_symlink():
        try:
            metrics = json.loads(folder_file(folder, "metrics.json", str(folder)).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            metrics = None
    name = str(source) if source is not None else folder.name
    config = {**config, "pragmeter": {**config["pragmeter"], "base_encoder": settings.base_encoder}}
    return write_adapter(config, factors, head, model, output, adapter_card(name, settings, folder),
                         metrics if isinstance(metrics, dict) else None)


def skeleton(model_config, where: str | os.PathLike):
    """The classification model of ``model_config`` without weights (on the meta device): its modules' kinds, names
    and tensor shapes, at no cost of reading or initialising weights."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from pragmeter.classify.model import first_line

    try:
        with torch.device("meta"):
            return AutoModelForSequenceClassification.from_config(model_config)
    except (ValueError, TypeError, KeyError, RuntimeError) as error:
        raise DataError(f"{where}: the model cannot be built ({first_line(error)})") from None


# -- reading -------------------------------------------------------------------------------------------------------
def adapter_files(folder: Path, config: dict, config_path: Path) -> tuple[Path, Path]:
    """(adapter_config.json, adapter_model.safetensors) of an adapter folder, as its config's ``adapter_files`` list
    them, each a regular file inside the folder (never a link) with the sha256 recorded there."""
    from pragmeter.data.root import sha256_of
    from pragmeter.encoders.finetuned import folder_file

    entries = config.get(ADAPTER_KEY)
    names = (ADAPTER_CONFIG, ADAPTER_WEIGHTS)
    if not (isinstance(entries, list) and all(isinstance(e, dict) and all(isinstance(e.get(k), str)
                                                                           for k in ("file", "sha256"))
                                              for e in entries)
            and sorted(e["file"] for e in entries) == sorted(names)):
        raise DataError(f"{config_path}: '{ADAPTER_KEY}' must list {{'file', 'sha256'}} for {' and '.join(names)}, "
                        f"got {entries!r}")
    digests = {entry["file"]: entry["sha256"] for entry in entries}
    paths = []
    for name in names:
        if (folder / name).is_symlink():
            raise DataError(f"{folder / name}: a link, not the file itself; refused")
        path = folder_file(folder, name, f"{config_path}: {ADAPTER_KEY}")
        if sha256_of(path) != digests[name]:
            raise DataError(f"{path}: sha256 differs from {config_path}'s {ADAPTER_KEY} entry (damaged or replaced)")
        paths.append(path)
    return paths[0], paths[1]


def read_adapter_config(path: Path, base_names: list[str]) -> dict:
    """The LoRA settings of ``adapter_config.json``, each checked (a DataError naming the file and the field): a LoRA
    adapter for sequence classification over one of ``base_names``, ranks and alphas positive numbers, module names
    plain names, none of the LoRA variants pragmeter does not apply (``UNREAD_FEATURES``)."""
    from pragmeter.classify.model import read_json_object

    config = read_json_object(path)

    def problem(field: str, what: str) -> DataError:
        return DataError(f"{path}: '{field}' is {config.get(field)!r}; {what}")

    def positive(value, whole: bool) -> bool:
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
            return False
        return 0 < value < 1e12 if isinstance(value, int) else math.isfinite(value) and value > 0  # no float overflow

    if config.get("peft_type") != "LORA":
        raise problem("peft_type", "pragmeter reads LoRA adapters (LORA)")
    if config.get("task_type") != "SEQ_CLS":
        raise problem("task_type", "an interpreter is a sequence classifier (SEQ_CLS)")
    if config.get("base_model_name_or_path") not in base_names:
        raise problem("base_model_name_or_path", f"the folder's config builds the model on {base_names[0]!r}")
    if not positive(config.get("r"), True):
        raise problem("r", "the rank must be a positive whole number")
    if not positive(config.get("lora_alpha"), False):
        raise problem("lora_alpha", "it must be a positive number")
    for field, whole in (("rank_pattern", True), ("alpha_pattern", False)):
        pattern = config.get(field) or {}
        if not isinstance(pattern, dict) or not all(isinstance(k, str) and MODULE_NAME.fullmatch(k)
                                                    and positive(v, whole) for k, v in pattern.items()):
            raise problem(field, "it must map module names to positive numbers")
        config[field] = pattern
    targets = config.get("target_modules")
    if not (isinstance(targets, list) and targets and all(isinstance(t, str) and MODULE_NAME.fullmatch(t)
                                                          for t in targets) and len(set(targets)) == len(targets)):
        raise problem("target_modules", "pragmeter reads a list of distinct module names")
    saved = config.get("modules_to_save") or []
    if not (isinstance(saved, list) and all(isinstance(m, str) and MODULE_NAME.fullmatch(m) for m in saved)):
        raise problem("modules_to_save", "it must be a list of module names")
    config["modules_to_save"] = saved
    if config.get("bias", "none") not in ("none", "lora_only"):
        raise problem("bias", "pragmeter reads 'none' or 'lora_only' (the biases of the adapted layers)")
    if not isinstance(config.get("use_rslora", False), bool):
        raise problem("use_rslora", "it must be true or false")
    for field in UNREAD_FEATURES:
        if config.get(field) not in (None, False, [], {}, ""):
            raise problem(field, "pragmeter reads plain LoRA adapters, without it")
    return config


def pattern_value(pattern: dict, module: str, default):
    """``pattern``'s value for ``module`` (a key naming it or a dotted tail of its name, as peft matches plain names),
    else ``default``."""
    if module in pattern:
        return pattern[module]
    for key, value in pattern.items():
        if module.endswith("." + key):
            return value
    return default


def read_adapter(path: Path, adapter_config: dict, model, labels: list[str], base: str) -> tuple[dict, dict]:
    """(the encoder's changes under the shipped form's names: ``NAME.up``/``NAME.down`` with the adapter's scaling in
    ``up``, and whole tensors; the tensors outside the encoder: the head) of ``adapter_model.safetensors`` for the
    classification ``model`` on ``base``. Every tensor is checked (module notes): a DataError naming the file and the
    tensor otherwise."""
    import torch
    from safetensors import SafetensorError, safe_open
    from safetensors.torch import load_file

    from pragmeter.classify.model import check_finite_tensors, first_line
    from pragmeter.encoders.low_rank import DOWN, UP
    from pragmeter.interpreter.shipped import HEAD_LABELS

    try:
        tensors = load_file(str(path))
        with safe_open(str(path), "pt") as handle:
            recorded = (handle.metadata() or {}).get(HEAD_LABELS)
    except (OSError, SafetensorError) as error:
        raise DataError(f"{path}: not readable safetensors ({first_line(error)})") from None
    if recorded is not None and recorded != json.dumps(list(labels)):
        raise DataError(f"{path}: written for labels {recorded}, the folder's config says {labels} (its sha256 covers "
                        f"them): predictions would be renamed")
    check_finite_tensors(tensors, path)
    where = f"the model on {base!r}"
    modules, state = dict(model.named_modules()), model.state_dict()
    prefix = model.base_model_prefix + "."
    targets = adapter_config["target_modules"]
    saved = [*adapter_config["modules_to_save"], *HEAD_MODULES]
    for module in targets:
        if module not in modules:
            raise DataError(f"{path.with_name(ADAPTER_CONFIG)}: target module {module!r} is not in {where}")
        if not module.startswith(prefix):
            raise DataError(f"{path.with_name(ADAPTER_CONFIG)}: target module {module!r} is not in the encoder "
                            f"({prefix[:-1]}); only the encoder's layers take LoRA factors")
    for entry in adapter_config["modules_to_save"]:
        if not any(name.endswith(entry) for name in modules if name):
            raise DataError(f"{path.with_name(ADAPTER_CONFIG)}: modules_to_save names {entry!r}, which is not in "
                            f"{where}")
    kinds = {LORA_A: (torch.nn.Linear, "A"), LORA_B: (torch.nn.Linear, "B"),
             EMBEDDING_A: (torch.nn.Embedding, "A"), EMBEDDING_B: (torch.nn.Embedding, "B")}
    factors: dict[str, dict] = {}
    whole, head = {}, {}
    for key in sorted(tensors):
        tensor = tensors[key]
        if not key.startswith(PREFIX):
            raise DataError(f"{path}: tensor {key!r} is not named as peft names an adapter's tensors ({PREFIX}…)")
        name = key[len(PREFIX):]
        suffix = next((s for s in kinds if name.endswith(s)), None)
        if suffix is not None:
            module = name[:-len(suffix)]
            kind, part = kinds[suffix]
            if module not in targets:
                raise DataError(f"{path}: tensor {key!r} is a LoRA factor of {module!r}, which {ADAPTER_CONFIG}'s "
                                f"target_modules does not list")
            if not isinstance(modules[module], kind):
                raise DataError(f"{path}: tensor {key!r}: {module!r} is a {type(modules[module]).__name__}, not the "
                                f"{kind.__name__} peft stores {suffix.lstrip('.')} for")
            factors.setdefault(module, {})[part] = (key, tensor)
            continue
        if name.endswith(TARGET_BIAS):
            module = name[:-len(TARGET_BIAS)]
            if module not in targets or adapter_config.get("bias") != "lora_only":
                raise DataError(f"{path}: tensor {key!r} is the bias of a LoRA target, but {module!r} is not one "
                                f"with bias 'lora_only' in {ADAPTER_CONFIG}")
            name = module + ".bias"
        elif not any(ancestor.endswith(entry) for ancestor in _ancestors(name) for entry in saved):
            raise DataError(f"{path}: tensor {key!r} is not a LoRA factor, a target's bias or a tensor of a module "
                            f"{ADAPTER_CONFIG}'s modules_to_save lists")
        if name not in state:
            raise DataError(f"{path}: tensor {key!r}: {where} has no tensor {name!r}")
        if tuple(tensor.shape) != tuple(state[name].shape):
            raise DataError(f"{path}: tensor {key!r} has shape {tuple(tensor.shape)}, {where}'s "
                            f"{tuple(state[name].shape)}")
        if name.startswith(prefix):
            whole[name[len(prefix):]] = tensor
        else:
            head[name] = tensor
    _check_saved_modules(path, modules, saved, tensors)
    changes = dict(whole)
    for module in targets:
        parts = factors.get(module, {})
        for part, suffix in (("A", LORA_A), ("B", LORA_B)):
            if part not in parts:
                embedding = isinstance(modules[module], torch.nn.Embedding)
                wanted = PREFIX + module + ((EMBEDDING_A if part == "A" else EMBEDDING_B) if embedding else suffix)
                raise DataError(f"{path}: holds no {wanted!r}, yet {ADAPTER_CONFIG} lists {module!r} as a target")
        (key_a, a), (key_b, b) = parts["A"], parts["B"]
        rank = pattern_value(adapter_config["rank_pattern"], module, adapter_config["r"])
        alpha = pattern_value(adapter_config["alpha_pattern"], module, adapter_config["lora_alpha"])
        weight = tuple(state[module + ".weight"].shape)
        embedding = isinstance(modules[module], torch.nn.Embedding)
        wanted_a, wanted_b = ((rank, weight[0]), (weight[1], rank)) if embedding else \
            ((rank, weight[1]), (weight[0], rank))
        if tuple(a.shape) != wanted_a or tuple(b.shape) != wanted_b:
            raise DataError(f"{path}: {key_a!r} and {key_b!r} have shapes {tuple(a.shape)} and {tuple(b.shape)}, not "
                            f"{wanted_a} and {wanted_b} for {module!r}'s weight {weight} at rank {rank} "
                            f"({ADAPTER_CONFIG}'s r and rank_pattern)")
        scaling = alpha / math.sqrt(rank) if adapter_config.get("use_rslora") else alpha / rank
        up, down = (a.t().float() * scaling, b.t().float()) if embedding else (b.float() * scaling, a.float())
        target = module[len(prefix):] + ".weight"
        changes[target + UP], changes[target + DOWN] = up, down
    return changes, head


def _ancestors(name: str) -> list[str]:
    """The modules a tensor name lies in, innermost first (``a.b.weight``: ``a.b``, ``a``)."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(len(parts) - 1, 0, -1)]


def _check_saved_modules(path: Path, modules: dict, saved: list[str], tensors: dict) -> None:
    """Each module peft wraps as one to save (its name ends with an entry of ``saved``; the outermost of nested ones)
    must be stored whole: peft fails on a missing tensor, and a module listed but absent would be left as it was."""
    matched = [name for name in modules if name and any(name.endswith(entry) for entry in saved)]
    outermost = [name for name in matched if not any(a in matched for a in _ancestors(name))]  # enclosing modules
    for module in outermost:
        missing = [name for name in (f"{PREFIX}{module}.{tensor}" for tensor in modules[module].state_dict())
                   if name not in tensors]
        if missing:
            raise DataError(f"{path}: holds no {missing[0]!r}, yet {ADAPTER_CONFIG}'s modules_to_save names {module!r} "
                            f"(a module to save is stored whole)")


def load_adapter(folder: str | os.PathLike, device: str | None = None, precision: str = "auto",
                 reader: str = "auto"):
    """A :class:`TextClassifier` from a folder in the peft form: the base encoder's classification model with the
    adapter applied by peft (``reader`` ``peft``; ``auto``: where peft is installed) or by pragmeter (``pragmeter``;
    ``auto`` without peft), after every file and tensor is checked (module notes). ``classifier.adapter_reader``
    says which applied it."""
    import torch

    from pragmeter.classify.model import (TextClassifier, base_encoder, check_finite_tensors, pick_device,
                                         read_settings)
    from pragmeter.encoders.low_rank import apply_changes
    from pragmeter.encoders.registry import require_encoder
    from pragmeter.interpreter.shipped import build_on, transformers_config
    from pragmeter.io.model_card import base_model_id

    if reader not in READERS:
        raise PragmeterError(f"reader must be one of {', '.join(READERS)}, got {reader!r}")
    if reader == "peft" and not peft_available():
        from pragmeter.errors import MissingExtra

        raise MissingExtra("classify", "reader='peft' (the adapter applied by peft)", "peft is not installed")
    folder = Path(folder)
    config_path, config, settings = read_settings(folder)
    named = settings.base_encoder
    config_file, weights_path = adapter_files(folder, config, config_path)
    adapter_config = read_adapter_config(config_file, [name for name in (base_model_id(named), named) if name])
    settings.base_encoder = base_encoder(folder, settings)  # a relative folder is the model folder's
    model_config = transformers_config(config_path, config, settings, (ADAPTER_KEY,))
    # every tensor checked against the model's modules and shapes before any weight is read
    changes, head = read_adapter(weights_path, adapter_config, skeleton(model_config, config_path), settings.labels,
                                 settings.base_encoder)
    base_folder = require_encoder(settings.base_encoder)
    tokenizer, model, info = build_on(base_folder, model_config, settings.base_encoder, config_path)
    model.eval()
    unset = sorted(set(info.get("missing_keys") or ()) - set(head))
    if unset:
        raise DataError(f"{weights_path}: holds no {unset[0]!r}, which the base encoder {settings.base_encoder} lacks "
                        f"too (the classifier would be random)")
    encoder = {name: tensor.clone() for name, tensor in model.base_model.state_dict().items()}
    apply_changes(encoder, changes, str(weights_path), settings.base_encoder)
    use_peft = reader == "peft" or (reader == "auto" and peft_available())
    if use_peft:
        model = _through_peft(model, folder, weights_path, encoder, head)
    else:
        with torch.no_grad():
            model.base_model.load_state_dict(encoder, strict=False)
            state = model.state_dict()
            model.load_state_dict({name: tensor.to(state[name].dtype) for name, tensor in head.items()},
                                  strict=False)
    # the base encoder's own tensors too (the adapter's were checked when read): no tensor of the model is NaN
    check_finite_tensors(model.state_dict(), f"{weights_path} over the base encoder {settings.base_encoder!r}")
    classifier = TextClassifier(model, tokenizer, settings, pick_device(device), precision)
    classifier.source = str(folder)
    classifier.adapter_reader = "peft" if use_peft else "pragmeter"
    return classifier


def _through_peft(model, folder: Path, weights_path: Path, encoder: dict, head: dict):
    """``model`` with the adapter of ``folder`` applied by peft and merged, each of its tensors then compared with
    ``encoder`` and ``head`` (the file's numbers as pragmeter reads them): a DataError where peft read the file
    otherwise (a tensor it skipped or placed elsewhere)."""
    import warnings

    import torch

    from pragmeter.classify.model import first_line

    try:
        import peft
        from peft import PeftModel

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # its notes on loading (checked below, tensor by tensor)
            merged = PeftModel.from_pretrained(model, str(folder), is_trainable=False).merge_and_unload().eval()
    except Exception as error:  # noqa: BLE001  (peft's and torch's errors on a file it cannot apply)
        raise DataError(f"{folder}: peft could not apply the adapter ({first_line(error)})") from None
    expected = {**{model.base_model_prefix + "." + name: tensor for name, tensor in encoder.items()}, **head}
    state = merged.state_dict()
    for name, tensor in expected.items():
        have = state.get(name)
        if have is None or have.shape != tensor.shape or not (torch.equal(have, tensor.to(have.dtype)) or float(
                (have.float() - tensor.float()).abs().max()) <= MERGE_ATOL + MERGE_RTOL * float(tensor.abs().max())):
            raise DataError(f"{weights_path}: peft {peft.__version__} applied tensor {name!r} otherwise than the file "
                            f"holds it; refused")
    return merged
