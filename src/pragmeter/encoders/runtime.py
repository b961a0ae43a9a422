"""How a sentence encoder runs on this machine: one frozen :class:`Runtime` (backend, precision, device, threads and
why), resolved once by :func:`resolve_runtime` from the machine, the encoder and the caller's wish, and handed to
everything that encodes (ImpScore, ``serve``, the Ray actors, corpus embedding in training, the benchmarks).

Backends. The fast CPU path is OpenVINO (a core dependency); ONNX Runtime (extra ``onnx``) is the exact fp32
alternative; torch (sentence-transformers) is the official path and the only one on a GPU. ``auto`` picks torch for
a GPU device, else OpenVINO, else ONNX Runtime, else torch; where ``$ONEDNN_MAX_CPU_ISA`` caps the math libraries at
SSE4.1, OpenVINO's CPU plugin cannot run the encoder (its LayerNorm kernel fails), so ``auto`` takes ONNX Runtime
there and an explicit ``openvino`` is refused.

Precision. fp32 everywhere; bf16 on OpenVINO where the CPU has bf16 matrix instructions (AVX-512 BF16 or AMX),
faster. Whether it has them, OpenVINO's CPU plugin says itself (``BF16`` in its
``OPTIMIZATION_CAPABILITIES``, which it reports where its oneDNN may use AVX-512 BF16, so on AMX hosts too, and
not on AVX2-only ones); without OpenVINO installed nothing runs bf16 on a CPU through this module, so the answer
is no. ``auto`` picks bf16 only for encoders whose bf16 scores were measured within the accuracy
bounds against the official fp32 path (max |Δscore| ≤ 0.02, Kendall τ ≥ 0.99; benchmarks/bench_speed.py,
tests/encoders/test_precision.py; figures in docs/results.md): all-MiniLM-L6-v2. all-mpnet-base-v2 misses the first
bound in bf16, so ``auto`` keeps it in fp32 (an explicit ``bf16`` still runs it, and its signature says so). An
encoder whose layers a model fine-tuned is another encoder: ``auto`` runs it in bf16 only when the model's config
records that check (``bf16_check``, measured at release the same way). On a CPU without bf16 instructions (e.g.
AVX2-only AMD Zen 1) bf16 would only be emulated, so ``auto`` is fp32 there and an explicit ``bf16`` is refused; the
same where ``$ONEDNN_MAX_CPU_ISA`` caps oneDNN below AVX512_CORE_BF16 (OpenVINO then has no bf16 kernels). int8 is
refused, asked as ``precision='int8'`` or as ``backend='onnx-int8'`` alike: ONNX Runtime's dynamic quantization
and static int8 of the OpenVINO graph (NNCF post-training quantization) both move scores far outside the bounds on
real texts (figures in docs/results.md). torch's ``auto`` is fp16 on a CUDA device (within the bounds there) and fp32
elsewhere.

Threads. ``threads`` (or ``$PRAGMETER_ONNX_THREADS``) is validated here for both graph runtimes alike: a whole
number >= 1, capped at the CPUs this process may use; unset, each runtime takes its own default.

Uses. What else differs between the things that run (an interpreter runs openvino or torch; another fine-tuned
classifier torch only; the corpus embedding of training torch in fp32 only; an svm head's encoder torch in fp32 or
bf16) is said as :func:`resolve_runtime`'s ``backends`` and ``torch_precisions``, never decided elsewhere; a model
being trained autocasts as :func:`training_runtime` says (bf16 on CUDA, fp32 elsewhere). :meth:`Runtime.cache_key`
keys every writer of the embedding cache.

Errors are :class:`pragmeter.errors.InvalidParameter` (a ValueError) naming the parameters (``precision='bf16'``), as a
Python caller passes them; the command line says them as flags.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from functools import cache

from pragmeter.errors import InvalidParameter, PragmeterError

BACKEND_CHOICES = ("auto", "openvino", "onnx", "onnx-int8", "torch")  # what a caller may ask for
BACKENDS = ("openvino", "onnx", "torch")  # what a resolved runtime runs
GRAPH_BACKENDS = ("openvino", "onnx")  # the encoder as an exported graph, on the CPU
PRECISIONS = ("auto", "fp32", "bf16", "fp16", "int8")  # fp16: torch on a GPU only
TRAINING_PRECISIONS = ("auto", "fp32", "bf16")  # what a model being trained autocasts to (training_runtime)
# oneDNN's instruction-set names below AVX512_CORE_BF16: capped at one of these ($ONEDNN_MAX_CPU_ISA), OpenVINO has no
# bf16 kernels (its compile fails), though its OPTIMIZATION_CAPABILITIES still say BF16 (they ignore the cap)
ISAS_WITHOUT_BF16 = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI")
ISAS_WITHOUT_OPENVINO = ("SSE41",)  # capped at one of these, OpenVINO's CPU plugin cannot run the encoder at all
ISA_ENVS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
# The accuracy bounds a faster precision must meet against the official fp32 scores on real texts: each score within
# MAX_ABS_DIFF of fp32's and Kendall τ ≥ MIN_TAU. fp32 itself moves by float rounding only (another batch, order,
# thread, process or runtime): FP32_MAX_ABS_DIFF (bf16 moves with batching, more so on AMX). A classifier's
# probabilities (the interpreter's labels and its score, P(implied) + P(explicit), all in [0, 1]) keep the same
# MAX_ABS_DIFF, with the same label (argmax) on every checked pair in place of τ (pragmeter.interpreter.runtime).
MAX_ABS_DIFF, MIN_TAU, FP32_MAX_ABS_DIFF = 0.02, 0.99, 1e-4
# ``bf16_check`` of a fine-tuned model that records no bf16 check (none was measured): fp32 under ``auto``, saying so
NOT_CHECKED = "not checked"
BF16_WITHIN_BOUNDS = {"all-MiniLM-L6-v2"}  # canonical encoder names that ``auto`` runs in bf16 (see above)
# Short names (the precision values) <-> the long names of the torch dtypes, which signatures used
LONG_NAMES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
SHORT_NAMES = {long: short for short, long in LONG_NAMES.items()}
THREADS_ENV = "PRAGMETER_ONNX_THREADS"  # threads of either graph runtime per process (default: the runtime's own)
INT8_REFUSED = (f"int8 scores differ from fp32 on real texts beyond the bounds (max |Δ| ≤ {MAX_ABS_DIFF}, "
                f"τ ≥ {MIN_TAU}; docs/results.md); use auto, fp32 or bf16")


@dataclass(frozen=True)
class Runtime:
    """How an encoder runs: ``backend`` (openvino | onnx | torch), ``precision`` (fp32 | bf16 | fp16), ``device``
    (``cpu`` for the graph backends), ``threads`` (None: the runtime's default) and ``reason``, why these were
    chosen. Made by :func:`resolve_runtime`; :meth:`signature` goes into every result the encoder produced."""

    backend: str
    precision: str
    device: str = "cpu"
    threads: int | None = None
    reason: str = "as asked"

    @property
    def dtype(self) -> str:
        """The precision as torch names its dtype (float32, bfloat16, float16)."""
        return LONG_NAMES[self.precision]

    @property
    def graph(self) -> bool:
        """True for the exported-graph backends (OpenVINO, ONNX Runtime), which run on the CPU without torch."""
        return self.backend in GRAPH_BACKENDS

    def signature(self) -> str:
        """e.g. ``backend=openvino|precision=bf16|device=cpu|threads=default|reason=…``: what produced the numbers."""
        return (f"backend={self.backend}|precision={self.precision}|device={self.device}|"
                f"threads={self.threads or 'default'}|reason={self.reason}")

    def cache_key(self, encoder: str) -> str:
        """The key of ``encoder``'s vectors as this runtime makes them in the embedding cache: the encoder's content
        hash, the backend and the precision (a replaced encoder folder, or fp32 vs bf16, never share entries;
        devices and threads move fp32 vectors by float rounding only, so they share them). Every writer of the cache
        (ImpScore, the corpus embedding of training, the svm classifier) keys its vectors by this."""
        from pragmeter.encoders.fingerprint import encoder_key

        return f"{encoder_key(encoder)}-{self.backend}-{self.precision}"


def resolve_runtime(backend: str | None = "auto", precision: str | None = "auto", threads: int | str | None = None,
                    encoder: str | None = None, *, device: str | None = None, dtype: str | None = None,
                    bf16_check: bool | str | None = None, backends: tuple[str, ...] = BACKENDS,
                    torch_precisions: tuple[str, ...] | None = None, purpose: str = "this model") -> Runtime:
    """The one resolution of how an encoder runs here.

    Args:
        backend: auto | openvino | onnx | torch (``onnx-int8`` is refused with int8).
        precision: auto | fp32 | bf16 | fp16 (torch on a GPU); int8 is refused.
        threads: graph-runtime threads (None: ``$PRAGMETER_ONNX_THREADS``, else the runtime's default); a whole
            number >= 1, capped at the CPUs this process may use.
        encoder: the encoder's name (``auto`` precision asks whether its bf16 is within bounds; None: any encoder).
        device: a torch device (a GPU needs backend torch); None: cpu, or torch's best device for backend torch.
        dtype: the torch dtype's long name (float32, float16, bfloat16), another spelling of ``precision``.
        bf16_check: for an encoder whose layers a model fine-tuned: whether the model records its bf16 scores as
            within bounds (None: not fine-tuned, the encoder's name decides; NOT_CHECKED: the model records no
            check, so fp32 under ``auto``, and the reason says why).
        backends: the backends the model can run (an interpreter: openvino and torch; another fine-tuned
            classifier: torch; a corpus or an svm head's texts: openvino and torch); ``auto`` picks among them and
            another is refused.
        torch_precisions: the precisions the torch backend runs for this use, ``auto`` taking the first (None:
            ``auto`` is fp16 on a CUDA device, fp32 elsewhere, and any precision is taken); e.g. ``("fp32",)`` for
            the corpus embedding of training, whose vectors train the heads in fp32.
        purpose: what runs, as errors and reasons name it (``the corpus embedding``).

    Returns:
        The :class:`Runtime`. A wish this machine cannot meet raises an InvalidParameter (a ValueError) naming the parameter.
    """
    backend = "auto" if backend is None else backend
    precision = "auto" if precision is None else precision
    if backend not in BACKEND_CHOICES:
        raise InvalidParameter("backend", backend, choices=BACKEND_CHOICES)
    if precision not in PRECISIONS:
        raise InvalidParameter("precision", precision, choices=PRECISIONS)
    if backend == "onnx-int8" or precision == "int8":
        asked = ("backend", backend) if backend == "onnx-int8" else ("precision", precision)
        raise InvalidParameter(*asked, f"not offered: {INT8_REFUSED}")
    precision = precision_with_dtype(precision, dtype)
    device = None if device is None else str(device)
    gpu = device not in (None, "cpu")
    reasons: list[str] = []
    backend = _backend(backend, device if gpu else None, reasons, backends, purpose)
    if dtype is not None and backend != "torch":
        raise InvalidParameter("dtype", dtype, "a torch precision, and this backend is not torch (its precision is "
                               "the precision parameter)", also={"backend": backend})
    if backend != "torch" and gpu:
        raise InvalidParameter("device", device, f"needs backend torch (the {backend} backend runs on the CPU)",
                               also={"backend": backend})
    if backend == "torch" and device is None:
        from pragmeter.encoders.registry import default_device

        device = default_device()
    device = device or "cpu"
    if backend == "torch" and torch_precisions is not None:
        precision = _torch_precision(precision, torch_precisions, purpose, reasons)
    precision = _precision(precision, backend, device, encoder, bf16_check, reasons)
    threads = _threads(threads, backend, reasons)
    return Runtime(backend, precision, device, threads, "; ".join(reasons) or "as asked")


def training_runtime(precision: str = "auto", device: str | None = None) -> Runtime:
    """How a model being trained runs its forward passes (a classifier's fine-tuning, and its evaluation during
    training): torch on ``device`` (None: torch's best device), autocast to ``precision`` (TRAINING_PRECISIONS).
    ``auto`` is bf16 on a CUDA device (fp32's range, so no loss scaling, which fp16 training would need) and fp32
    elsewhere."""
    if precision not in TRAINING_PRECISIONS:
        raise InvalidParameter("precision", precision, choices=TRAINING_PRECISIONS)
    if device is None:
        from pragmeter.encoders.registry import default_device

        device = default_device()
    device = str(device)
    if precision != "auto":
        return Runtime("torch", precision, device)
    chosen = "bf16" if device.startswith("cuda") else "fp32"
    return Runtime("torch", chosen, device, reason=f"{chosen}: training on {device}")


def precision_with_dtype(precision: str, dtype: str | None) -> str:
    """``precision`` with torch's ``dtype`` spelling (float32, float16, bfloat16: the ``--dtype`` flag) folded in
    (both given: they must agree), for a caller that hands ImpScore.load a precision."""
    if dtype is None:
        return precision
    from pragmeter.encoders.registry import DTYPES

    if dtype.lower() not in DTYPES:
        raise InvalidParameter("dtype", dtype, choices=sorted(DTYPES))
    short = SHORT_NAMES[DTYPES[dtype.lower()]]
    if precision not in ("auto", short):
        raise InvalidParameter("dtype", dtype, "give a precision or a dtype, not both", also={"precision": precision})
    return short


def _backend(backend: str, device: str | None, reasons: list[str], backends: tuple[str, ...] = BACKENDS,
             purpose: str = "this model") -> str:
    if backend not in ("auto", *backends):
        raise InvalidParameter("backend", backend, f"does not run {purpose}; use {' or '.join(('auto', *backends))}",
                               choices=("auto", *backends))
    cap = isa_cap()
    if backend == "openvino" and cap in ISAS_WITHOUT_OPENVINO:
        raise InvalidParameter("backend", backend, f"cannot run with {ISA_ENVS[0]}={cap} (OpenVINO's CPU plugin needs "
                               "AVX or above); use onnx or torch, or unset it")
    if backend != "auto":
        return backend
    if device is not None:
        reasons.append(f"torch: device {device}")
        return "torch"
    installed = [name for name, module in (("openvino", "openvino"), ("onnx", "onnxruntime"))
                 if name in backends and importlib.util.find_spec(module) is not None]
    if cap in ISAS_WITHOUT_OPENVINO and "openvino" in installed:
        installed.remove("openvino")
        reasons.append(f"{ISA_ENVS[0]}={cap} rules out openvino")
    elif installed == ["onnx"]:
        reasons.append("openvino is not installed")
    if not installed:
        graphs = [name for name in GRAPH_BACKENDS if name in backends]
        reasons.append("torch: no graph runtime installed" if graphs else f"torch: the only backend of {purpose}")
    return installed[0] if installed else "torch"


def _precision(precision: str, backend: str, device: str, encoder: str | None, bf16_check: bool | str | None,
               reasons: list[str]) -> str:
    if precision == "fp16" and backend != "torch":
        raise InvalidParameter("precision", precision, "runs through torch on a GPU (backend torch, device cuda); on a "
                               "CPU use auto, fp32 or bf16")
    if backend == "torch":
        if precision != "auto":
            return precision
        # fp16 on a CUDA device: half the memory traffic, tensor cores, and within the accuracy bounds where bf16 is
        # not (docs/results.md); fp32 elsewhere: CPUs without half-precision matrix units gain nothing and would lose
        # accuracy
        chosen = "fp16" if device.startswith("cuda") else "fp32"
        reasons.append(f"{chosen}: torch on {device}")
        return chosen
    if backend == "onnx":
        if precision == "bf16":
            raise InvalidParameter("precision", precision, "needs backend openvino or torch (ONNX Runtime has no bf16 "
                                   "CPU kernels)")
        if precision == "auto":
            reasons.append("fp32: the onnx backend runs fp32 only")
        return "fp32"
    has_bf16, cap = cpu_has_bf16(), cap_without_bf16()
    if precision == "bf16" and not has_bf16:
        if cap:
            raise InvalidParameter("precision", precision, f"needs AVX-512 BF16 or AMX, and {ISA_ENVS[0]}={cap} rules "
                                   "them out; use auto or fp32, or unset it")
        raise InvalidParameter("precision", precision, "needs a CPU with AVX-512 BF16 or AMX (this one has neither: it "
                               "would only be emulated); use auto or fp32")
    if precision != "auto":
        return precision
    if not has_bf16:
        reasons.append(f"fp32: {ISA_ENVS[0]}={cap} rules out bf16" if cap else "fp32: no bf16 instructions on this CPU")
        return "fp32"
    if bf16_check == NOT_CHECKED:
        reasons.append("fp32: this model's bf16 scores were not checked against fp32")
        return "fp32"
    if not _bf16_within_bounds(encoder, bf16_check):
        reasons.append("fp32: this encoder's bf16 scores are not within the bounds")
        return "fp32"
    reasons.append("bf16: the CPU has bf16 instructions and this encoder's bf16 scores are within the bounds")
    return "bf16"


def _torch_precision(precision: str, allowed: tuple[str, ...], purpose: str, reasons: list[str]) -> str:
    """``precision`` for a torch use that runs only ``allowed`` (``auto``: the first)."""
    runs = f"{purpose} runs {' or '.join(allowed)} on torch"
    if precision == "auto":
        reasons.append(f"{allowed[0]}: {runs}")
        return allowed[0]
    if precision not in allowed:
        wrong = f"needs backend openvino ({runs})" if precision == "bf16" else runs
        raise InvalidParameter("precision", precision, wrong, also={"backend": "torch"})
    return precision


def _bf16_within_bounds(encoder: str | None, bf16_check: bool | None) -> bool:
    if bf16_check is False:
        return False
    if encoder is None:
        return True
    from pragmeter.encoders.registry import canonical_name

    return canonical_name(encoder) in BF16_WITHIN_BOUNDS


def _threads(threads: int | str | None, backend: str, reasons: list[str]) -> int | None:
    """``threads`` (or ``$PRAGMETER_ONNX_THREADS`` for a graph backend) checked, capped at the usable CPUs."""
    from_environment = threads is None
    if from_environment:
        threads = os.environ.get(THREADS_ENV, "").strip() if backend in GRAPH_BACKENDS else ""
        if not threads:
            return None
    text = str(threads).strip()
    if isinstance(threads, bool) or not text.isdigit() or int(text) < 1:
        wrong = "expected a whole number of threads >= 1 (or leave it unset)"
        if from_environment:
            raise PragmeterError(f"{THREADS_ENV}={threads!r}: {wrong}")
        raise InvalidParameter("threads", threads, wrong)
    count, cpus = int(text), usable_cpus()
    if count > cpus:
        reasons.append(f"threads capped at the {cpus} CPUs this process may use")
        return cpus
    return count


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@cache
def openvino_capabilities() -> frozenset[str] | None:
    """What OpenVINO's CPU plugin reports it can run here (``OPTIMIZATION_CAPABILITIES``: FP32, BF16, INT8, ...);
    None where OpenVINO is not installed or reports nothing."""
    try:
        import openvino as ov

        return frozenset(ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    except (ImportError, RuntimeError):  # not installed, or a CPU plugin that cannot start: no capability to claim
        return None


def isa_cap() -> str | None:
    """The instruction set the math libraries were capped at ($ONEDNN_MAX_CPU_ISA or $DNNL_MAX_CPU_ISA), if any."""
    for name in ISA_ENVS:
        value = os.environ.get(name, "").strip().upper()
        if value and value != "ALL":
            return value
    return None


def cap_without_bf16() -> str | None:
    """The ISA cap when it rules bf16 out (one of ISAS_WITHOUT_BF16), else None."""
    cap = isa_cap()
    return cap if cap in ISAS_WITHOUT_BF16 else None


def cpu_has_bf16() -> bool:
    """True where OpenVINO runs bf16 matrices natively here (it reports BF16: AVX-512 BF16 or AMX) and no
    ``$ONEDNN_MAX_CPU_ISA`` cap rules them out; False without OpenVINO."""
    if cap_without_bf16():
        return False
    return "BF16" in (openvino_capabilities() or ())


def device_problem(value: str) -> str | None:
    """Why ``value`` is not a torch device this machine has (None when it is; "cpu" is, without importing torch)."""
    if value == "cpu":
        return None
    import torch

    try:
        device = torch.device(value)
    except (RuntimeError, ValueError):
        return f"{value!r} is not a torch device (cpu, cuda, cuda:1, mps)"
    if device.type == "cuda":
        if not torch.cuda.is_available():
            return f"{value!r}: CUDA is not available on this machine (use cpu)"
        if device.index is not None and device.index >= torch.cuda.device_count():
            return f"{value!r}: this machine has {torch.cuda.device_count()} CUDA device(s)"
    elif device.type == "mps" and not torch.backends.mps.is_available():
        return f"{value!r}: MPS is not available on this machine (use cpu)"
    elif device.type not in ("cpu", "cuda", "mps"):
        return f"{value!r}: pragmeter runs on cpu, cuda or mps"
    return None


def score_tolerance(precision: str) -> float:
    """How far two scores of one text may differ when both ran in ``precision`` (fp32, bf16 or fp16) through other
    batches, orders, threads or processes: float rounding in fp32; in a faster precision each score lies within
    MAX_ABS_DIFF of fp32's, so two lie within twice that."""
    return FP32_MAX_ABS_DIFF if precision in ("fp32", "float32") else 2 * MAX_ABS_DIFF
