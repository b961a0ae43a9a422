"""The frozen sentence encoder as an exported graph on the CPU: one interface (:class:`GraphEncoder`), two runtimes
(``onnx.OnnxEncoder``, ``openvino.OpenVinoEncoder``), one process-wide instance per encoder content and runtime
(pragmeter.encoders.shared.load_graph_encoder).

Both take the texts the way sentence-transformers does (same token ids, same embeddings up to float rounding) and
differ only in preparing the graph and running a batch. Speed comes from batching texts by token length (little
padding) under a token budget, and from encoding repeated texts of one call once. Each text is tokenized once: the
same tokenization gives the ids and says whether the text was truncated.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pragmeter.encoders.runtime import Runtime
from pragmeter.errors import PragmeterError

INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
DEFAULT_MAX_BATCH = 256
# Options of SentenceTransformer.encode that ImpScore passes, with the one value a graph encoder gives: any other
# option or value is refused rather than silently ignored. batch_size: graph encoders batch by token budget instead.
ENCODE_OPTIONS = {"convert_to_numpy": True, "normalize_embeddings": False, "show_progress_bar": False}


def token_batches(lengths: Sequence[int], tokens_per_batch: int, max_batch: int = DEFAULT_MAX_BATCH) -> list[list[int]]:
    """Indices of inputs of ``lengths`` tokens grouped into batches of similar length: each batch padded to its
    longest holds at most ``tokens_per_batch`` tokens (a longer input alone) and ``max_batch`` inputs."""
    order = np.argsort(np.asarray(lengths, dtype=np.int64), kind="stable")
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        # Sorted ascending, so the newest input is the longest: it sets the padded width of the batch.
        if current and ((len(current) + 1) * lengths[index] > tokens_per_batch or len(current) >= max_batch):
            batches.append(current)
            current = []
        current.append(int(index))
    if current:
        batches.append(current)
    return batches


class GraphEncoder:
    """Drop-in for the SentenceTransformer calls ImpScore makes: ``encode``, ``max_seq_length``, plus
    ``encode_counted`` (embeddings and how many texts were truncated, from one tokenization). Subclasses prepare
    the graph in ``_prepare`` and run one padded batch in ``_run``."""

    backend = ""  # the Runtime backend the subclass runs

    def __init__(self, encoder_name: str, runtime: Runtime, tokens_per_batch: int,
                 max_batch: int = DEFAULT_MAX_BATCH) -> None:
        from pragmeter.encoders.tokens import FastTokenizer, TransformersTokenizer

        if runtime.backend != self.backend:
            raise PragmeterError(f"{type(self).__name__} runs backend={self.backend!r}, not {runtime.backend!r}")
        self.encoder_name, self.runtime = encoder_name, runtime
        self.tokens_per_batch, self.max_batch = tokens_per_batch, max_batch
        self._st_model = None
        # The folder's own tokenizer files: no torch, no transformers (a fast start); else the torch model's
        self.tokenizer = FastTokenizer.from_folder(encoder_name) or TransformersTokenizer(
            self._st.tokenizer, self._st.max_seq_length, self._st.get_embedding_dimension())
        self.max_seq_length, self.dimension = self.tokenizer.max_seq_length, self.tokenizer.dimension
        self._inputs: list[str] = list(INPUT_NAMES)
        self._prepare()

    def _prepare(self) -> None:
        """Export or find the graph and open it (sets ``self._inputs``, the graph's input names)."""
        raise NotImplementedError

    def _run(self, features: dict[str, np.ndarray]) -> np.ndarray:
        """The graph's sentence embeddings for one batch (the runtime's one call)."""
        raise NotImplementedError

    @property
    def precision(self) -> str:
        return self.runtime.precision

    @property
    def _st(self):
        """The sentence-transformers model (torch), loaded only to export the graph or for its tokenizer."""
        if self._st_model is None:
            from pragmeter.encoders import load_encoder

            self._st_model = load_encoder(self.encoder_name, "cpu")
        return self._st_model

    # ---------------------------------------------------------------- encoding
    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids as sentence-transformers makes them (special tokens, truncated to the encoder's limit)."""
        return self.tokenizer.tokenize(list(texts))[0]

    def count_truncated(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` are longer than the encoder's token limit (and truncated when encoded)."""
        return sum(self.tokenizer.tokenize(list(texts))[1])

    def batches(self, texts: Sequence[str], ids: list[list[int]] | None = None) -> list[list[int]]:
        """Indices of ``texts`` grouped into batches of similar token length, bounded by the token budget."""
        lengths = [len(row) for row in (ids if ids is not None else self.token_ids(texts))]
        return token_batches(lengths, self.tokens_per_batch, self.max_batch)

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

    def encode(self, texts: Sequence[str], batch_size: int | None = None, **options) -> np.ndarray:
        """Sentence embeddings (float32, n × d), called as SentenceTransformer.encode is; ``batch_size`` is accepted
        (batches follow the token budget instead), and of its other options only the values in ENCODE_OPTIONS."""
        for name, value in options.items():
            if name not in ENCODE_OPTIONS or value != ENCODE_OPTIONS[name]:
                raise PragmeterError(f"{type(self).__name__}.encode does not take {name}={value!r} (it returns "
                                     "unnormalised numpy embeddings without a progress bar)")
        return self.encode_counted(texts)[0]

    def encode_counted(self, texts: Sequence[str]) -> tuple[np.ndarray, int]:
        """Sentence embeddings and how many of ``texts`` (counting repeats) were truncated."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), 0
        unique, inverse = np.unique(np.asarray(texts, dtype=object), return_inverse=True)
        inverse = np.asarray(inverse, dtype=np.int64).reshape(-1)
        ids, truncated = self.tokenizer.tokenize(list(unique))
        out = np.zeros((len(unique), self.dimension), dtype=np.float32)
        self._encode_batches(ids, self.batches(unique, ids), out)
        return out[inverse], int(np.asarray(truncated, dtype=np.int64)[inverse].sum())

    def _encode_batches(self, ids: list[list[int]], batches: list[list[int]], out: np.ndarray) -> None:
        """Fill ``out`` (rows = texts) batch by batch (OpenVinoEncoder runs several batches at once)."""
        for batch in batches:
            out[batch] = self._run(self.features([ids[i] for i in batch]))
