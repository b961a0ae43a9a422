"""Fine-tuned encoders that travel with a model: the tensors that training changed, applied to a packaged base encoder.

An ImpScore model folder whose encoder layers were trained with its heads carries those layers' tensors as
safetensors shards (each under ~15 MiB, fp16) and lists them in its config:

    "encoder_weights": [{"file": "encoder-1.safetensors", "sha256": "..."}, ...]

The tensor names are the base sentence-transformers folder's (``encoder.layer.5.attention.self.query.weight``). A
matrix's change may instead travel as two low-rank factors, ``NAME.up`` (out × r) and ``NAME.down`` (r × in): the
matrix becomes base + up @ down (pragmeter.encoders.low_rank applies them) (a few MB for all six MiniLM layers where the whole layers are 21 MB): LoRA's
factors with any scaling folded into ``up`` (peft's B·alpha/r and A), so loading needs no scaling. On
first use the base folder is copied into the cache with those tensors replaced, once per base encoder and set of
shards (keyed by the base's content and the shards' sha256, and checked against a seal on every use), and every backend (torch, OpenVINO, ONNX) then loads that folder like any other encoder; embedding
caches are keyed by its content, so they never mix with the base encoder's vectors.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from pathlib import Path

from pragmeter.errors import DataError

log = logging.getLogger("pragmeter")

WEIGHTS_KEY = "encoder_weights"
SHARD_BYTES = 15 * 2**20  # below the 16 MiB that some transfer paths cap a file at
WEIGHTS_FILE = "model.safetensors"


def shard_files(tensors: dict, folder: Path, prefix: str = "encoder", dtype: str = "float16",
                max_bytes: int = SHARD_BYTES) -> list[dict]:
    """Write ``tensors`` (name -> torch tensor) as safetensors shards of at most ``max_bytes`` in ``folder``, cast to
    ``dtype``; returns the config entry (file names and sha256)."""
    import torch
    from safetensors.torch import save_file

    from pragmeter.data.root import sha256_of
    from pragmeter.io import atomic_path

    shards: list[dict] = []
    current: dict[str, torch.Tensor] = {}
    size = 0

    def flush() -> None:
        nonlocal current, size
        path = folder / f"{prefix}-{len(shards) + 1}.safetensors"
        with atomic_path(path) as tmp:
            save_file(current, tmp)
        shards.append({"file": path.name, "sha256": sha256_of(path)})
        current, size = {}, 0

    for name in sorted(tensors):
        tensor = tensors[name].detach().to("cpu", getattr(torch, dtype), copy=True).contiguous()
        nbytes = tensor.numel() * tensor.element_size()
        if current and size + nbytes > max_bytes:
            flush()
        current[name], size = tensor, size + nbytes
    if current:
        flush()
    return shards


def weights_key(shards: list[dict]) -> str:
    """One key for a set of shards: a hash of their sha256s, in order."""
    return hashlib.sha256("".join(s["sha256"] for s in shards).encode()).hexdigest()[:16]


def folder_file(folder: Path, name: str, where: str) -> Path:
    """The file ``name`` of a model folder, as a config or the folder's layout names it: a DataError (naming
    ``where``) for a name that leads outside the folder (absolute, ``..``, a link elsewhere), a missing file, or
    one that is not a regular file (a FIFO or a device would be read forever)."""
    import stat

    relative = Path(name)
    if not name or relative.is_absolute() or ".." in relative.parts:
        raise DataError(f"{where}: {name!r} is not a file name inside the model folder; refused")
    path = folder / relative
    try:
        inside = path.resolve().is_relative_to(folder.resolve())
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise DataError(f"{where}: names {name}, which is not in {folder}") from None
    except OSError as error:
        raise DataError(f"{where}: {name} cannot be read ({error.strerror or error})") from None
    if not inside:
        raise DataError(f"{where}: {name} leads outside the model folder {folder}; refused")
    if not stat.S_ISREG(mode):
        raise DataError(f"{path}: not a regular file (a FIFO, device or folder); refused")
    return path


def check_shards(model_folder: Path, shards, where: str) -> list[Path]:
    """The shard files of a model folder, each verified by its sha256 (a DataError naming ``where`` and the file)."""
    from pragmeter.data.root import sha256_of

    def well_formed(shard) -> bool:
        return isinstance(shard, dict) and all(isinstance(shard.get(k), str) for k in ("file", "sha256"))

    if not isinstance(shards, list) or not shards or not all(map(well_formed, shards)):
        raise DataError(f"{where}: '{WEIGHTS_KEY}' must list {{'file', 'sha256'}} entries, got {shards!r}")
    paths = []
    for shard in shards:
        path = folder_file(model_folder, shard["file"], f"{where}: {WEIGHTS_KEY}")
        if sha256_of(path) != shard["sha256"]:
            raise DataError(f"{path}: sha256 differs from {where}'s {WEIGHTS_KEY} entry (damaged or replaced)")
        paths.append(path)
    return paths


def read_shards(paths: list[Path]) -> tuple[dict, dict[str, str]]:
    """The tensors of checked shard files (check_shards), by name, and the file each came from."""
    from safetensors.torch import load_file

    tensors: dict = {}
    where_of: dict[str, str] = {}
    for path in paths:
        for name, tensor in load_file(str(path)).items():
            tensors[name], where_of[name] = tensor, str(path)
    return tensors, where_of


def finetuned_encoder(base: str, model_folder: Path, shards: list[dict], where: str) -> Path:
    """The folder of ``base`` with the shards' tensors in place of its own, built once in the cache. A DataError
    (naming ``where``, the config) for a shard that is missing, damaged, or names a tensor the base lacks or shapes
    it differently.

    The cache folder is keyed by the base encoder's content and the shards' hashes, sealed when built, and checked
    against its seal on every use (a few ``stat`` calls: pragmeter.encoders.fingerprint): one that is damaged,
    truncated or swapped in from another model is replaced, with a warning. Processes that want it at once build
    it once: one builds, the others wait and use its folder."""
    from pragmeter.encoders.fingerprint import encoder_fingerprint, seal, seal_problem
    from pragmeter.encoders.paths import cache_dir, mark_used, prune_built
    from pragmeter.encoders.registry import canonical_name, require_encoder

    paths = check_shards(model_folder, shards, where)
    built_from = f"{canonical_name(base)}@{encoder_fingerprint(base)}+{weights_key(shards)}"
    key = hashlib.sha256(built_from.encode()).hexdigest()[:16]
    target = cache_dir() / "encoders" / "finetuned" / f"{canonical_name(base).replace('/', '--')}-{key}"
    problem = seal_problem(target, built_from) if target.exists() else "not built"
    if problem is None:
        mark_used(target)
        return target
    if target.exists():
        log.warning("fine-tuned encoder %s: %s; built again", target, problem)
    # torch and pandas (via pragmeter.io) only when the folder is built, not on every load
    from safetensors.torch import load_file, save_file

    from pragmeter.encoders.low_rank import apply_changes
    from pragmeter.io.atomic import build_folder

    def write(staging: Path) -> None:
        source = Path(require_encoder(base))
        weights = load_file(str(source / WEIGHTS_FILE))
        tensors, where_of = read_shards(paths)
        apply_changes(weights, tensors, where_of, base)
        for item in source.iterdir():
            if item.name in (WEIGHTS_FILE, "onnx", "openvino") or item.name.endswith((".onnx", ".corrupt")):
                continue
            (shutil.copytree if item.is_dir() else shutil.copy2)(item, staging / item.name)
        save_file({k: v.contiguous() for k, v in weights.items()}, str(staging / WEIGHTS_FILE))
        seal(staging, built_from)

    built = build_folder(target, write, ready=lambda folder: seal_problem(folder, built_from) is None)
    prune_built(keep=built)
    return built
