"""Sentence encoders: names and packaged models (``registry``), how an encoder runs (``runtime``), the torch encoder
(sentence-transformers) and the graph encoders (``graph``, ``onnx``, ``openvino``, shared per process: ``shared``),
token ids and counts (``tokens``), the on-disk embedding cache (``embedding_cache``) and cache paths (``paths``)."""

from pragmeter.encoders.paths import CACHE_ENV, cache_dir, embeddings_dir
from pragmeter.encoders.registry import (CPU_BATCH_SIZE, DTYPES, GPU_BATCH_SIZE, canonical_name, default_batch_size,
                                         default_device, load_encoder, require_encoder, resolve_encoder)
from pragmeter.encoders.tokens import tokens_over_limit

__all__ = ["CACHE_ENV", "CPU_BATCH_SIZE", "DTYPES", "GPU_BATCH_SIZE", "cache_dir", "canonical_name",
           "default_batch_size", "default_device", "embeddings_dir", "load_encoder",
           "require_encoder", "resolve_encoder", "tokens_over_limit"]
