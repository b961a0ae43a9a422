"""Corpus scoring on Ray (extra ``ray``): ``pragmeter score --engine ray --input DIR_OR_FILE --output DIR``.

Ray Data batch inference with the same scorer as the single-process path: each input file is read by one Ray
task (with pragmeter's readers, so errors name the file, row and field), rows are cut into blocks, and a pool of
actors, each loading the model once, adds ``impscore`` and ``impscore_error``. Every input row comes out, with
its id: the ``--id-column`` when the input has it, else ``FILE:ROW`` (1-based row within its file). The output
folder holds parquet parts in input order.

Cluster: ``--ray-address ADDRESS`` (or ``$RAY_ADDRESS``) joins an existing cluster, e.g. ``ray://head:10001`` or
``auto`` on a cluster node; without one a local Ray instance starts. The model folder and the encoder package
must be installed on every node.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from pragmeter.errors import Interrupted, MissingExtra, OutputExists, PragmeterError
from pragmeter.impscore.scoring import ERROR_COLUMN, score_frame
from pragmeter.io.atomic import staged_folder

INPUT_SUFFIXES = (".txt", ".csv", ".tsv", ".jsonl", ".parquet")
ROWS_PER_BLOCK = 1024  # unit of work handed to an actor


@contextmanager
def _interrupts_kept() -> Iterator[list[int]]:
    """Ctrl-C raises KeyboardInterrupt as usual and is also remembered (the list yielded). Python swallows an
    exception raised inside a weakref callback or ``__del__`` (it reaches ``sys.unraisablehook``, which prints
    "Exception ignored in ..."), and Ray's start-up runs many: a Ctrl-C landing there was lost and the job ran on to
    the end. Such a swallowed Ctrl-C is sent again once the main thread is back in ordinary code, and one swallowed
    where no hook hears of it is raised when the block ends. Nothing is raised after the block: a Ctrl-C re-sent or
    pressed while it closes is only remembered, so it cannot land in the caller's clean-up. A no-op off the main
    thread (library use: signals cannot be handled there) and where SIGINT has another handler than Python's own
    (ignored in a background job, or the caller's)."""
    pressed: list[int] = []
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield pressed
        return
    main, previous_hook, resent, closing = threading.main_thread().ident, sys.unraisablehook, [], []

    def handler(signum, frame):
        pressed.append(signum)
        if not closing:
            raise KeyboardInterrupt

    def hook(unraisable) -> None:
        if pressed and isinstance(unraisable.exc_type, type) and issubclass(unraisable.exc_type, KeyboardInterrupt):
            # a real signal, a moment later: it also wakes a blocking wait (raising here would be swallowed again)
            resent.append(threading.Timer(0.1, signal.pthread_kill, (main, signal.SIGINT)))
            resent[-1].start()
            return
        previous_hook(unraisable)

    previous = signal.signal(signal.SIGINT, handler)
    sys.unraisablehook = hook
    try:
        yield pressed
    finally:
        closing.append(True)  # first: a signal handled from here on is remembered, not raised into the clean-up
        try:
            for timer in resent:  # a re-send already under way is handled here (join runs Python code), not later
                timer.cancel()
                timer.join()
        finally:
            sys.unraisablehook = previous_hook
            signal.signal(signal.SIGINT, previous)  # Python runs a still-pending handler (ours) before replacing it
    if pressed:
        raise KeyboardInterrupt


def _quiet_ray_data_console() -> None:
    """Errors only on the console from Ray Data's logger, as ray.init's level: it logs each run's plan and timings
    at INFO (the summary line says what a run did) and warns that its bars are off when stderr is not a terminal.
    Its log file in the Ray session folder keeps everything."""
    import ray.data  # configures its logger on import

    for handler in logging.getLogger("ray.data").handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.setLevel(logging.ERROR)


class ImpScorePredictor:
    """Ray Data callable class: one model per actor, a pandas batch in, the same batch plus two columns out."""

    def __init__(self, model: str | None, backend: str, device: str | None, column: str, batch_size: int | None,
                 threads: int, dtype: str | None = None, precision: str = "auto") -> None:
        import torch

        torch.set_num_threads(threads)
        from pragmeter.impscore.model import ImpScore

        self.column = column
        # The runtime is resolved on the actor's own CPU, with the actor's share of threads (a graph runtime would
        # otherwise use every core of the node). GPU actors: torch in fp16 (unless dtype says otherwise) on large
        # length-sorted batches.
        from pragmeter.encoders.runtime import precision_with_dtype

        self.model = ImpScore.load(model, backend=backend, precision=precision_with_dtype(precision, dtype),
                                   device=device, batch_size=batch_size, threads=threads)

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return score_frame(self.model, batch, self.column)


def input_files(path: str | os.PathLike) -> list[Path]:
    """The table files to score: the file itself, or every supported file under the folder (sorted)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise PragmeterError(f"{path}: no such file or folder")
    files = sorted(p for p in path.rglob("*") if p.is_file() and any(s in INPUT_SUFFIXES for s in p.suffixes)
                   and not p.name.startswith((".", "_")))
    if not files:
        raise PragmeterError(f"{path}: no {', '.join(INPUT_SUFFIXES)} files in this folder")
    return files


def _read_file(batch: pd.DataFrame, root: str, column: str, id_column: str) -> pd.DataFrame:
    from pragmeter.impscore.scoring import require_output_columns_free
    from pragmeter.io import read_table, require_column

    path = Path(batch["file"].iloc[0])
    frame = read_table(path, allow_empty=True, text_columns=[column])  # an empty part of a folder is no error
    require_column(frame, column, path)
    require_output_columns_free(frame, path)
    if id_column not in frame.columns:
        name = path.relative_to(root).as_posix() if root else path.name
        frame.insert(0, id_column, [f"{name}:{i}" for i in range(1, len(frame) + 1)])
    return frame


def score_with_ray(input_path: str | os.PathLike, output: str | os.PathLike, *, model: str | None = None,
                   column: str = "text", id_column: str = "id", backend: str | None = None,
                   actors: int | None = None, cpus_per_actor: float = 1, gpus_per_actor: float = 0,
                   batch_size: int | None = None, overwrite: bool = False, address: str | None = None,
                   device: str | None = None, dtype: str | None = None, precision: str = "auto") -> dict:
    """Score a file or folder of tables on Ray; write parquet parts to the ``output`` folder. Returns counts.

    With ``gpus_per_actor`` > 0 each actor reserves that GPU share and runs the encoder in torch on ``device``
    (default cuda) in ``dtype`` (default fp16 there, see pragmeter.encoders.runtime) with large
    length-sorted batches (``batch_size`` default: pragmeter.encoders.GPU_BATCH_SIZE)."""
    try:
        import ray
    except ImportError:
        raise MissingExtra("ray", "the ray engine") from None

    from pragmeter.encoders.runtime import resolve_runtime
    from pragmeter.impscore.model import resolve_model_dir

    output = Path(output)
    if output.exists() and any(output.iterdir()) and not overwrite:
        raise OutputExists(output, "exists and is not empty")
    files = input_files(input_path)
    root = str(Path(input_path)) if Path(input_path).is_dir() else ""
    model_dir = str(resolve_model_dir(model).resolve())  # actors may run elsewhere: pass an absolute folder
    device = device or ("cuda" if gpus_per_actor else None)
    if gpus_per_actor and backend in (None, "auto"):
        backend = "torch"  # actors that reserve a GPU ask for the torch encoder, whatever their device
    # Refused in one line now, not once per actor; each actor resolves the same wish again on its own CPU (the
    # summary reports this machine's resolution).
    encoder = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))["encoder"]
    runtime = resolve_runtime(backend, precision, max(1, int(cpus_per_actor)), encoder, device=device, dtype=dtype)

    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS")
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 logging_level="ERROR", configure_logging=True)
    _quiet_ray_data_console()
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # output parts follow the input order
    context.enable_progress_bars = sys.stderr.isatty()
    resources = ray.cluster_resources()
    if actors is None:
        share = resources.get("GPU", 0) / gpus_per_actor if gpus_per_actor else resources.get("CPU", 1) / cpus_per_actor
        actors = max(1, int(share))

    tables = ray.data.from_items([{"file": str(f)} for f in files], override_num_blocks=len(files))
    # Readers reserve no CPU: the actors may hold every CPU, and a reader waiting for one would wait forever.
    tables = tables.map_batches(_read_file, batch_size=1, batch_format="pandas", num_cpus=0,
                                compute=ray.data.TaskPoolStrategy(size=max(1, min(actors, len(files)))),
                                fn_kwargs={"root": root, "column": column, "id_column": id_column})
    rows = tables.repartition(target_num_rows_per_block=ROWS_PER_BLOCK)
    scored = rows.map_batches(
        ImpScorePredictor, batch_size=ROWS_PER_BLOCK, batch_format="pandas",
        # Start with one actor and grow to ``actors``: a fixed pool holding every CPU would starve the
        # repartition step that feeds it.
        compute=ray.data.ActorPoolStrategy(min_size=1, max_size=actors), num_cpus=cpus_per_actor, num_gpus=gpus_per_actor,
        fn_constructor_kwargs={"model": model_dir, "backend": runtime.backend, "device": device, "dtype": dtype,
                               "precision": precision,
                               "column": column, "batch_size": batch_size,
                               "threads": max(1, int(cpus_per_actor))})
    # The folder appears whole or not at all; its staging folder is made inside the try, so a Ctrl-C the moment it
    # appears still gets the message below and removes it.
    try:
        with staged_folder(output) as staging:
            with _interrupts_kept():
                scored.write_parquet(str(staging), ray_remote_args={"num_cpus": 0})
            written = pd.read_parquet(staging, columns=[ERROR_COLUMN])
    except KeyboardInterrupt:  # the parts are only moved into place at the end: say so, not "work is kept"
        raise Interrupted(f"interrupted; nothing was written to {output} (the Ray engine writes the output folder "
                          "whole at the end); run the command again") from None
    failed = int((written[ERROR_COLUMN] != "").sum())
    return {"rows": len(written), "scored": len(written) - failed, "failed": failed, "files": len(files),
            "actors": actors, "backend": runtime.backend, "precision": runtime.precision, "device": runtime.device,
            "gpus_per_actor": gpus_per_actor, "runtime": runtime.signature()}


def summary_lines(summary: dict, output: str | os.PathLike) -> list[str]:
    """What ``pragmeter score --engine ray`` says on stderr about a run of :func:`score_with_ray`."""
    lines = [f"scored {summary['scored']} of {summary['rows']} rows from {summary['files']} file(s) with "
             f"{summary['actors']} actor(s) ({summary['backend']}, {summary['precision']}) -> {output}"]
    if summary["failed"]:
        lines.append(f"warning: {summary['failed']} row(s) not scored (reason in column '{ERROR_COLUMN}')")
    return lines
