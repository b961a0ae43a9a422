"""The frozen sentence encoder run through OpenVINO: the default CPU path (fp32, or bf16 where the CPU has it).

The graph is converted once from the very SentenceTransformer that the torch path uses (transformer + pooling +
normalisation) with ``openvino.convert_model`` and saved as OpenVINO IR (``model.xml`` + ``model.bin``, fp32
weights) under ``$PRAGMETER_CACHE/openvino/<encoder>-<content hash>/``. The conversion runs in a child process, so
the scoring process never imports torch and gets the conversion's memory back when it ends; it says one line (the
``pragmeter`` logger) before and after (once per encoder and machine).

Precision is chosen when the graph is compiled (``INFERENCE_PRECISION_HINT``): one export serves fp32 and bf16.
Texts are batched by token length with a small token budget (``TOKENS_PER_BATCH``): on CPU, bf16 matrix kernels run
fastest on batches that stay in cache, faster than larger budgets or unsorted fixed-size batches (docs/results.md).
The graph is compiled for throughput (one stream per core or so, ``PERFORMANCE_HINT=THROUGHPUT``) and the batches
of one call run on all streams at once (one infer request per stream, without Python callbacks): small batches,
every core busy, same numbers.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from pragmeter.encoders.graph import DEFAULT_MAX_BATCH, INPUT_NAMES, GraphEncoder
from pragmeter.encoders.runtime import Runtime
from pragmeter.errors import PragmeterError

log = logging.getLogger("pragmeter")

TOKENS_PER_BATCH = 1024
OV_PRECISION = {"fp32": "f32", "bf16": "bf16"}


def ir_file(encoder_name: str) -> Path:
    """Where the OpenVINO graph of ``encoder_name`` is cached (keyed by the encoder's content)."""
    from pragmeter.encoders import cache_dir
    from pragmeter.encoders.fingerprint import encoder_key

    return cache_dir() / "openvino" / encoder_key(encoder_name) / "model.xml"


class OpenVinoEncoder(GraphEncoder):
    """The graph encoder run by OpenVINO, in the runtime's precision (fp32 or bf16)."""

    backend = "openvino"

    def __init__(self, encoder_name: str, runtime: Runtime | None = None, tokens_per_batch: int = TOKENS_PER_BATCH,
                 max_batch: int = DEFAULT_MAX_BATCH) -> None:
        runtime = runtime or Runtime("openvino", "fp32")
        if runtime.precision not in OV_PRECISION:
            raise PragmeterError(f"the openvino backend runs fp32 or bf16, not precision={runtime.precision!r}")
        self._in_flight: list = []  # _requests infer requests, made on first use
        self._lock = threading.Lock()
        super().__init__(encoder_name, runtime, tokens_per_batch, max_batch)

    def _prepare(self) -> None:
        self.path = self._ensure_exported()
        self._compiled = self._compile(self.runtime.threads)
        self._inputs = [name for port in self._compiled.inputs for name in port.get_names() if name in INPUT_NAMES]

    def _ensure_exported(self) -> Path:
        from pragmeter.encoders.paths import mark_used, prune_built

        path = ir_file(self.encoder_name)
        if sealed_export(path.parent):
            mark_used(path.parent)
            return path
        path.parent.parent.mkdir(parents=True, exist_ok=True)
        log.info(f"pragmeter: preparing encoder {self.encoder_name} for fast CPU scoring (once; 10-30 s) ...")
        started = time.monotonic()
        # Converted in a child process: torch stays out of this one, and its memory is returned when it ends.
        child = subprocess.run([sys.executable, "-m", "pragmeter.encoders.openvino", self.encoder_name, str(path)],
                               env=child_env(), capture_output=True, text=True)
        if child.returncode != 0 or not path.is_file():
            lines = [line for line in child.stderr.splitlines() if line.strip()]
            raise PragmeterError(f"could not convert encoder {self.encoder_name!r} for OpenVINO "
                                 f"({lines[-1].strip() if lines else f'exit {child.returncode}'}); "
                                 "run it with the onnx or torch backend")
        log.info(f"pragmeter: encoder ready in {time.monotonic() - started:.0f} s ({path.parent})")
        prune_built(keep=path.parent)
        return path

    def _compile(self, threads: int | None):
        compiled, self._requests = compile_graph(self.path, self.precision, threads, f"encoder {self.encoder_name!r}",
                                                 self._alternatives())
        return compiled

    def _run(self, features: dict[str, np.ndarray]) -> np.ndarray:
        # share_inputs=False (a copy; start_async's default): a compiled model's call otherwise keeps our arrays as
        # its input tensors after it returns, and the next batch of another width wrote into them once freed (heap
        # corruption: "malloc(): unsorted double linked list corrupted", or a segmentation fault)
        return np.asarray(self._compiled(features, share_inputs=False)[0], dtype=np.float32)

    def _alternatives(self) -> str:
        """What to try instead, without suggesting what was already asked."""
        return ("try precision='fp32' or backend='onnx'" if self.precision != "fp32" else
                "try backend='onnx' or 'torch'")

    def _encode_batches(self, ids: list[list[int]], batches: list[list[int]], out: np.ndarray) -> None:
        with self._lock:  # one caller at a time: the infer requests are shared by every ImpScore of the process
            try:
                self._run_batches(ids, batches, out)
            except RuntimeError as error:  # a kernel this CPU (or its ISA cap) lacks: OpenVINO's words, last line
                raise PragmeterError(f"OpenVINO could not run encoder {self.encoder_name!r} in {self.precision} on "
                                     f"this CPU ({last_line(error)}); {self._alternatives()}") from None

    def _run_batches(self, ids: list[list[int]], batches: list[list[int]], out: np.ndarray) -> None:
        if len(batches) == 1 or self._requests == 1:
            return GraphEncoder._encode_batches(self, ids, batches, out)
        if not self._in_flight:
            self._in_flight = [self._compiled.create_infer_request() for _ in range(self._requests)]
        run_in_flight(self._in_flight, batches, lambda batch: self.features([ids[i] for i in batch]), out)


def sealed_export(folder: Path) -> bool:
    """Whether the export ``folder`` is there and matches its seal (checked on each load: a few stat calls); one that
    does not (damaged, truncated, copied in from another model) is set aside, with a warning, to be exported again."""
    from pragmeter.encoders.fingerprint import seal_problem

    if not folder.exists():
        return False
    problem = seal_problem(folder, folder.name)
    if problem is None:
        return True
    from pragmeter.io.atomic import set_aside

    if set_aside(folder, remove=True) is not None:
        import logging

        logging.getLogger("pragmeter").warning("OpenVINO export %s: %s; set aside and converted again", folder, problem)
    return False


def child_env() -> dict[str, str]:
    """The environment of a child process that converts a graph: this package first on its path, its libraries
    quiet (no bars, no notices)."""
    return {**os.environ, "TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH")]))}


def compile_graph(graph, precision: str, threads: int | None, what: str, alternatives: str) -> tuple:
    """(``graph``, an IR file's path or an ``openvino.Model``, compiled for the CPU in ``precision`` (fp32 or bf16)
    for throughput, how many infer requests keep it busy); ``threads`` caps its threads (None: OpenVINO's default).
    A graph this CPU (or its ISA cap) cannot compile is a PragmeterError naming ``what``, with OpenVINO's last line
    and ``alternatives``."""
    import openvino as ov

    core = ov.Core()
    config = {"INFERENCE_PRECISION_HINT": OV_PRECISION[precision], "PERFORMANCE_HINT": "THROUGHPUT"}
    if threads:  # e.g. a Ray actor's share of the node
        config["INFERENCE_NUM_THREADS"] = threads
    try:
        model = core.read_model(str(graph)) if isinstance(graph, (str, os.PathLike)) else graph
        compiled = core.compile_model(model, "CPU", config)
    except RuntimeError as error:  # e.g. bf16 asked of a runtime capped below it: OpenVINO's own words, last line
        raise PragmeterError(f"OpenVINO could not compile {what} in {precision} on this CPU "
                             f"({last_line(error)}); {alternatives}") from None
    return compiled, max(1, int(compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))


def last_line(error: BaseException) -> str:
    """OpenVINO's reason: the last non-blank line of its message."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else "no reason given"


def run_in_flight(requests: list, batches: list[list[int]], features, out) -> None:
    """Fill ``out[batch]`` with the graph's first output for each batch (``features(batch)``: its inputs), one batch
    in flight per infer request of ``requests``; ``out`` may instead be a callable, given (batch, output) to keep
    (the output's memory is the request's: copy what is kept)."""
    # Several batches in flight, each output copied by this thread. No Python callback (AsyncInferQueue's): it
    # makes OpenVINO's threads take the GIL, and one still waiting for it when the compiled model was released
    # deadlocked, or at exit aborted the process after its work was done ("terminate called without an
    # active exception", exit 134).
    def keep(batch: list[int], data) -> None:
        if callable(out):
            out(batch, data)
        else:
            out[batch] = data

    running: dict[int, list[int]] = {}
    for number, batch in enumerate(batches):
        slot = number % len(requests)
        if slot in running:
            requests[slot].wait()
            keep(running.pop(slot), requests[slot].get_output_tensor(0).data)
        requests[slot].start_async(features(batch))
        running[slot] = batch
    for slot, batch in running.items():
        requests[slot].wait()
        keep(batch, requests[slot].get_output_tensor(0).data)


def export(encoder_name: str, target: Path) -> None:
    """Convert the SentenceTransformer to OpenVINO IR at ``target`` (model.xml + model.bin, written atomically)."""
    import openvino as ov
    import torch

    from pragmeter.encoders import load_encoder
    from pragmeter.encoders.onnx import _SentenceEmbedding

    st = load_encoder(encoder_name, "cpu")
    features = st.preprocess(["An example sentence to trace the graph.", "Short one."])
    names = [name for name in INPUT_NAMES if name in features]
    wrapper = _SentenceEmbedding(st, names).eval()
    with torch.inference_mode(False), torch.no_grad():
        model = ov.convert_model(wrapper, example_input=tuple(features[n] for n in names))
    del st, wrapper
    for port, name in zip(model.inputs, names):
        port.get_tensor().set_names({name})
    model.outputs[0].get_tensor().set_names({"sentence_embedding"})
    # Both files appear together, built once however many processes convert at once (the others use it).
    from pragmeter.encoders.fingerprint import seal, seal_problem
    from pragmeter.io.atomic import build_folder

    def write(staging: Path) -> None:
        ov.save_model(model, str(staging / target.name), compress_to_fp16=False)
        seal(staging, target.parent.name)

    build_folder(target.parent, write, ready=lambda folder: seal_problem(folder, folder.name) is None)


if __name__ == "__main__":  # the child process of OpenVinoEncoder._ensure_exported
    export(sys.argv[1], Path(sys.argv[2]))
