"""The frozen sentence encoder run through ONNX Runtime: same embeddings as sentence-transformers, faster on CPU.

The graph is exported once from the very SentenceTransformer that the torch path uses (transformer + pooling +
normalisation in one graph), so the numbers only differ by float rounding; with ``quantize=True`` the weights of
the matrix products are stored as int8 (ONNX Runtime dynamic quantization), which is faster and less exact.

Exported files are cached under ``pragmeter.encoders.cache_dir()/onnx/``, keyed by the encoder's content (a hash of
its weights and tokenizer: pragmeter.encoders.fingerprint), opset and quantization, and built on first use (a few seconds for all-MiniLM-L6-v2, about a minute for all-mpnet-base-v2).

Speed comes from three things besides the runtime itself: texts are batched by token length (little padding),
batches are larger than the official 32, and repeated texts within one call are encoded once.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np

from pragmeter.errors import PragmeterError

log = logging.getLogger("pragmeter")

OPSET = 17
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
# Padded tokens per batch: long texts get small batches, short texts large ones (memory stays flat).
DEFAULT_TOKENS_PER_BATCH = 8192
DEFAULT_MAX_BATCH = 256
THREADS_ENV = "PRAGMETER_ONNX_THREADS"  # ONNX Runtime threads per process (default: one per physical core)


def onnx_file(encoder_name: str, quantize: bool, opset: int = OPSET) -> Path:
    """Where the exported graph of ``encoder_name`` is cached."""
    from pragmeter.encoders import cache_dir
    from pragmeter.encoders.fingerprint import encoder_key

    # Keyed by the encoder's content (weights, tokenizer): a folder whose weights were replaced gets a new export.
    return cache_dir() / "onnx" / encoder_key(encoder_name) / f"opset{opset}-{'int8' if quantize else 'fp32'}.onnx"


class OnnxEncoder:
    """Drop-in for the SentenceTransformer calls ImpScore makes: ``encode``, ``tokenizer``, ``max_seq_length``."""

    def __init__(self, encoder_name: str, quantize: bool = False, threads: int | None = None,
                 tokens_per_batch: int = DEFAULT_TOKENS_PER_BATCH, max_batch: int = DEFAULT_MAX_BATCH) -> None:
        self.encoder_name = encoder_name
        self.quantize = quantize
        self.tokens_per_batch = tokens_per_batch
        self.max_batch = max_batch
        self._st_model = None
        fast = _FastTokenizer.from_folder(encoder_name) if onnx_file(encoder_name, quantize).is_file() else None
        if fast is not None:  # exported before: the tokenizer's own files, no torch (a fast start)
            self.tokenizer, self.max_seq_length, self.dimension = fast, fast.max_seq_length, fast.dimension
        else:  # the torch model gives the tokenizer and the graph to export (inputs match the official path)
            self.tokenizer = self._st.tokenizer
            self.max_seq_length = self._st.max_seq_length
            self.dimension = self._st.get_embedding_dimension()
        self.path = self._ensure_exported()
        self._session = self._open_or_rebuild(threads)
        self._inputs = [i.name for i in self._session.get_inputs()]

    @property
    def _st(self):
        if self._st_model is None:
            from pragmeter.encoders import load_encoder

            self._st_model = load_encoder(self.encoder_name, "cpu")
        return self._st_model

    # ---------------------------------------------------------------- export and cache
    def _ensure_exported(self) -> Path:
        path = onnx_file(self.encoder_name, self.quantize)
        if path.is_file():
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        fp32 = onnx_file(self.encoder_name, False)
        if not fp32.is_file():
            log.info("exporting %s to ONNX (once) -> %s", self.encoder_name, fp32)
            self._write_atomically(fp32, self._export)
        if self.quantize:
            log.info("quantizing %s to int8 (once) -> %s", self.encoder_name, path)
            self._write_atomically(path, lambda tmp: _quantize(fp32, tmp))
        return path

    @staticmethod
    def _write_atomically(path: Path, write) -> None:
        # Concurrent first uses (several Ray actors, two servers) each write their own file; the last rename wins.
        from pragmeter.io.atomic import atomic_path

        with atomic_path(path) as tmp:
            write(tmp)

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
                                 f"{str(error).splitlines()[0] if str(error) else ''}); use backend='torch'") from error

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

    # ---------------------------------------------------------------- encoding
    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids as sentence-transformers makes them (special tokens, truncated to the encoder's limit)."""
        return self.tokenizer(list(texts), truncation=True, max_length=self.max_seq_length,
                              return_attention_mask=False, return_token_type_ids=False)["input_ids"]

    def batches(self, texts: Sequence[str], ids: list[list[int]] | None = None) -> list[list[int]]:
        """Indices of ``texts`` grouped into batches of similar token length, bounded by the token budget."""
        lengths = [len(row) for row in (ids if ids is not None else self.token_ids(texts))]
        order = np.argsort(lengths, kind="stable")
        batches, current = [], []
        for index in order:
            # Sorted ascending, so the newest text is the longest: it sets the padded width of the batch.
            if current and ((len(current) + 1) * lengths[index] > self.tokens_per_batch
                            or len(current) >= self.max_batch):
                batches.append(current)
                current = []
            current.append(int(index))
        if current:
            batches.append(current)
        return batches

    def features(self, ids: list[list[int]]) -> dict[str, np.ndarray]:
        """The encoder's inputs for one batch, right-padded to its longest text (as the tokenizer pads)."""
        width = max(len(row) for row in ids)
        input_ids = np.full((len(ids), width), self.tokenizer.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        features = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        return {name: features[name] for name in self._inputs}

    def _run(self, features: dict[str, np.ndarray]) -> np.ndarray:
        """The graph's sentence embeddings for one batch (the runtime's one call)."""
        return self._session.run(None, features)[0]

    def encode(self, texts: Sequence[str], **_ignored) -> np.ndarray:
        """Sentence embeddings (float32, n × d); keyword options of SentenceTransformer.encode are accepted and
        ignored (batching is by token budget, output is always numpy)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
        ids = self.token_ids(list(unique))
        out = np.zeros((len(unique), self.dimension), dtype=np.float32)
        self._encode_batches(ids, self.batches(unique, ids), out)
        return out[np.asarray(inverse, dtype=np.int64).reshape(-1)]

    def _encode_batches(self, ids: list[list[int]], batches: list[list[int]], out: np.ndarray) -> None:
        """Fill ``out`` (rows = texts) batch by batch (OpenVinoEncoder runs several batches at once)."""
        for batch in batches:
            out[batch] = self._run(self.features([ids[i] for i in batch]))


class _FastTokenizer:
    """The encoder folder's ``tokenizer.json`` through the ``tokenizers`` library (what the transformers fast
    tokenizer runs, without importing transformers or torch), called the way OnnxEncoder and ImpScore call a
    transformers tokenizer. Used only for sentence-transformers folders of Transformer + mean/CLS Pooling."""

    def __init__(self, folder: Path, max_seq_length: int, dimension: int) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()  # tokenizer.json may carry a fixed padding and truncation: batches set theirs
        self._tokenizer.no_truncation()
        special = json.loads((folder / "special_tokens_map.json").read_text(encoding="utf-8"))
        pad = special.get("pad_token")
        pad = pad.get("content") if isinstance(pad, dict) else pad
        self.pad_token_id = self._tokenizer.token_to_id(pad) if pad else 0
        self.max_seq_length, self.dimension = max_seq_length, dimension

    @classmethod
    def from_folder(cls, encoder_name: str) -> "_FastTokenizer | None":
        """None when the folder lacks what is needed (then the sentence-transformers model is loaded instead)."""
        import importlib.util

        from pragmeter.encoders import require_encoder
        from pragmeter.encoders.registry import encoder_width

        if importlib.util.find_spec("tokenizers") is None:
            return None
        folder = Path(require_encoder(encoder_name))
        dimension = encoder_width(folder)  # None: not the plain Transformer-Pooling layout
        if dimension is None:
            return None
        try:
            config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
            if config.get("do_lower_case"):
                return None
            tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
            limit = min(int(config["max_seq_length"]), int(tokenizer_config.get("model_max_length", 1 << 30)))
            return cls(folder, limit, dimension)
        except (OSError, KeyError, ValueError, IndexError):
            return None

    def __call__(self, texts: Sequence[str], truncation: bool = False, max_length: int | None = None,
                 add_special_tokens: bool = True, **_ignored) -> dict[str, list[list[int]]]:
        if truncation and max_length:
            self._tokenizer.enable_truncation(max_length)
        try:
            encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        finally:
            self._tokenizer.no_truncation()
        return {"input_ids": [e.ids for e in encodings]}


@cache
def load_onnx_encoder(encoder_name: str, quantize: bool = False) -> "OnnxEncoder":
    """One shared encoder per process and setting (an ONNX Runtime session holds the weights once)."""
    return OnnxEncoder(encoder_name, quantize=quantize, threads=onnx_threads())


def onnx_threads() -> int | None:
    """``$PRAGMETER_ONNX_THREADS`` as a thread count (None: unset, ONNX Runtime's default)."""
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise PragmeterError(f"{THREADS_ENV}={value!r}: expected a whole number of threads >= 1 (or leave it unset)")
    return int(value)


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


def _quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8)
