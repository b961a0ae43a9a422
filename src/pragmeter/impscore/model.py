"""ImpScore: implicitness of sentences and pragmatic distance between them, from a frozen encoder plus trained heads.

>>> from pragmeter import ImpScore
>>> model = ImpScore.load()                      # the shipped default, on this CPU's fast path (OpenVINO)
>>> model.score(["You are talking too loudly.", "I'm finding it a bit hard to concentrate."])
array([...], dtype=float32)

A model folder holds ``config.json`` (encoder name, head shape, training record), ``heads.safetensors`` and a
model card ``README.md``, and, when encoder layers were trained with the heads, their tensors as
``encoder-N.safetensors`` shards (pragmeter.encoders.finetuned); it rebuilds offline from those files plus the
encoder.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pragmeter.errors import DataError, PragmeterError
from pragmeter.impscore.numpy_heads import NumpyHeads
from pragmeter.packaged import IMPSCORE
from pragmeter.text import invalid_text_reason

log = logging.getLogger("pragmeter")

# The packaged models, the default and the variable that names another (ImpScore.load(), every command's --impscore)
MODELS_DIR, DEFAULT_MODEL, DEFAULT_MODEL_ENV = IMPSCORE.folder, IMPSCORE.default, IMPSCORE.env
CONFIG_FILE, WEIGHTS_FILE, CARD_FILE = "config.json", "heads.safetensors", "README.md"
BF16_CHECK_KEY = "bf16_check"  # a fine-tuned encoder's bf16 scores against fp32 (benchmarks/bench_speed.py)
FORMAT = "pragmeter-impscore"


def shipped_models() -> list[str]:
    return IMPSCORE.names()


def default_model() -> str:
    """The model used when none is named: ``$PRAGMETER_IMPSCORE`` when set, else the shipped default."""
    return IMPSCORE.default_name()


def resolve_model_dir(name_or_path: str | os.PathLike | None) -> Path:
    folder = IMPSCORE.locate(name_or_path)
    if folder is None:
        names = ", ".join(shipped_models()) or "(none)"
        raise PragmeterError(f"no ImpScore model at {str(name_or_path)!r}: give a model folder or one of: {names}")
    return folder


def read_model_config(folder: Path) -> dict:
    """A model folder's config.json, checked (a DataError naming it when it is not JSON, or its encoder or heads
    entries are missing or of the wrong type)."""
    from pragmeter.impscore.numpy_heads import heads_config_problem

    path = folder / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise DataError(f"{path}: not readable JSON ({type(error).__name__}: {error})") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT:
        found = config.get("format") if isinstance(config, dict) else type(config).__name__
        raise DataError(f"{path}: not a pragmeter ImpScore config (format={found!r})")
    if not isinstance(config.get("encoder"), str) or not config["encoder"].strip():
        raise DataError(f"{path}: 'encoder' must name the sentence encoder, got {config.get('encoder')!r}")
    problem = heads_config_problem(config.get("heads"))
    if problem:
        raise DataError(f"{path}: 'heads' {problem}")
    return config


def read_heads(folder: Path, config: dict) -> dict[str, np.ndarray]:
    """The heads' weights (numpy), checked against the config: a DataError naming heads.safetensors when it is not
    a safetensors file (truncated, empty, a pickle) or its tensors are not the shapes the config's heads need."""
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    from pragmeter.impscore.numpy_heads import heads_weights_problem

    from pragmeter.encoders.finetuned import folder_file

    path = folder_file(folder, WEIGHTS_FILE, str(folder / CONFIG_FILE))
    try:
        weights = load_file(str(path))
    except (OSError, ValueError, SafetensorError) as error:
        raise DataError(f"{path}: not readable safetensors ({type(error).__name__}: {error})") from None
    problem = heads_weights_problem(config["heads"], {name: value.shape for name, value in weights.items()})
    if problem:
        raise DataError(f"{path}: {problem} (written by another training than {CONFIG_FILE}?)")
    broken = sorted(name for name, value in weights.items() if not np.isfinite(value).all())
    if broken:  # every score would be NaN, which file scoring would report as missing for each row
        raise DataError(f"{path}: tensor {broken[0]!r} holds NaN or infinite values (a diverged training?); "
                        "this model cannot score")
    return weights


def model_encoder(folder: Path, encoder: str) -> str:
    """The encoder a model folder's config names, as :func:`pragmeter.encoders.registry.config_encoder` reads it: a
    packaged name, a folder (a relative path read from the model folder, never from the working directory) or a hub
    name already in the local cache."""
    from pragmeter.encoders.registry import config_encoder

    return config_encoder(folder, encoder, str(folder / CONFIG_FILE))
    if (folder / encoder).is_dir():
        return str((folder / encoder).resolve())
    if Path(encoder).is_dir():
        raise DataError(f"{folder / CONFIG_FILE}: encoder {encoder!r} is not a folder in the model folder (only in "
                        "the working directory, which a model's relative encoder path does not read)")
    return encoder


@dataclass
class Features:
    """Pragmatic (h_p) and semantic (h_s) features, one row per sentence."""

    pragmatic: np.ndarray
    semantic: np.ndarray


class ImpScore:
    def __init__(self, heads, encoder_name: str, config: dict | None = None, runtime=None,
                 batch_size: int | None = None, embedding_cache=None) -> None:
        """``runtime`` (pragmeter.encoders.runtime.Runtime): how the encoder runs, resolved once by the caller
        (:meth:`load` resolves it for a model folder); None: torch, as resolve_runtime resolves it (the heads given
        are torch heads)."""
        if runtime is None:
            from pragmeter.encoders.runtime import resolve_runtime

            runtime = resolve_runtime("torch", encoder=encoder_name)
        # Torch heads, or NumpyHeads (graph backends: scoring never imports torch; torch heads are built on demand).
        self._numpy_heads = heads if isinstance(heads, NumpyHeads) else None
        self._heads = None if self._numpy_heads is not None else heads.eval()
        self.runtime = runtime  # how the frozen encoder runs; the heads always run in float32
        self.encoder_name = encoder_name
        self.config = config or {}
        self.batch_size = batch_size  # None: CPU_BATCH_SIZE on a CPU, GPU_BATCH_SIZE on a GPU
        self.embedding_cache = embedding_cache
        self.truncated = 0  # texts longer than the encoder's limit seen so far (truncated by the encoder)
        self.progress = False  # True: every encode shows a bar, as show_progress_bar=True does for one call
        self.config_path: Path | None = None  # the folder's config.json (named when the encoder does not fit)
        self._encoder = None

    def __repr__(self) -> str:  # what a notebook shows: which model, encoder and arithmetic (no encoder load)
        return (f"ImpScore(model={self.config.get('name', 'custom')!r}, encoder={self.encoder_label!r}, "
                f"backend={self.backend!r}, precision={self.precision!r})")

    @property
    def backend(self) -> str:
        """How the frozen encoder runs: openvino, onnx or torch."""
        return self.runtime.backend

    @property
    def device(self) -> str:
        return self.runtime.device

    @property
    def heads(self):
        """The torch heads (built from the numpy weights on first use when the model was loaded for ONNX)."""
        if self._heads is None:
            from pragmeter.impscore.heads import ImpScoreHeads

            self._heads = ImpScoreHeads.from_numpy(self._numpy_heads, self.device)
        return self._heads

    @heads.setter
    def heads(self, heads) -> None:
        self._heads, self._numpy_heads = heads.eval(), None

    @property
    def heads_config(self):
        return (self._numpy_heads or self._heads).config

    # ---------------------------------------------------------------- loading and saving
    @classmethod
    def load(cls, name: str | os.PathLike | None = None, *, backend: str = "auto", precision: str = "auto",
             device: str | None = None, threads: int | None = None, batch_size: int | None = None,
             cache: bool | str | os.PathLike | None = None, runtime=None) -> "ImpScore":
        """The one way to load ImpScore: a shipped model by ``name`` (default: the package default) or a model
        folder; every other argument by keyword, named as :meth:`pragmeter.interpreter.model.Interpreter.load`
        names them.

        ``backend``: "auto" (OpenVINO on a CPU, torch on a GPU device), "openvino" (fp32, or bf16 where the CPU has
        it; see pragmeter.encoders.openvino), "torch" (sentence-transformers; on a GPU in fp16 with large
        length-sorted batches unless ``precision``/``batch_size`` say otherwise) or "onnx" (ONNX Runtime, fp32).
        ``precision``: auto | fp32 | bf16 | fp16 (auto is bf16 where the CPU has AVX-512 BF16 or AMX and the
        encoder's bf16 scores are within bounds, else fp32; fp16 on a CUDA device); ``threads``: the graph runtime's
        threads. All are resolved once, for this model's encoder, by pragmeter.encoders.runtime.resolve_runtime
        (``runtime``: a resolved one, e.g. of a caller that resolved its wish for several models). ``cache``: True or a folder gives the model the on-disk
        embedding cache (True: ``$PRAGMETER_CACHE/embeddings``), keyed by :meth:`embedding_key`. A bad
        ``$PRAGMETER_CHUNK_SIZE`` is refused before the model loads (not half-way through a job)."""
        from pragmeter.impscore.scoring import chunk_size

        chunk_size()
        folder = resolve_model_dir(name)
        config = read_model_config(folder)
        from pragmeter.encoders import require_encoder
        from pragmeter.encoders.finetuned import WEIGHTS_KEY, finetuned_encoder
        from pragmeter.encoders.registry import encoder_width

        if runtime is None:
            from pragmeter.encoders.runtime import resolve_runtime

            # layers a model fine-tuned are another encoder: bf16 as for the base only where the model's config
            # records them within the bf16 bounds
            from pragmeter.encoders.runtime import NOT_CHECKED

            recorded = config.get(BF16_CHECK_KEY)
            check = None if WEIGHTS_KEY not in config else NOT_CHECKED if recorded is None \
                else isinstance(recorded, dict) and recorded.get("within_bounds") is True
            runtime = resolve_runtime(backend, precision, threads, config["encoder"], device=device,
                                      bf16_check=check)
        encoder_name = model_encoder(folder, config["encoder"])
        if WEIGHTS_KEY in config:  # encoder layers trained with the heads: the base encoder with them in place
            encoder_name = str(finetuned_encoder(encoder_name, folder, config[WEIGHTS_KEY], str(folder / CONFIG_FILE)))
        location = require_encoder(encoder_name)  # a missing encoder fails now, with the install command
        heads = NumpyHeads(config["heads"], read_heads(folder, config))  # checked against the config, both backends
        width = encoder_width(location)  # an encoder of another width fails now too, before it is loaded or exported
        if width is not None and width != heads.config.embedding_dim:
            raise DataError(f"{folder / CONFIG_FILE}: encoder {config['encoder']!r} gives {width}-wide embeddings; "
                            f"the heads take {heads.config.embedding_dim} (embedding_dim)")
        if not runtime.graph:
            from pragmeter.impscore.heads import ImpScoreHeads

            heads = ImpScoreHeads.from_numpy(heads, runtime.device)
        model = cls(heads, encoder_name, config, batch_size=batch_size, runtime=runtime)
        model.config_path = folder / CONFIG_FILE
        if cache is not None and cache is not False:
            from pragmeter.encoders.embedding_cache import attach_embedding_cache

            attach_embedding_cache(model, None if cache is True else cache)
        return model

    def save(self, folder: str | os.PathLike, card: str | None = None, extra_config: dict | None = None,
             encoder_weights: dict | None = None, base_encoder: str | None = None,
             also: Callable[[Path], object] | None = None) -> Path:
        """Write the model folder atomically: every file goes to a staging folder beside it that then replaces
        ``folder`` whole, so a run killed while saving leaves the old model intact, never new heads beside an old
        config. ``encoder_weights`` (tensor name -> tensor): encoder tensors trained with the heads, stored as fp16
        shards that loading applies to ``base_encoder`` (see pragmeter.encoders.finetuned); a loaded model that
        carries such shards keeps them. ``also(staging)`` writes further files into the same folder."""
        import shutil

        from safetensors.torch import save_file

        from pragmeter.encoders.finetuned import WEIGHTS_KEY, shard_files
        from pragmeter.io.atomic import replace_folder

        config = {**self.config, "format": FORMAT, "version": 1, "encoder": self.encoder_name,
                  "heads": self.heads.config.to_dict(), **(extra_config or {})}

        def write(staging: Path) -> None:
            if encoder_weights is not None:
                config["encoder"] = base_encoder or self.encoder_name
                config[WEIGHTS_KEY] = shard_files(encoder_weights, staging)
            elif WEIGHTS_KEY in self.config:  # re-saved after loading: the base's name and the same shards
                if self.config_path is None:
                    raise PragmeterError("this model's encoder shards were never saved; give encoder_weights")
                config["encoder"] = self.config["encoder"]
                for shard in self.config[WEIGHTS_KEY]:
                    shutil.copyfile(self.config_path.parent / shard["file"], staging / shard["file"])
            save_file({k: v.detach().cpu().contiguous() for k, v in self.heads.state_dict().items()},
                      staging / WEIGHTS_FILE)
            (staging / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
            if card is not None:
                (staging / CARD_FILE).write_text(card, encoding="utf-8")
            if also is not None:
                also(staging)

        folder = replace_folder(Path(folder), write)
        self.config = config
        self.config_path = folder / CONFIG_FILE
        return folder

    # ---------------------------------------------------------------- encoding
    @property
    def encoder(self):
        if self._encoder is None and self.runtime.graph:
            from pragmeter.encoders.shared import load_graph_encoder

            self._encoder = load_graph_encoder(self.encoder_name, self.runtime)
        if self._encoder is None:
            from pragmeter.encoders import load_encoder

            dtype = self.encoder_dtype
            # float32 shares the one cached encoder with every other user of load_encoder(name, device)
            extra = () if dtype == "float32" else (dtype,)
            self._encoder = load_encoder(self.encoder_name, self.device, *extra)
        return self._encoder

    @property
    def encoder_dtype(self) -> str:
        """The precision the encoder runs in, as torch names its dtype (float32, bfloat16, float16)."""
        return self.runtime.dtype

    @property
    def precision(self) -> str:
        """The encoder's precision: fp32, bf16 or fp16 (torch on a GPU)."""
        return self.runtime.precision

    def embedding_key(self) -> str:
        """What produced this model's embeddings, as the embedding cache keys them: its runtime's
        :meth:`~pragmeter.encoders.runtime.Runtime.cache_key` of its encoder (content hash, backend, precision)."""
        return self.runtime.cache_key(self.encoder_name)

    def _check(self, texts: Sequence[str]) -> list[str]:
        if isinstance(texts, str):
            texts = [texts]
        texts = list(texts)
        for index, text in enumerate(texts):
            reason = invalid_text_reason(text)
            if reason:
                raise PragmeterError(f"text {index}: {reason}")
        return texts

    def _count_truncated(self, over: int) -> None:
        if over and not self.truncated:
            log.warning("texts longer than the encoder's %d-token limit are truncated (counted in .truncated)",
                        self.encoder.max_seq_length)
        self.truncated += over

    def _encode_now(self, texts: list[str]) -> np.ndarray:
        if self.runtime.graph:  # one tokenization gives the ids and the count of truncated texts
            embeddings, over = self.encoder.encode_counted(texts)
            self._count_truncated(over)
            return embeddings
        from pragmeter.encoders import default_batch_size, tokens_over_limit
        from pragmeter.encoders.tokens import cut_long_text, token_counter

        encoder = self.encoder
        # a huge text is cut before sentence-transformers tokenizes it whole (the tokens it keeps are the same)
        count = token_counter(encoder.tokenizer)
        texts = [cut_long_text(text, encoder.max_seq_length, count) for text in texts]
        self._count_truncated(tokens_over_limit(encoder, texts))
        batch_size = self.batch_size or default_batch_size(str(getattr(encoder, "device", "cpu")))
        # sentence-transformers sorts the texts by length before batching, so large batches pad little.
        embeddings = encoder.encode(texts, batch_size=batch_size, convert_to_numpy=True,
                                    normalize_embeddings=False, show_progress_bar=False)
        return np.asarray(embeddings, dtype=np.float32)  # half-precision encoders: the heads and caches take float32

    def _encode_or_reuse(self, texts: list[str]) -> np.ndarray:
        if self.embedding_cache is not None:
            return self.embedding_cache.get_or_compute(texts, self._encode_now)
        return np.asarray(self._encode_now(texts), dtype=np.float32)

    def encode(self, texts: Sequence[str], show_progress_bar: bool = False) -> np.ndarray:
        """Frozen-encoder sentence embeddings (not normalized, as in the paper). ``show_progress_bar``: a bar on
        stderr, moving a step ($PRAGMETER_CHUNK_SIZE texts, default 256) at a time."""
        texts = self._check(texts)
        if not texts:
            return np.zeros((0, self.heads_config.embedding_dim), dtype=np.float32)
        if show_progress_bar or self.progress:
            from pragmeter.impscore.scoring import in_steps

            embeddings = in_steps(self._encode_or_reuse, texts, "embedding", progress=True)
        else:
            embeddings = self._encode_or_reuse(texts)
        width = self.heads_config.embedding_dim
        if embeddings.ndim != 2 or embeddings.shape[1] != width:  # else the heads fail on a matrix product
            raise DataError(f"{self.config_path or 'the model config'}: encoder {self.encoder_name!r} gives "
                            f"{embeddings.shape[-1]}-wide embeddings; the heads take {width} (embedding_dim)")
        # Every number (score, features, distance, the service's answers) comes from these rows: a damaged encoder
        # that gives NaN or infinity is an error here, never a NaN score that a table would show as a missing cell.
        broken = ~np.isfinite(embeddings).all(axis=1)
        if broken.any():
            raise DataError(f"{self.config_path or 'the model config'}: encoder {self.encoder_name!r} gives NaN or "
                            f"infinite values for text {int(np.argmax(broken))} ({int(broken.sum())} of {len(texts)}); "
                            "its weights are damaged, no score is given")
        return embeddings

    # ---------------------------------------------------------------- scores
    def _heads_on(self, embeddings: np.ndarray):
        import torch

        with torch.inference_mode():
            tensor = torch.as_tensor(embeddings, dtype=torch.float32, device=self.heads.W_p.device)
            return self.heads(tensor)

    def score_embeddings(self, embeddings: np.ndarray) -> np.ndarray:
        if self._numpy_heads is not None:
            return self._numpy_heads(embeddings)[0]
        return self._heads_on(embeddings)[0].cpu().numpy()

    def score(self, texts: Sequence[str], show_progress_bar: bool = False) -> np.ndarray:
        """Implicitness of each text: 1 − cos(h_s, h_p W_t) ∈ [0, 2] for the default variant (``show_progress_bar``:
        as in :meth:`encode`)."""
        return self.score_embeddings(self.encode(texts, show_progress_bar))

    def embed(self, texts: Sequence[str], show_progress_bar: bool = False) -> Features:
        """Pragmatic and semantic features of each text (``show_progress_bar``: as in :meth:`encode`)."""
        return self.features_of_embeddings(self.encode(texts, show_progress_bar))

    def features_of_embeddings(self, embeddings: np.ndarray) -> Features:
        """Pragmatic and semantic features of encoder embeddings already computed (see :meth:`encode`)."""
        if self._numpy_heads is not None:  # the fast path: no torch
            _, h_p, h_s = self._numpy_heads(embeddings)
            return Features(pragmatic=h_p, semantic=h_s)
        _, h_p, h_s = self._heads_on(embeddings)
        return Features(pragmatic=h_p.cpu().numpy(), semantic=h_s.cpu().numpy())

    def pragmatic_distance(self, a: str | Sequence[str], b: str | Sequence[str]) -> float | np.ndarray:
        """Pragmatic distance ‖h_p(a) − h_p(b)‖ of two texts, or element-wise for two equal-length lists."""
        single = isinstance(a, str) and isinstance(b, str)
        left, right = self._check(a), self._check(b)
        if len(left) != len(right):
            raise PragmeterError(f"pragmatic_distance needs lists of equal length ({len(left)} vs {len(right)})")
        distinct = list(dict.fromkeys(left + right))  # a reference compared with many options is embedded once
        row = {text: i for i, text in enumerate(distinct)}
        features = self.embed(distinct).pragmatic
        distances = self.distances_of_features(features[[row[t] for t in left]], features[[row[t] for t in right]])
        return float(distances[0]) if single else distances

    def distance_matrix(self, texts: Sequence[str]) -> np.ndarray:
        """All pairwise pragmatic distances of ``texts`` (n × n)."""
        h_p = self.embed(texts).pragmatic
        return self.distances_of_features(h_p[:, None, :], h_p[None, :, :])

    def distances_of_features(self, h_a: np.ndarray, h_b: np.ndarray) -> np.ndarray:
        """Pragmatic distances of feature rows (broadcast), by the numpy heads when loaded for a graph backend."""
        if self._numpy_heads is not None:
            return self._numpy_heads.pragmatic_distance(*np.broadcast_arrays(h_a, h_b))
        import torch

        a, b = (torch.as_tensor(np.ascontiguousarray(x)) for x in np.broadcast_arrays(h_a, h_b))
        return self.heads.pragmatic_distance_from_features(a, b).numpy()

    @property
    def encoder_label(self) -> str:
        """The encoder as signatures name it: its name, or for a model folder carrying fine-tuned encoder layers the
        base's name and the key of those layers (not the cache folder they were applied in)."""
        from pragmeter.encoders.finetuned import WEIGHTS_KEY, weights_key

        shards = self.config.get(WEIGHTS_KEY)
        return f"{self.config['encoder']}+ft-{weights_key(shards)}" if shards else self.encoder_name

    def signature(self) -> str:
        """A short string naming the model, encoder and variant, and the runtime that produced the numbers (bf16
        scores differ from fp32 ones within the bounds of pragmeter.encoders.runtime): its Runtime.signature."""
        h = self.heads_config
        return (f"impscore|model:{self.config.get('name', 'custom')}|encoder:{self.encoder_label}|"
                f"l:{h.dim}|t:{h.transform}|imp:{h.imp_metric}|prag:{h.prag_metric}|v:{self.config.get('version', 1)}"
                f"|{self.runtime.signature()}")
