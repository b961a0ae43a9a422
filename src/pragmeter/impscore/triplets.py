"""ImpScore's training corpus as embedded triplets: each split's (implicit, explicit, negative) embeddings, computed
once per distinct text on scoring's fast path and cached on disk (:func:`embed_corpus`), the heads' metrics over a
split (:func:`evaluate_heads`) and per-pair loss weights by source (:func:`train_weights`). What training, fine-tuning
of the encoder and distillation all read."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from pragmeter.encoders.runtime import Runtime
from pragmeter.impscore.accuracy import triplet_metrics
from pragmeter.impscore.heads import ImpScoreHeads
from pragmeter.impscore.losses import triplet_outputs


# Texts per step of the corpus embedding (unless $PRAGMETER_CHUNK_SIZE says otherwise): the graph encoder keeps more
# batches in flight and drains its queue less often than in scoring's smaller steps, and a step is still seconds.
CORPUS_STEP = 4096


CORPUS_BACKENDS = ("openvino", "torch")  # ONNX Runtime is not a corpus backend
CORPUS_TORCH_PRECISIONS = ("fp32",)  # the torch corpus embedding runs fp32


def corpus_runtime(backend: str = "auto", precision: str = "auto", encoder: str | None = None,
                   device: str | None = None) -> Runtime:
    """The Runtime that embeds a corpus, ``auto`` resolved by scoring's rules (pragmeter.encoders.runtime.resolve_runtime)
    among ``CORPUS_BACKENDS``: OpenVINO on a CPU, torch on a GPU ``device`` or where OpenVINO cannot run; a torch
    corpus embedding runs fp32."""
    from pragmeter.encoders.runtime import resolve_runtime

    return resolve_runtime(backend, precision, encoder=encoder, device=device, backends=CORPUS_BACKENDS,
                           torch_precisions=CORPUS_TORCH_PRECISIONS, purpose="the corpus embedding")


@dataclass
class TripletEmbeddings:
    """Embeddings of one split: implicit (e1), positive explicit (e2), negative explicit (e3), each row's source,
    and whether its positive is a paraphrase (pragmatic; None = all are)."""

    e1: torch.Tensor
    e2: torch.Tensor
    e3: torch.Tensor
    sources: list[str]
    pragmatic: torch.Tensor | None = None
    e4: torch.Tensor | None = None  # the source's hard negative where it gives one (else a copy of e3)
    hard: torch.Tensor | None = None  # which rows have a source hard negative

    def __len__(self) -> int:
        return self.e1.shape[0]


def corpus_texts(corpus: pd.DataFrame, hard_texts: pd.Series | None = None) -> list[str]:
    """The distinct texts of ``corpus``'s triplets and of the non-empty ``hard_texts``, as :func:`embed_corpus` embeds
    them: shortest first, so each step of the encoder holds texts of one length and its batches pad little."""
    columns = [corpus["implicit"], corpus["explicit"], corpus["negative"]]
    if hard_texts is not None:
        columns.append(hard_texts[hard_texts != ""])
    return sorted(pd.unique(pd.concat(columns)).tolist(), key=len)


def embed_corpus(corpus: pd.DataFrame, encoder: str, cache_root: Path, batch_size: int | None = None,
                 device: str | None = None, show_progress: bool = True, backend: str = "torch",
                 precision: str = "fp32", hard_negatives: bool = True,
                 runtime: Runtime | None = None) -> dict[str, TripletEmbeddings]:
    """Embeddings per split, computing only texts missing from the on-disk cache, keyed by the runtime's
    :meth:`~pragmeter.encoders.runtime.Runtime.cache_key` as ImpScore's scores are (``batch_size`` None: the device's
    default, see pragmeter.encoders.default_batch_size). ``runtime``: how the encoder runs; None: ``backend`` (torch
    or openvino), ``precision`` (the openvino graph's fp32 or bf16) and ``device``, either "auto", as
    :func:`corpus_runtime` resolves them. The texts go through the encoder in steps of CORPUS_STEP texts
    ($PRAGMETER_CHUNK_SIZE overrides it), each committed to the cache: ``show_progress`` draws a bar on stderr
    (counts, rate, ETA) at once and moves it every step. ``hard_negatives``: embed the corpus's ``hard_negative``
    column too (e4, hard); only an objective with source hard negatives reads it
    (impscore.training.uses_source_hard_negatives)."""
    from tqdm import tqdm

    from pragmeter.encoders import default_batch_size, load_encoder
    from pragmeter.encoders.embedding_cache import EmbeddingCache
    from pragmeter.errors import PragmeterError
    from pragmeter.impscore.scoring import chunk_size

    if runtime is None:
        try:
            runtime = corpus_runtime(backend, precision, encoder, device)
        except PragmeterError as error:
            raise ValueError(str(error)) from None
    hard_texts = (corpus["hard_negative"].fillna("") if hard_negatives and "hard_negative" in corpus.columns
                  else None)
    texts = corpus_texts(corpus, hard_texts)
    # drawn before the cache is read: a large corpus's lookups take seconds
    with tqdm(total=len(texts), desc=f"embedding the corpus ({encoder}, {runtime.backend} {runtime.precision})",
              unit="text", disable=not show_progress, file=sys.stderr) as bar:
        # keyed by the encoder's content, as scoring's cache: a replaced encoder folder never trains on stale vectors
        cache = EmbeddingCache(cache_root, runtime.cache_key(encoder))
        bar.reset(total=sum(1 for t in texts if t not in cache))

        def encode(batch: list[str]) -> np.ndarray:
            if runtime.graph:
                from pragmeter.encoders.shared import load_graph_encoder

                return load_graph_encoder(encoder, runtime).encode(batch)
            # as ImpScore loads its torch encoder: float32 shares the one cached encoder
            model = load_encoder(encoder, runtime.device, *(() if runtime.dtype == "float32" else (runtime.dtype,)))
            return model.encode(batch, batch_size=batch_size or default_batch_size(str(model.device)),
                                convert_to_numpy=True, show_progress_bar=False)

        matrix = cache.get_or_compute(texts, encode, chunk_size=chunk_size(CORPUS_STEP), progress=bar.update)
    row_of = {text: i for i, text in enumerate(texts)}
    table = torch.from_numpy(np.ascontiguousarray(matrix, dtype=np.float32))
    splits = {}
    for split, part in corpus.groupby("split", sort=False):
        index = {c: torch.tensor([row_of[t] for t in part[c]], dtype=torch.long) for c in ("implicit", "explicit", "negative")}
        # load_corpus/build_corpus give every corpus a pragmatic column; a hand-made frame without it is all paraphrases
        pragmatic = torch.tensor(part["pragmatic"].to_numpy(dtype=bool)) if "pragmatic" in part.columns else None
        e4 = hard = None
        if hard_texts is not None:
            part_hard = hard_texts.loc[part.index]
            hard = torch.tensor((part_hard != "").to_numpy())
            e4 = table[torch.tensor([row_of[h] if h else row_of[n] for h, n in zip(part_hard, part["negative"])],
                                    dtype=torch.long)]
        splits[split] = TripletEmbeddings(table[index["implicit"]], table[index["explicit"]], table[index["negative"]],
                                          part["source"].tolist(), pragmatic, e4, hard)
    return splits


def evaluate_heads(heads: ImpScoreHeads, data: TripletEmbeddings, batch_size: int = 65536):
    """Metrics over a split; returns (metrics dict, concatenated TripletOutputs)."""
    from pragmeter.impscore.losses import TripletOutputs

    heads.eval()
    parts = []
    with torch.inference_mode():
        for start in range(0, len(data), batch_size):
            sl = slice(start, start + batch_size)
            parts.append(triplet_outputs(heads, data.e1[sl], data.e2[sl], data.e3[sl]))
    out = TripletOutputs(*(torch.cat([getattr(p, f) for p in parts]) for f in
                           ("implicit", "positive", "negative", "distance_positive", "distance_negative")))
    return triplet_metrics(out, data.pragmatic), out


def check_source_weights(source_weights: dict[str, float], sources, where: str = "the training split") -> None:
    """Unknown sources and non-positive weights are errors, not ignored (``where`` names what ``sources`` lists)."""
    unknown = set(source_weights) - set(sources)
    if unknown:
        raise ValueError(f"source weights name sources not in {where}: {', '.join(sorted(unknown))}")
    if any(w <= 0 for w in source_weights.values()):
        raise ValueError("source weights must be positive")


def train_weights(sources: list[str], source_weights: dict[str, float]) -> torch.Tensor:
    """Per-pair loss weights: ``source_weights[source]`` (default 1)."""
    check_source_weights(source_weights, sources)
    return torch.tensor([source_weights.get(s, 1.0) for s in sources], dtype=torch.float32)
