"""The frozen sentence encoder run through ONNX Runtime: same embeddings as sentence-transformers, faster on CPU.

The graph is exported once from the very SentenceTransformer that the torch path uses (transformer + pooling +
normalisation in one graph), so the numbers only differ by float rounding. It runs fp32 only (int8 weights are
outside the accuracy bounds: pragmeter.encoders.runtime).

Exported files are cached under ``pragmeter.encoders.cache_dir()/onnx/``, keyed by the encoder's content (a hash of
its weights and tokenizer: pragmeter.encoders.fingerprint) and opset, and built on first use (a few seconds for
all-MiniLM-L6-v2, about a minute for all-mpnet-base-v2). Tokenizing and batching: pragmeter.encoders.graph (batches
of the token budget below are larger than the official 32).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np

from pragmeter.encoders.graph import DEFAULT_MAX_BATCH, INPUT_NAMES, GraphEncoder
from pragmeter.encoders.runtime import Runtime
from pragmeter.errors import PragmeterError

log = logging.getLogger("pragmeter")

OPSET = 17
# Padded tokens per batch: long texts get small batches, short texts large ones (memory stays flat).
DEFAULT_TOKENS_PER_BATCH = 8192


def onnx_file(encoder_name: str, opset: int = OPSET) -> Path:
    """Where the exported graph of ``encoder_name`` is cached."""
    from pragmeter.encoders import cache_dir
    from pragmeter.encoders.fingerprint import encoder_key

    # Keyed by the encoder's content (weights, tokenizer): a folder whose weights were replaced gets a new export.
    return cache_dir() / "onnx" / encoder_key(encoder_name) / f"opset{opset}-fp32.onnx"


class OnnxEncoder(GraphEncoder):
    """The graph encoder run by ONNX Runtime (fp32)."""

    backend = "onnx"

    def __init__(self, encoder_name: str, runtime: Runtime | None = None,
                 tokens_per_batch: int = DEFAULT_TOKENS_PER_BATCH, max_batch: int = DEFAULT_MAX_BATCH) -> None:
        super().__init__(encoder_name, runtime or Runtime("onnx", "fp32"), tokens_per_batch, max_batch)

    def _prepare(self) -> None:
        self.path = self._ensure_exported()
        self._session = self._open_or_rebuild(self.runtime.threads)
        self._inputs = [i.name for i in self._session.get_inputs()]

    # ---------------------------------------------------------------- export and cache
    def _ensure_exported(self) -> Path:
        """The cached graph, exported once; its folder is sealed when built and checked on each load, so a graph
        damaged or swapped since is set aside (kept for inspection) and exported again instead of giving other
        numbers."""
        from pragmeter.encoders.fingerprint import seal, seal_problem
        from pragmeter.encoders.paths import mark_used, prune_built

        path = onnx_file(self.encoder_name)
        folder = path.parent
        if folder.exists():
            problem = seal_problem(folder, folder.name)
            if problem is None:
                mark_used(folder)
                return path
            from pragmeter.io.atomic import set_aside

            aside = set_aside(folder)
            if aside is not None:
                log.warning("ONNX export %s: %s; set aside as %s and exported again", path, problem, aside.name)
        from pragmeter.io.atomic import build_folder

        folder.parent.mkdir(parents=True, exist_ok=True)
        log.info("exporting %s to ONNX (once) -> %s", self.encoder_name, path)

        def write(staging: Path) -> None:
            self._export(staging / path.name)
            seal(staging, folder.name)

        # several processes exporting at once (Ray actors, two servers): one builds, the others use its folder
        build_folder(folder, write, ready=lambda built: seal_problem(built, built.name) is None)
        prune_built(keep=folder)
        return path

    def _export(self, target: Path) -> None:
        import torch

        features = self._st.preprocess(["An example sentence to trace the graph.", "Short one."])
        names = [name for name in INPUT_NAMES if name in features]
        wrapper = _SentenceEmbedding(self._st, names).eval()
        try:
            # The tracer warns about Python branches on shapes; they are constant for sentence embedding.
            with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(wrapper, tuple(features[n] for n in names), str(target), input_names=names,
                                  output_names=["sentence_embedding"], opset_version=OPSET, dynamo=False,
                                  dynamic_axes={n: {0: "batch", 1: "tokens"} for n in names})
        except Exception as error:  # the exporter raises many types; the user needs one clear line
            raise PragmeterError(f"could not export encoder {self.encoder_name!r} to ONNX ({type(error).__name__}: "
                                 f"{str(error).splitlines()[0] if str(error) else ''}); run it with the torch backend") from error

    def _open_session(self, threads: int | None):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle threads sleep instead of spinning: on a shared machine spinning only steals CPU from the work.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        return ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])

    def _open_or_rebuild(self, threads: int | None):
        """Open the cached graph; one that ONNX Runtime cannot read (cut short by a full disk or a killed copy) is
        set aside, kept for inspection, and built again, as the embedding cache does with a corrupt database."""
        try:
            return self._open_session(threads)
        except Exception as error:  # noqa: BLE001 - onnxruntime raises its own types (InvalidProtobuf, Fail, …)
            if not self.path.is_file():
                raise
            from pragmeter.io.atomic import set_aside

            aside = set_aside(self.path)
            log.warning("ONNX export %s cannot be opened (%s); set aside as %s and exported again", self.path,
                        str(error).splitlines()[0][:200] if str(error) else type(error).__name__,
                        aside.name if aside else "(gone)")
            self.path = self._ensure_exported()
            return self._open_session(threads)

    def _run(self, features: dict[str, np.ndarray]) -> np.ndarray:
        return self._session.run(None, features)[0]


class _SentenceEmbedding:
    """torch module (created lazily so importing this file does not import torch): positional tensors in, the
    SentenceTransformer's ``sentence_embedding`` out, as torch.onnx.export needs."""

    def __new__(cls, st, names: list[str]):
        import torch

        class Module(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.st = st

            def forward(self, *tensors):
                return self.st(dict(zip(names, tensors)))["sentence_embedding"]

        return Module()
