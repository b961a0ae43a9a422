"""Which runtime and precision score on this machine: ``--backend auto`` and ``--precision auto`` resolved here.

The fast CPU path is OpenVINO (a core dependency): fp32 everywhere, bf16 where the CPU has bf16 matrix instructions
(AVX-512 BF16 or AMX), where it runs about twice as fast. ``auto`` picks bf16 only for encoders whose bf16 scores were
measured within the accuracy bounds against the official fp32 path (max |Δscore| ≤ 0.02, Kendall τ ≥ 0.99;
benchmarks/bench_speed.py, tests/impscore/test_precision.py): all-MiniLM-L6-v2 (0.009, 0.996). all-mpnet-base-v2
misses the first bound in bf16 (0.025, τ 0.995), so ``auto`` keeps it in fp32 (``--precision bf16`` still runs it, and
its signature says so). An encoder whose layers a model fine-tuned is another encoder: ``auto`` runs it in bf16 only
when the model's config records that check (``bf16_check``, measured at release the same way). On a CPU without bf16
instructions (e.g. AVX2-only AMD Zen 1) bf16 would only be emulated, so ``auto`` is fp32 there and an explicit
``bf16`` is refused; the same where ``$ONEDNN_MAX_CPU_ISA`` caps oneDNN below AVX512_CORE_BF16 (OpenVINO then has no
bf16 kernels and its compile fails). int8 is refused: ONNX Runtime's dynamic quantization moves scores by up to 0.32
on real texts (τ 0.80), and static int8 of the OpenVINO graph (NNCF post-training quantization) by 0.15 (τ 0.95), both
far outside the bounds.
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache

from pragmeter.errors import PragmeterError

BACKEND_CHOICES = ("auto", "openvino", "onnx", "onnx-int8", "torch")
PRECISIONS = ("auto", "fp32", "bf16", "fp16", "int8")  # fp16: torch on a GPU only
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
# oneDNN's instruction-set names below AVX512_CORE_BF16: capped at one of these ($ONEDNN_MAX_CPU_ISA), OpenVINO has no
# bf16 kernels (its compile fails), whatever the CPU's flags say
ISAS_WITHOUT_BF16 = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI")
# The accuracy bounds a faster precision must meet against the official fp32 scores on real texts: each score within
# MAX_ABS_DIFF of fp32's and Kendall τ ≥ MIN_TAU. fp32 itself moves by float rounding only (another batch, order,
# thread, process or runtime): FP32_MAX_ABS_DIFF (measured ~1e-6; bf16 moves with batching, more so on AMX).
MAX_ABS_DIFF, MIN_TAU, FP32_MAX_ABS_DIFF = 0.02, 0.99, 1e-4
BF16_WITHIN_BOUNDS = {"all-MiniLM-L6-v2"}  # canonical encoder names that ``auto`` runs in bf16 (see above)
# Short names (the --precision values) <-> the long names of the torch dtypes, used in signatures since before
LONG_NAMES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "int8": "int8"}
INT8_REFUSED = ("--precision int8 is not offered: int8 scores differ from fp32 by up to 0.32 (Kendall τ 0.80) on real "
                f"texts, outside the bounds (max |Δ| ≤ {MAX_ABS_DIFF}, τ ≥ {MIN_TAU}); use auto, fp32 or bf16")


@cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags from /proc/cpuinfo (empty off Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def isa_cap() -> str | None:
    """The instruction set the math libraries were capped at ($ONEDNN_MAX_CPU_ISA or $DNNL_MAX_CPU_ISA), if any."""
    for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
        value = os.environ.get(name, "").strip().upper()
        if value and value != "ALL":
            return value
    return None


def score_tolerance(precision: str) -> float:
    """How far two scores of one text may differ when both ran in ``precision`` (fp32, bf16 or fp16) through other
    batches, orders, threads or processes: float rounding in fp32; in a faster precision each score lies within
    MAX_ABS_DIFF of fp32's, so two lie within twice that."""
    return FP32_MAX_ABS_DIFF if precision in ("fp32", "float32") else 2 * MAX_ABS_DIFF


def cap_without_bf16() -> str | None:
    """The ISA cap when it rules bf16 out (one of ISAS_WITHOUT_BF16), else None."""
    cap = isa_cap()
    return cap if cap in ISAS_WITHOUT_BF16 else None


def cpu_has_bf16(flags: frozenset[str] | None = None) -> bool:
    """True where the CPU multiplies bf16 matrices natively (AVX-512 BF16 or AMX) and no ISA cap rules them out;
    ``flags`` given: those flags alone decide."""
    if flags is None:
        if cap_without_bf16():
            return False
        flags = cpu_flags()
    return any(flag in flags for flag in BF16_FLAGS)


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


def resolve_backend(backend: str, device: str | None = None) -> str:
    """``auto``: torch for a GPU device, else OpenVINO (core dependency), else ONNX Runtime, else torch."""
    if backend not in BACKEND_CHOICES:
        raise PragmeterError(f"backend must be one of {', '.join(BACKEND_CHOICES)}, got {backend!r}")
    if backend != "auto":
        return backend
    if device not in (None, "cpu"):
        return "torch"
    for name in ("openvino", "onnxruntime"):
        if importlib.util.find_spec(name) is not None:
            return "openvino" if name == "openvino" else "onnx"
    return "torch"


def resolve_precision(precision: str | None, backend: str, device: str | None = None,
                      flags: frozenset[str] | None = None, encoder: str | None = None) -> str | None:
    """The concrete precision (fp32 | bf16 | int8) for a resolved ``backend`` and ``encoder`` (None: any encoder
    whose bf16 is within bounds); None leaves a torch encoder's dtype to pragmeter.encoders.encoder_dtype (fp16
    on a GPU, fp32 on a CPU). One line when this machine cannot."""
    precision = "auto" if precision is None else precision
    if precision not in PRECISIONS:
        raise PragmeterError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if backend == "onnx-int8":
        if precision not in ("auto", "int8"):
            raise PragmeterError(f"backend onnx-int8 runs int8, not {precision}")
        return "int8"
    if precision == "int8":
        raise PragmeterError(INT8_REFUSED)
    if precision == "fp16" and backend != "torch":
        raise PragmeterError("--precision fp16 runs through torch on a GPU (--device cuda); on a CPU use auto, fp32 "
                             "or bf16")
    if backend == "torch":
        return None if precision == "auto" else precision
    if backend == "onnx":
        if precision == "bf16":
            raise PragmeterError("--precision bf16 needs --backend openvino or torch (ONNX Runtime has no bf16 CPU "
                                 "kernels)")
        return "fp32"
    has_bf16 = cpu_has_bf16(flags)
    if precision == "bf16" and not has_bf16:
        cap = cap_without_bf16() if flags is None else None
        if cap:
            raise PragmeterError(f"--precision bf16 needs AVX-512 BF16 or AMX, and ONEDNN_MAX_CPU_ISA={cap} rules "
                                 "them out; use auto or fp32, or unset it")
        raise PragmeterError("--precision bf16 needs a CPU with AVX-512 BF16 or AMX (this one has neither: it would "
                             "only be emulated); use auto or fp32")
    if precision == "auto":
        from pragmeter.encoders.registry import canonical_name

        within = encoder is None or canonical_name(encoder) in BF16_WITHIN_BOUNDS
        return "bf16" if has_bf16 and within else "fp32"
    return precision
