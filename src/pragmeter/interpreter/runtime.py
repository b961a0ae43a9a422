"""How an interpreter runs here, and the bf16 check that lets ``auto`` choose bf16 for it.

A folder's config may record a ``bf16_check``: bf16 against fp32 on validation pairs, measured when the folder is
written (:func:`bf16_check`, :func:`bf16_bounds`). Since the config is someone else's file, the recorded check is read
again against today's bounds and the claim a measurement makes (:func:`recorded_bf16_check`) before
:func:`interpreter_runtime` lets it count: the one place that decides is
:func:`pragmeter.encoders.runtime.resolve_runtime`.
"""

from __future__ import annotations

import json
from pathlib import Path

BF16_KEY = "bf16_check"  # bf16 against fp32 on validation pairs, measured when the folder is written
# The bounds bf16 must keep to be chosen by ``auto`` (pragmeter.encoders.runtime: ImpScore's bounds, read on the
# interpreter's outputs): every label probability and each reading's score (P(implied) + P(explicit)) within
# MAX_ABS_DIFF of fp32's, and the same label (argmax) on every checked pair.
BF16_MIN_AGREEMENT = 1.0
# What a folder's recorded check may claim for ``auto`` to believe it (the config is someone else's file): measured on
# at least BF16_MIN_PAIRS pairs, through a path that runs bf16 (``openvino`` or ``torch``), each figure a finite number
# in its range, and some change seen (bf16 that equals fp32 to five decimals on every pair was not run in bf16).
BF16_MIN_PAIRS = 256
BF16_PATHS = ("openvino", "torch")
# With its close calls answered again in fp32 (pragmeter.interpreter.recheck), an interpreter's labels and choices are
# fp32's wherever bf16 moves a probability no further than the check measured, so ``auto`` then asks of the check only
# that bf16 keep every probability and score within RECHECKED_MAX_ABS_DIFF of fp32's (a flipped label on a checked
# pair is one of the close calls answered again).
RECHECKED_MAX_ABS_DIFF = 0.05
# The check may record encoder layers that its bf16 kept in fp32 (OpenVINO only: pragmeter.classify.openvino). bf16
# then runs so whenever it runs, since that is what was measured.
FP32_LAYERS_KEY = "fp32_layers"


def bf16_check(classifier, premises: list[str], hypotheses: list[str], meant: list[int], fp32,
               batch_size: int = 64) -> dict:
    """bf16 autocast on the CPU on these pairs against their ``fp32`` probabilities (:func:`bf16_bounds`)."""
    saved = classifier.precision
    try:
        classifier.precision = "bf16"
        bf16 = classifier.probabilities(premises, hypotheses, batch_size)
    finally:
        classifier.precision = saved
    return bf16_bounds(fp32, bf16, meant)


def bf16_bounds(fp32, bf16, meant: list[int]) -> dict:
    """How far bf16 probabilities (rows of pairs) lie from fp32's: the largest change of a label probability and of a
    pair's score (the sum of the ``meant`` label columns: P(implied) + P(explicit) for an interpreter), the share of
    pairs whose label (argmax) stays, and whether all are within the bounds (module notes)."""
    import numpy as np

    from pragmeter.encoders.runtime import MAX_ABS_DIFF

    fp32, bf16 = np.asarray(fp32, dtype=np.float64), np.asarray(bf16, dtype=np.float64)
    probability = float(np.abs(fp32 - bf16).max()) if len(fp32) else 0.0
    score = float(np.abs(fp32[:, meant].sum(1) - bf16[:, meant].sum(1)).max()) if len(fp32) else 0.0
    agreement = float((fp32.argmax(1) == bf16.argmax(1)).mean()) if len(fp32) else 1.0
    return {"max_abs_probability_diff": round(probability, 5), "max_abs_score_diff": round(score, 5),
            "label_agreement": round(agreement, 5), "pairs": len(fp32),
            "bounds": {"max_abs_probability_diff": MAX_ABS_DIFF, "max_abs_score_diff": MAX_ABS_DIFF,
                       "label_agreement": BF16_MIN_AGREEMENT},
            "within_bounds": bool(len(fp32)) and max(probability, score) <= MAX_ABS_DIFF
            and agreement >= BF16_MIN_AGREEMENT}


BACKENDS = ("openvino", "torch")  # how a fine-tuned classifier runs (pragmeter.encoders.runtime.resolve_runtime)


def read_bf16_check(folder: Path):
    """The bf16 check the folder's config records (None where it records none), as written: someone else's file, to
    be judged by the caller; OSError or ValueError where the config cannot be read as a JSON object."""
    config = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    if not isinstance(config, dict):
        raise ValueError(f"{Path(folder) / 'config.json'} is not a JSON object")
    return config.get(BF16_KEY)


def bf16_within(check: dict, fp32_recheck: bool = False) -> bool:
    """Whether a recorded bf16 check's figures are within today's bounds: with ``fp32_recheck``
    RECHECKED_MAX_ABS_DIFF on every change and no label agreement; without it the strict bounds (MAX_ABS_DIFF, every
    label the same). A figure that is not a number is outside."""
    from pragmeter.encoders.runtime import MAX_ABS_DIFF

    def figure(name: str, default=None):
        value = check.get(name, default)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    if fp32_recheck:
        changes = [figure("max_abs_score_diff"), figure("max_abs_probability_diff")]
        return None not in changes and max(changes) <= RECHECKED_MAX_ABS_DIFF
    if check.get("within_bounds") is not True:
        return False
    # a check written before each probability was bounded has only the score's figure: judged by that
    changes = [figure("max_abs_score_diff"), figure("max_abs_probability_diff", 0.0)]
    agreement = figure("label_agreement")
    return (None not in changes and agreement is not None and max(changes) <= MAX_ABS_DIFF
            and agreement >= BF16_MIN_AGREEMENT)


def recorded_bf16_check(folder: Path, fp32_recheck: bool = False) -> bool | str:
    """Whether the folder's config records a bf16 check (``bf16_check``) within today's bounds: its figures read
    again (a folder written under other bounds is judged by these), each a number, and the claim one a measurement
    makes (:func:`bf16_claim_problem`; an implausible one is warned about); NOT_CHECKED where it records none (no
    check measured, as for a freshly trained classifier), False where its config cannot be read. With
    ``fp32_recheck`` (the close calls answered again in fp32) the bounds are RECHECKED_MAX_ABS_DIFF on every change
    and no label agreement (module notes)."""
    from pragmeter.encoders.runtime import NOT_CHECKED

    try:
        check = read_bf16_check(folder)
    except (OSError, ValueError):
        return False
    if check is None or isinstance(check, dict) and "pairs" in check and not check["pairs"]:  # measured on none
        return NOT_CHECKED

    if not isinstance(check, dict) or not bf16_within(check, fp32_recheck):
        return False
    problem = bf16_claim_problem(check)
    if problem:
        import logging

        logging.getLogger("pragmeter").warning("%s: its bf16_check claims bf16 within bounds, but %s; it runs in "
                                               "fp32", Path(folder) / "config.json", problem)
        return False
    return True


def fp32_layers_problem(check: dict) -> str | None:
    """Why a recorded check's ``fp32_layers`` are not layer numbers a graph can be cut at (None when they are, or
    where it records none): a list of distinct whole numbers from 0, measured through OpenVINO."""
    layers = check.get(FP32_LAYERS_KEY)
    if layers is None:
        return None
    if not isinstance(layers, list) or not all(isinstance(at, int) and not isinstance(at, bool) and 0 <= at < 1000
                                               for at in layers) or len(set(layers)) != len(layers):
        return f"its {FP32_LAYERS_KEY} is {layers!r}, not a list of distinct layer numbers"
    if layers and check.get("path") != "openvino":
        return f"it keeps layers in fp32 on the path {check.get('path')!r} (only OpenVINO runs layers so)"
    return None


def recorded_fp32_layers(folder: Path) -> tuple[int, ...]:
    """The encoder layers the folder's bf16 check kept in fp32 (empty where it records none): what its bf16 runs.
    A PragmeterError naming the file and field where they are not layer numbers (someone else's file)."""
    from pragmeter.errors import PragmeterError

    try:
        check = read_bf16_check(folder)
    except (OSError, ValueError):
        return ()
    if not isinstance(check, dict):
        return ()
    problem = fp32_layers_problem(check)
    if problem:
        raise PragmeterError(f"{Path(folder) / 'config.json'}: field {BF16_KEY}.{FP32_LAYERS_KEY}: {problem}")
    return tuple(check.get(FP32_LAYERS_KEY) or ())


def bf16_claim_problem(check: dict) -> str | None:
    """Why a recorded bf16 check is not a claim a measurement makes (None when it is): too few pairs, an unknown path,
    a figure that is not a finite number in its range, or no change at all."""
    import math

    pairs, path = check.get("pairs"), check.get("path")
    if not isinstance(pairs, int) or isinstance(pairs, bool) or pairs < BF16_MIN_PAIRS:
        return f"it was measured on {pairs!r} pairs (at least {BF16_MIN_PAIRS} are needed)"
    if path not in BF16_PATHS:
        return f"its path {path!r} is not one that runs bf16 ({', '.join(BF16_PATHS)})"
    figures = {name: check.get(name) for name in ("max_abs_probability_diff", "max_abs_score_diff",
                                                  "label_agreement") if name in check}
    for name, value in figures.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) \
                or not 0 <= value <= (1 if name == "label_agreement" else 2):
            return f"{name} is {value!r}, not a finite number in its range"
    if not figures.get("max_abs_score_diff"):
        return "it records no change at all from fp32 (bf16 rounds every probability)"
    return fp32_layers_problem(check)


def interpreter_runtime(folder: Path, backend: str = "auto", precision: str = "auto", device: str | None = None,
                        threads: int | str | None = None, fp32_recheck: bool = False):
    """How the classifier of ``folder`` runs here, resolved by :func:`pragmeter.encoders.runtime.resolve_runtime`
    (the one place that decides): ``auto`` is OpenVINO on a CPU (torch on a GPU ``device``), in bf16 only where the
    CPU has bf16 instructions and the folder's config records a bf16 check within bounds (the looser bounds of
    :func:`recorded_bf16_check` where ``fp32_recheck`` answers the close calls again), else fp32 (fp16 on a CUDA
    device)."""
    from pragmeter.encoders.runtime import resolve_runtime

    return resolve_runtime(backend, precision, threads, device=device,
                           bf16_check=recorded_bf16_check(folder, fp32_recheck), backends=BACKENDS)
