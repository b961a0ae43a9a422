"""A frozen sentence encoder with an RBF support-vector machine on its embeddings: the ISHate paper's USE+SVM form
(Ocampo et al., EACL 2023, Table 3), with a sentence-transformers encoder instead of USE.

Nothing of the encoder is trained: each text is embedded once (L2-normalised; through the shared on-disk embedding
cache, so runs that share texts, like the augmentation rows of one task, embed them once), on scoring's fast path
(:func:`embedding_runtime`, a Runtime: OpenVINO on a CPU, bf16 where the CPU has it and the encoder's bf16 is within
bounds; the folder records it and prediction embeds the same way), and scikit-learn's ``SVC`` (libsvm, one-vs-one) is
fitted for each C of a grid; the C with the best validation metric is kept. On a CPU this takes minutes where
fine-tuning takes tens of minutes to hours. Embedding and fitting show progress bars (counts, ETA).

A model folder holds ``svm.safetensors`` (support vectors, dual coefficients, intercepts, support counts per
class), ``config.json`` (pragmeter settings as for a fine-tuned folder, plus the kernel's gamma and C), the README.md
card and metrics.json. Prediction is numpy over those arrays (no pickle is ever written or read); it reproduces
scikit-learn's one-vs-one decision values and their one-vs-rest vote scores. ``probabilities`` are the softmax of
those vote scores: they order labels as the SVM does, but are not calibrated.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from pragmeter.classify.examples import Examples, run_fingerprint
from pragmeter.classify.model import (ClassifierSettings, base_encoder, check_finite_tensors, check_probabilities,
                                      decide, pick_device, read_settings)
from pragmeter.encoders.runtime import Runtime
from pragmeter.errors import DataError, InvalidParameter, PragmeterError
from pragmeter.io.atomic import atomic_path, replace_folder, write_json_atomic
from pragmeter.metrics.classification import classification_report

log = logging.getLogger("pragmeter")

C_GRID = (1.0, 4.0, 16.0)
_ARRAYS = ("support_vectors", "dual_coef", "intercept", "n_support")
_KERNEL_ROWS = 1024  # texts per kernel block: bounds memory at rows x support vectors doubles
BACKENDS = ("openvino", "torch")  # how the frozen encoder runs (pragmeter.encoders.runtime.resolve_runtime)
TORCH_PRECISIONS = ("fp32", "bf16")  # on torch: fp32 (auto), or bf16 autocast



def parse_c_values(text: str) -> list[float]:
    """The C grid of ``--svm-c``: comma-separated positive numbers, e.g. ``1,4,16``."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or any(not v > 0 for v in values):
        raise InvalidParameter("svm_c", text, "expected comma-separated positive numbers, e.g. 1,4,16")
    return values

def embedding_runtime(precision: str = "auto", device: str | None = None, encoder: str | None = None,
                      backend: str = "auto") -> Runtime:
    """The Runtime of an svm head's frozen encoder, resolved by pragmeter.encoders.runtime.resolve_runtime as scoring
    resolves it, among the backends an svm head runs (``BACKENDS``): OpenVINO on a CPU (``precision`` auto: bf16
    where the CPU has it and the encoder's bf16 is within bounds, else fp32), torch on a GPU ``device`` or where
    OpenVINO cannot run (``TORCH_PRECISIONS``: fp32 for auto, bf16 as autocast)."""
    from pragmeter.encoders.runtime import resolve_runtime

    return resolve_runtime(backend, precision, encoder=encoder, device=device, backends=BACKENDS,
                           torch_precisions=TORCH_PRECISIONS, purpose="an svm head's encoder")


class EmbeddingSVMClassifier:
    WEIGHTS_FILE = "svm.safetensors"

    def __init__(self, settings: ClassifierSettings, arrays: dict[str, np.ndarray], gamma: float, c: float,
                 device: str | None = None, precision: str = "fp32", backend: str = "torch",
                 runtime: Runtime | None = None):
        """``runtime``: how the frozen encoder runs (prediction embeds as the fit did); None: ``backend`` and
        ``precision`` on ``device`` (a graph backend runs on the CPU), resolved by :func:`embedding_runtime`."""
        if settings.input_kind != "single":
            raise PragmeterError("the svm head classifies single texts; sentence pairs need the fine-tuned head")
        if runtime is None:
            if backend not in BACKENDS:
                raise PragmeterError(f"the svm head's encoder runs through torch or openvino, not {backend!r}")
            runtime = embedding_runtime(precision, None if backend == "openvino" else device, None, backend)
        self.settings, self.gamma, self.c = settings, float(gamma), float(c)
        self.runtime = runtime
        self.device = pick_device(runtime.device)
        self.arrays = {name: np.asarray(arrays[name]) for name in _ARRAYS}
        self._encoder = None
        self.truncated = 0  # texts encoded so far that were longer than the encoder's limit (truncated by it)
        self.source = "the svm classifier"  # what messages name it by: the folder it was read from, once loaded

    @property
    def labels(self) -> list[str]:
        return self.settings.labels

    @property
    def backend(self) -> str:
        return self.runtime.backend

    @property
    def precision(self) -> str:
        return self.runtime.precision

    # -- training -------------------------------------------------------------------------------------
    @classmethod
    def fit(cls, settings: ClassifierSettings, train: Examples, val: Examples, c_values: Sequence[float] = C_GRID,
            select_on: str = "macro_f1", runtime: Runtime | None = None, progress: bool = True,
            work_dir: str | os.PathLike | None = None) -> tuple["EmbeddingSVMClassifier", list[dict]]:
        """Fit one SVC per C on ``train``'s embeddings and keep the best on ``val`` (first C among ties), the texts
        embedded as ``runtime`` says (None: :func:`embedding_runtime`'s ``auto`` for the settings' encoder).
        Returns the classifier and one history row per C. With ``work_dir``, each fitted C is checkpointed there
        and an interrupted run resumes without refitting the C values it finished. ``progress``: bars on stderr for
        the embeddings and for the C values (libsvm fits one C in one call: the bar moves per C, with an ETA)."""
        from sklearn.svm import SVC
        from tqdm import tqdm

        unknown = sorted(set(train.labels) - set(settings.labels))
        if unknown:
            raise PragmeterError(f"training labels {unknown} are not among the recipe's labels {settings.labels}")
        # An instance without machines embeds the texts; every fitted model shares its encoder.
        runtime = runtime or embedding_runtime(encoder=settings.base_encoder)
        embedder = cls(settings, {n: np.zeros(0) for n in _ARRAYS}, 0.0, 0.0, runtime=runtime)
        settings.max_length = int(embedder.encoder.max_seq_length)  # what the embeddings were truncated to
        x_train = embedder.embed(train.texts, progress, "training")
        x_val = embedder.embed(val.texts, progress, "validation")
        y_train = np.array([settings.labels.index(label) for label in train.labels])
        checkpoints = _Checkpoints(work_dir, run_fingerprint({"settings": asdict(settings),
                                                              "precision": runtime.precision,
                                                              "backend": runtime.backend, "kernel": "rbf",
                                                              "gamma": "scale"},
                                                             train, val))
        best, history = None, []
        bar = tqdm(c_values, desc=f"fitting the svm ({len(train):,} texts)", unit="C", disable=not progress,
                   file=sys.stderr)
        for c in bar:
            done = checkpoints.load(c)
            if done is not None:
                arrays, gamma, row = done
                log.info(f"svm C={c:g}: fitted before, read from {checkpoints.folder}")
            else:
                started = time.perf_counter()
                svm = SVC(C=float(c), kernel="rbf", gamma="scale", cache_size=2000).fit(x_train, y_train)
                arrays, gamma = _arrays_of(svm, len(settings.labels)), float(svm._gamma)
                row = {"C": float(c), "support_vectors": int(svm.support_vectors_.shape[0]),
                       "train_seconds": round(time.perf_counter() - started, 1)}
            model = cls(settings, arrays, gamma, c, runtime=runtime)
            model._encoder = embedder._encoder
            report = classification_report(val.labels, model.decide(model.probabilities_of(x_val)), settings.labels)
            row = {**row, "val_accuracy": report["accuracy"], "val_macro_f1": report["macro_f1"]}
            if done is None:
                checkpoints.save(c, arrays, gamma, row)
            history.append(row)
            log.info(f"svm C={c:g}: validation {select_on} {report[select_on]:.4f} ({row['support_vectors']} support "
                     f"vectors, {row['train_seconds']} s)")
            if best is None or report[select_on] > best[0]:
                best = (report[select_on], model)
        return best[1], history

    # -- inference ------------------------------------------------------------------------------------
    @property
    def encoder(self):
        """The frozen encoder, loaded on first use: OpenVINO's (no torch) or sentence-transformers'."""
        if self._encoder is None:
            if self.runtime.graph:
                from pragmeter.encoders.shared import load_graph_encoder

                self._encoder = load_graph_encoder(self.settings.base_encoder, self.runtime)
            else:
                from pragmeter.encoders import load_encoder

                self._encoder = load_encoder(self.settings.base_encoder, str(self.device))
        return self._encoder

    def embedding_cache(self):
        """The part of the shared embedding cache for this encoder as it runs: :meth:`Runtime.cache_key`, the key
        ImpScore and its training's corpus vectors use."""
        from pragmeter.encoders import embeddings_dir
        from pragmeter.encoders.embedding_cache import EmbeddingCache

        return EmbeddingCache(embeddings_dir(), self.runtime.cache_key(self.settings.base_encoder))

    def embed(self, texts: Sequence[str], progress: bool = False, what: str = "texts") -> np.ndarray:
        """L2-normalised sentence embeddings (float32), through the shared embedding cache, in steps of scoring's
        chunk size: ``progress`` draws a bar on stderr (``what`` names the texts) before the cache is read and
        moves it every step."""
        from tqdm import tqdm

        from pragmeter.encoders import default_batch_size, tokens_over_limit
        from pragmeter.impscore.scoring import chunk_size

        unique = list(dict.fromkeys(texts))
        runtime = f"{self.backend} {self.precision}"
        with tqdm(total=len(unique), desc=f"embedding {what} ({self.settings.base_encoder}, {runtime})",
                  unit="text", disable=not progress, file=sys.stderr) as bar:
            cache = self.embedding_cache()
            bar.reset(total=sum(1 for t in unique if t not in cache))

            def encode(batch: list[str]) -> np.ndarray:
                self.truncated += tokens_over_limit(self.encoder, batch)
                if self.runtime.graph:
                    return self.encoder.encode(batch)
                import torch

                with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
                    return self.encoder.encode(batch, batch_size=default_batch_size(str(self.device)),
                                               convert_to_numpy=True, show_progress_bar=False)

            matrix = np.asarray(cache.get_or_compute(unique, encode, chunk_size=chunk_size(), progress=bar.update),
                                dtype=np.float32)
        row = {text: i for i, text in enumerate(unique)}
        vectors = matrix[[row[t] for t in texts]] if len(texts) else np.zeros((0, matrix.shape[1]), np.float32)
        return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)

    def decision_values(self, vectors: np.ndarray) -> np.ndarray:
        """One-vs-one decision values (rows x label pairs (0,1), (0,2), … (1,2), …), as scikit-learn's
        ``decision_function`` with ``decision_function_shape='ovo'``."""
        sv, coef = self.arrays["support_vectors"].astype(np.float64), self.arrays["dual_coef"].astype(np.float64)
        starts = np.concatenate([[0], np.cumsum(self.arrays["n_support"])]).astype(int)
        k = len(self.labels)
        out = np.zeros((len(vectors), k * (k - 1) // 2))
        sv_norms = (sv ** 2).sum(1)
        for begin in range(0, len(vectors), _KERNEL_ROWS):
            x = vectors[begin:begin + _KERNEL_ROWS].astype(np.float64)
            squared = np.maximum((x ** 2).sum(1)[:, None] + sv_norms[None, :] - 2.0 * x @ sv.T, 0.0)
            kernel = np.exp(-self.gamma * squared)
            pair = 0
            for i in range(k):
                for j in range(i + 1, k):
                    rows_i, rows_j = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
                    out[begin:begin + len(x), pair] = (kernel[:, rows_i] @ coef[j - 1, rows_i]
                                                       + kernel[:, rows_j] @ coef[i, rows_j]
                                                       + self.arrays["intercept"][pair])
                    pair += 1
        return out

    def vote_scores(self, vectors: np.ndarray) -> np.ndarray:
        """One-vs-rest scores: votes of the one-vs-one machines plus their summed confidences squashed into
        (-1/3, 1/3), so confidence only breaks ties between vote counts (scikit-learn's ``ovr`` shape)."""
        values = self.decision_values(vectors)
        k = len(self.labels)
        votes, confidence = np.zeros((len(vectors), k)), np.zeros((len(vectors), k))
        pair = 0
        for i in range(k):
            for j in range(i + 1, k):
                votes[:, i] += values[:, pair] >= 0
                votes[:, j] += values[:, pair] < 0
                confidence[:, i] += values[:, pair]
                confidence[:, j] -= values[:, pair]
                pair += 1
        return votes + confidence / (3.0 * (np.abs(confidence) + 1.0))

    def probabilities_of(self, vectors: np.ndarray) -> np.ndarray:
        scores = self.vote_scores(vectors)
        scores = np.exp(scores - scores.max(axis=1, keepdims=True))
        return (scores / scores.sum(axis=1, keepdims=True)).astype(np.float32)

    def probabilities(self, texts: Sequence[str], pairs: Sequence[str] | None = None, batch_size: int = 64,
                      progress: bool = False) -> np.ndarray:
        """Softmax of the one-vs-rest vote scores, rows in input order, columns in ``labels`` order (not
        calibrated; ``batch_size`` is unused: embeddings go through the encoder's own batches)."""
        if pairs is not None:
            raise PragmeterError("this model classifies single texts")
        return check_probabilities(self.probabilities_of(self.embed(texts, progress, "the texts")), self.source)

    def predict(self, texts: Sequence[str], pairs: Sequence[str] | None = None, batch_size: int = 64,
                progress: bool = False) -> list[str]:
        return self.decide(self.probabilities(texts, pairs, batch_size, progress))

    def decide(self, probabilities: np.ndarray) -> list[str]:
        return decide(probabilities, self.labels, self.settings.decision_bias)

    # -- folders --------------------------------------------------------------------------------------
    def save(self, folder: str | os.PathLike, card: str, metrics: dict | None = None) -> Path:
        """Write the folder atomically (a sibling staging folder replaces ``folder``)."""
        def write(staging: Path) -> None:
            _save_arrays(self.arrays, staging / self.WEIGHTS_FILE)
            config = {"pragmeter": asdict(self.settings),
                      "svm": {"kernel": "rbf", "gamma": self.gamma, "C": self.c, "precision": self.precision,
                              "backend": self.backend}}
            (staging / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
            (staging / "README.md").write_text(card, encoding="utf-8")
            if metrics is not None:
                (staging / "metrics.json").write_text(json.dumps(metrics, indent=2), encoding="utf-8")

        return replace_folder(Path(folder), write)

    @classmethod
    def load(cls, folder: str | os.PathLike, device: str | None = None, precision: str = "auto") -> "EmbeddingSVMClassifier":
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        folder = Path(folder)
        config_path, config, settings = read_settings(folder)
        settings.base_encoder = base_encoder(folder, settings)  # a relative folder is the model folder's
        weights = folder / cls.WEIGHTS_FILE
        try:
            svm = config["svm"]
            gamma, c = float(svm["gamma"]), float(svm["C"])
        except (KeyError, TypeError, ValueError) as error:
            raise DataError(f"{config_path}: no readable 'svm' settings (gamma and C; {type(error).__name__}: "
                            f"{error})") from None
        try:
            arrays = load_file(str(weights))
        except (OSError, SafetensorError) as error:
            raise DataError(f"{weights}: not readable safetensors ({type(error).__name__}: {error})") from None
        problem = _shape_problem(arrays, len(settings.labels))
        if problem:
            raise DataError(f"{weights}: {problem} (config.json names {len(settings.labels)} labels)")
        check_finite_tensors(arrays, weights)
        if not (np.isfinite(gamma) and np.isfinite(c) and gamma > 0):
            raise DataError(f"{config_path}: 'svm' gamma and C must be finite numbers (gamma above 0), got "
                            f"gamma={gamma!r}, C={c!r}")
        # embedded as the fit was (folders from before the fast path: torch)
        backend = svm.get("backend", "torch")
        if backend not in ("torch", "openvino"):
            raise DataError(f"{config_path}: 'svm' backend must be torch or openvino, got {backend!r}")
        recorded = svm.get("precision", "fp32")
        if recorded not in TORCH_PRECISIONS:
            raise DataError(f"{config_path}: 'svm' precision must be fp32 or bf16, got {recorded!r}")
        classifier = cls(settings, arrays, gamma, c, device, recorded if precision == "auto" else precision, backend)
        classifier.source = str(folder)
        return classifier


def _shape_problem(arrays: dict[str, np.ndarray], n_labels: int) -> str | None:
    """Why the arrays are not a one-vs-one SVC over ``n_labels`` labels, or None."""
    missing = [name for name in _ARRAYS if name not in arrays]
    if missing:
        return f"no array {missing[0]!r}"
    vectors, dual, intercept, counts = (arrays[name] for name in _ARRAYS)
    if (counts.shape != (n_labels,) or vectors.ndim != 2 or int(counts.sum()) != vectors.shape[0]
            or dual.shape != (n_labels - 1, vectors.shape[0]) or intercept.shape != (n_labels * (n_labels - 1) // 2,)):
        return (f"arrays of shapes {', '.join(f'{n} {tuple(arrays[n].shape)}' for n in _ARRAYS)} are not an SVM "
                f"over {n_labels} labels")
    return None


def _arrays_of(svm, n_labels: int) -> dict[str, np.ndarray]:
    """The arrays of a fitted scikit-learn SVC that prediction needs, with every label present."""
    if len(svm.classes_) != n_labels:
        raise PragmeterError(f"the training data hold {len(svm.classes_)} of the {n_labels} labels; the svm head "
                             f"needs examples of every label")
    return {"support_vectors": svm.support_vectors_.astype(np.float32),
            "dual_coef": svm.dual_coef_.astype(np.float64), "intercept": svm.intercept_.astype(np.float64),
            "n_support": svm.n_support_.astype(np.int64)}


def _save_arrays(arrays: dict[str, np.ndarray], path: Path) -> None:
    """Write ``arrays`` to ``path`` through a new temporary file renamed into place (never through a link)."""
    from safetensors.numpy import save_file

    with atomic_path(path) as tmp:
        save_file({name: np.ascontiguousarray(value) for name, value in arrays.items()}, str(tmp))


class _Checkpoints:
    """One file per fitted C in the work folder, and a state.json naming the run they belong to (settings and
    data): an interrupted fit resumes from them; a different run in the same folder is refused."""

    def __init__(self, folder: str | os.PathLike | None, key: str):
        self.folder = None if folder is None else Path(folder)
        self.key = key
        self.fitted: dict[str, dict] = {}
        if self.folder is not None and (self.folder / "state.json").is_file():
            state_path = self.folder / "state.json"
            try:
                state = json.loads(state_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise InvalidParameter("work_dir", str(self.folder), f"{state_path} is not readable ({error}); delete "
                                       "the folder or give another") from None
            if state.get("fingerprint") != key or state.get("head") != "svm":
                raise InvalidParameter("work_dir", str(self.folder), "holds checkpoints of a different run (other "
                                       "settings or data); give another or delete it")
            self.fitted = state.get("fitted", {})

    def _file(self, c: float) -> Path:
        return self.folder / f"svm-C{float(c)!r}.safetensors"

    def load(self, c: float) -> tuple[dict[str, np.ndarray], float, dict] | None:
        entry = self.fitted.get(repr(float(c)))
        if entry is None or not self._file(c).is_file():
            return None
        from safetensors.numpy import load_file

        return load_file(str(self._file(c))), float(entry["gamma"]), entry["row"]

    def save(self, c: float, arrays: dict[str, np.ndarray], gamma: float, row: dict) -> None:
        if self.folder is None:
            return
        # The arrays first, then the state that names them: a crash between the two only loses this C.
        _save_arrays(arrays, self._file(c))
        self.fitted[repr(float(c))] = {"gamma": gamma, "row": row}
        write_json_atomic(self.folder / "state.json", {"head": "svm", "fingerprint": self.key, "fitted": self.fitted})
