"""The interpreter's speed on the CPU: pairs/s of one interpreter folder in plain torch fp32 (the transformers model,
batches of --batch-size sorted by length), as an OpenVINO graph in fp32 and in bf16 (batches by a token budget, on all
infer requests at once), side by side in one run on the same INLI validation pairs, with the machine state. Also how
far each path's probabilities lie from torch fp32's (largest change of a label probability, share of pairs whose
label stays), so a faster path that answers differently shows. Beside them, sentence-transformers'
``CrossEncoder.predict(pairs, apply_softmax=True)`` on the folder as ``Interpreter.save`` exports it (whole fp32
weights): what a user of that library gets from the same model.

    python benchmarks/interpreter_speed.py --model FOLDER              # 1024 INLI validation pairs
    python benchmarks/interpreter_speed.py --model FOLDER --pairs 4096 --output speed.json

Last, one ``choose`` over four readings is timed on the runtime ``auto`` picks, after loading (median and largest of
20 calls).

Each setting is loaded (and its graph converted, once per model) before the clock starts, warmed up on the first
--warmup pairs, then times --repeats passes over the pairs; its figure is the best pass. Order: torch fp32, OpenVINO
fp32, OpenVINO bf16 (where the CPU has bf16 instructions), CrossEncoder fp32 (batches of --batch-size), torch fp32
again; the torch figure is the mean of its two
runs, so drift in the machine shows as their gap. A figure is valid only where the machine was quiet (machine.py).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from machine import MachineWatch

from pragmeter.encoders.runtime import cpu_has_bf16
from pragmeter.interpreter.model import Interpreter
from pragmeter.interpreter.runtime import bf16_bounds

SETTINGS = (("torch fp32 (before)", "torch", "fp32"), ("openvino fp32", "openvino", "fp32"),
            ("openvino bf16", "openvino", "bf16"), ("openvino bf16 raw", "openvino", "bf16-raw"),
            ("crossencoder fp32", "crossencoder", "fp32"), ("torch fp32 (after)", "torch", "fp32"))


class ExportedCrossEncoder:
    """sentence-transformers' CrossEncoder on the folder ``Interpreter.save`` writes of ``model`` (in a temporary
    folder, written before the clock starts), answering ``probabilities`` as the interpreter does."""

    def __init__(self, model: str | None, folder: Path) -> None:
        from sentence_transformers import CrossEncoder

        source = Interpreter.load(model, device="cpu", precision="fp32", backend="torch", progress=False)
        source.save(folder)
        self.meant, self.cross = source.meant, CrossEncoder(str(folder), device="cpu")
        self.signature = f"sentence-transformers CrossEncoder|precision=fp32|device=cpu|folder={folder.name}"

    def probabilities(self, premises: list[str], hypotheses: list[str], batch_size: int) -> np.ndarray:
        return self.cross.predict(list(zip(premises, hypotheses)), batch_size=batch_size, apply_softmax=True,
                                  show_progress_bar=False)


def inli_pairs(count: int, data_root: str | None = None) -> tuple[list[str], list[str]]:
    """The first ``count`` INLI validation pairs (premise, hypothesis) of the 4-way recipe."""
    from pragmeter.classify.recipes.inli import build

    val = build("4way", root=data_root).val.head(count)
    return list(val.texts), list(val.pairs)


def measure(model: str, premises: list[str], hypotheses: list[str], batch_size: int = 64, repeats: int = 2,
            warmup: int = 32) -> dict:
    """Each setting's pairs/s (best of ``repeats`` passes) and its probabilities' distance from torch fp32's."""
    import tempfile

    runs, reference = {}, None
    staging = tempfile.TemporaryDirectory(prefix="pragmeter-crossencoder-")
    for name, backend, precision in SETTINGS:
        precision, recheck = precision.removesuffix("-raw"), not precision.endswith("-raw")
        if precision == "bf16" and not cpu_has_bf16():
            runs[name] = {"skipped": "this CPU has no bf16 instructions"}
            continue
        if backend == "crossencoder":
            interpreter = ExportedCrossEncoder(model, Path(staging.name) / "exported")
        else:
            interpreter = Interpreter.load(model, backend=backend, precision=precision, fp32_recheck=recheck,
                                           device="cpu" if backend == "torch" else None, progress=False)
        interpreter.probabilities(premises[:warmup], hypotheses[:warmup], batch_size)
        seconds = []
        for _ in range(repeats):
            before = getattr(getattr(interpreter, "classifier", None), "rechecked", 0)
            started = time.perf_counter()
            probabilities = interpreter.probabilities(premises, hypotheses, batch_size)
            seconds.append(time.perf_counter() - started)
            rechecked = getattr(getattr(interpreter, "classifier", None), "rechecked", 0) - before
        if reference is None:
            reference = probabilities
        check = bf16_bounds(reference, probabilities, interpreter.meant)
        runtime = interpreter.signature if backend == "crossencoder" else interpreter.runtime.signature()
        runs[name] = {"runtime": runtime, "seconds": [round(s, 3) for s in seconds],
                      "pairs_per_second": len(premises) / min(seconds),
                      "max_abs_probability_diff": check["max_abs_probability_diff"],
                      "label_agreement": check["label_agreement"], "rechecked_in_fp32": rechecked}
    staging.cleanup()
    torch_runs = [runs[name]["pairs_per_second"] for name, backend, _ in SETTINGS if backend == "torch"]
    return {"runs": runs, "torch_fp32_mean": float(np.mean(torch_runs)),
            "crossencoder": runs["crossencoder fp32"]["pairs_per_second"]}


CHOOSE_ITEM = ("Ann offers Bob a coffee late at night.", "It would keep me awake.",
               ("Bob declines the coffee.", "Bob accepts the coffee.", "Bob wants tea.", "Bob is tired."))


def choose_latency(model: str | None, calls: int = 20) -> dict:
    """Seconds of one ``choose`` over four readings on the runtime ``auto`` picks, after loading and one warm-up
    call: median and largest of ``calls`` calls."""
    interpreter = Interpreter.load(model, progress=False)
    interpreter.choose(*CHOOSE_ITEM)
    seconds = []
    for _ in range(calls):
        started = time.perf_counter()
        interpreter.choose(*CHOOSE_ITEM)
        seconds.append(time.perf_counter() - started)
    return {"runtime": interpreter.runtime.signature() if interpreter.runtime else "torch",
            "median_s": float(np.median(seconds)), "max_s": float(np.max(seconds)), "calls": calls}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=None, help="interpreter: packaged name or model folder (default: the "
                                                       "packaged default)")
    parser.add_argument("--pairs", type=int, default=1024, help="INLI validation pairs (the first N)")
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per torch batch (default 64)")
    parser.add_argument("--repeats", type=int, default=2, help="timed passes per setting (the best counts)")
    parser.add_argument("--warmup", type=int, default=32, help="pairs run once before the clock starts")
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--output", default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()

    premises, hypotheses = inli_pairs(args.pairs, args.data_root)
    with MachineWatch() as watch:
        result = measure(args.model, premises, hypotheses, args.batch_size, args.repeats, args.warmup)
        result["choose"] = choose_latency(args.model)
    plain = result["torch_fp32_mean"]
    print(f"interpreter {args.model or 'default'}, {len(premises)} INLI validation pairs, torch batch "
          f"{args.batch_size}, best of {args.repeats}")
    cross = result["crossencoder"]
    print(f"{'setting':20s} {'pairs/s':>9s} {'x torch':>8s} {'x CE':>6s} {'max |dp|':>9s} {'same label':>10s} "
          f"{'in fp32':>7s}  runtime")
    for name, run in result["runs"].items():
        if "skipped" in run:
            print(f"{name:20s} skipped: {run['skipped']}")
            continue
        print(f"{name:20s} {run['pairs_per_second']:9.1f} {run['pairs_per_second'] / plain:8.2f} "
              f"{run['pairs_per_second'] / cross:6.2f} {run['max_abs_probability_diff']:9.5f} "
              f"{run['label_agreement']:10.4f} {run['rechecked_in_fp32']:7d}  {run['runtime']}")
    choose = result["choose"]
    print(f"choose over 4 readings ({choose['runtime']}): median {choose['median_s']:.3f} s, largest "
          f"{choose['max_s']:.3f} s of {choose['calls']} calls")
    print(watch.summary())
    if args.output:
        Path(args.output).write_text(json.dumps({"arguments": vars(args), **result, "machine": watch.record},
                                                indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
