"""A llama.cpp server (xllamacpp) for one GGUF model, run in a child process on a free loopback port.

The parent (:class:`GgufServer`) starts ``python -m pragmeter.llm.gguf_server …``, waits for ``/health`` with a
bounded timeout, and stops the child on ``stop()``, at interpreter exit, or when asked twice. The child runs in
its own session (a terminal's Ctrl-C reaches only the parent, which then stops it in order), with
``OMP_WAIT_POLICY=PASSIVE`` (llama.cpp's OpenMP threads otherwise spin and speed collapses on a busy CPU), and
exits by itself when its parent disappears, so a killed run leaves no server behind. Its log (llama.cpp's
output) is a file named in every error.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pragmeter.errors import PragmeterError

HEALTH_POLL = 0.25  # seconds between health checks while the model loads


@dataclass(frozen=True)
class ServerSettings:
    model_path: Path
    threads: int | None = None  # None: llama.cpp's default (the number of cores)
    ctx_size: int = 4096  # tokens of context per parallel slot
    parallel: int = 1  # slots answering at once (the backend matches it to its concurrency)
    cache_ram_mib: int = 2048  # host memory for llama.cpp's prompt cache across slots
    start_timeout: float = 300.0  # seconds for the model to load and answer /health


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def log_tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])


class GgufServer:
    """One child llama.cpp server. ``await start()`` returns its OpenAI base URL; ``stop()`` ends it."""

    child_module = "pragmeter.llm.gguf_server"  # tests put a scripted fake here (pragmeter.testing.fake_gguf_server)

    def __init__(self, settings: ServerSettings, log_dir: Path):
        self.settings = settings
        self.log_dir = log_dir
        self.process: subprocess.Popen | None = None
        self.port: int | None = None
        self.log_path: Path | None = None
        atexit.register(self.stop)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def _command(self) -> list[str]:
        s = self.settings
        command = [sys.executable, "-m", self.child_module, "--model", str(s.model_path),
                   "--port", str(self.port), "--ctx-size", str(s.ctx_size * s.parallel),
                   "--parallel", str(s.parallel), "--cache-ram", str(s.cache_ram_mib), "--parent", str(os.getpid())]
        return command + (["--threads", str(s.threads)] if s.threads else [])

    def _environment(self) -> dict[str, str]:
        import pragmeter

        package_root = str(Path(pragmeter.__file__).resolve().parents[1])  # the child imports this same code
        path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
        return {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "PYTHONPATH": path}

    async def start(self) -> str:
        """Start the child and wait until it answers ``/health``; PragmeterError (with the log's last lines)
        when it exits first or is not healthy within ``start_timeout`` seconds."""
        self.stop()
        self.port = free_port()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.log_dir / f"gguf-server-{os.getpid()}-{self.port}.log"
        from pragmeter.io.nofollow import open_nofollow

        log = open_nofollow(self.log_path)  # the log folder may be shared: never written through a link
        try:
            self.process = subprocess.Popen(self._command(), stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, env=self._environment(),
                                            start_new_session=True)
        finally:
            os.close(log)
        try:
            await self._wait_healthy()
        except BaseException:  # timeout, early exit, or the run cancelled meanwhile (Ctrl-C): no child left over
            self.stop()
            raise
        return self.base_url

    async def _wait_healthy(self) -> None:
        import httpx

        deadline = time.monotonic() + self.settings.start_timeout
        async with httpx.AsyncClient(timeout=2.0) as client:
            while True:
                if self.process.poll() is not None:
                    code = self.process.returncode
                    raise PragmeterError(f"the gguf server exited with code {code} while loading "
                                         f"{self.settings.model_path}: {log_tail(self.log_path)} (log: {self.log_path})")
                try:
                    if (await client.get(f"http://127.0.0.1:{self.port}/health")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass  # not listening yet
                if time.monotonic() > deadline:
                    raise PragmeterError(f"the gguf server was not healthy within {self.settings.start_timeout:g} s "
                                         f"(model {self.settings.model_path}; raise start_timeout=… if the machine "
                                         f"is slow); log: {self.log_path}")
                await asyncio.sleep(HEALTH_POLL)

    def stop(self, grace: float = 10.0) -> None:
        """Terminate the child (SIGTERM, then SIGKILL after ``grace`` seconds); safe to call repeatedly."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# -- the child ---------------------------------------------------------------------------------------------------

def _serve(args: argparse.Namespace) -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # read when OpenMP starts, i.e. before xllamacpp loads
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    params.cache_ram_mib = args.cache_ram
    params.offline = True
    if args.threads:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    params.port = args.port
    params.hostnames = ["127.0.0.1"]
    server = xllamacpp.Server(params)  # noqa: F841 - loads the model and serves HTTP from its own threads
    wait_for_parent(args.parent)


def wait_for_parent(parent: int) -> None:
    """Return when the parent process is gone: a parent killed outright leaves no orphaned server."""
    while os.getppid() == parent:
        time.sleep(0.5)


def child_arguments(argv: list[str] | None, serve) -> None:
    """Parse the child's command line, make SIGTERM/SIGINT a clean exit, and run ``serve(args)``."""
    parser = argparse.ArgumentParser(prog="python -m pragmeter.llm.gguf_server")
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx-size", type=int, default=4096)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--cache-ram", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--parent", type=int, default=os.getppid())
    args = parser.parse_args(argv)

    def finish(signum=None, frame=None):
        # At once: a graceful llama.cpp shutdown first finishes the batch in progress (minutes of a long prompt
        # on a slow CPU), and a server has nothing to save.
        os._exit(0)

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    serve(args)
    finish()


if __name__ == "__main__":
    child_arguments(None, _serve)
