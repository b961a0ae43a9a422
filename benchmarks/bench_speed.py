"""ImpScore throughput: pragmeter's CPU scorer against the official implementation's way of scoring.

Official way (ImpScore reference code): sentence-transformers ``encode(texts, batch_size=32)`` in fp32 (torch), then
the heads. Ours: ``ImpScore.load(..., backend=, precision=)``, by default what a user gets on this machine (backend
auto = OpenVINO; precision auto = bf16 where the CPU has AVX-512 BF16 or AMX, else fp32), with token-length batches
and de-duplication. Both run in this process on the same texts; the two methods alternate for ``--repeats`` rounds
after a warm-up; the ratio reported is the median over rounds of (official time / our time) within a round.
Only a quiet machine gives a valid ratio: load from other jobs slows the official path more than ours (issue
14: 5.25× on a loaded machine, 1.33× on a quiet one). The CPU-time ratio (process CPU seconds per method; use
``--threads 1`` so no idle thread spins) moves much less with load and is reported beside it as a cross-check.

    python benchmarks/bench_speed.py --out results.json                  # MiniLM (and the default, if on another)
    python benchmarks/bench_speed.py --encoder all-mpnet-base-v2 --n 500 # an encoder, with its shipped model's heads
    python benchmarks/bench_speed.py --backend onnx --precision fp32      # ONNX Runtime, for comparison
    python benchmarks/bench_speed.py --device cuda --n 20000              # on a GPU: official fp32 vs torch bf16
    python benchmarks/bench_speed.py --model impscore-minilm-general-ft   # a model as users load it (fine-tuned layers)

Each row also says how much the length-sorted batches pad (padded tokens / real tokens; 1.00 = none), and the rate
of arithmetic each path reaches (GFLOP/s: the encoder's multiply-adds over its padded batches, two FLOP each), to set
against the CPU's peak (e.g. one 512-bit bf16 dot product, 64 FLOP, a cycle per core).

Accuracy bounds (issue 14): against the official fp32 scores, max |Δscore| ≤ 0.02 and Kendall τ ≥ 0.99; the table
says whether each row meets them. Every run records the machine (CPU model and SIMD flags, threads, load before
and after, CPU used by other processes; ``machine.py``) and warns loudly when it was not quiet.

Texts: a seeded sample of posts from the Latent Hatred corpus (implicit_hate stage-1 posts) in the data root.
Heads: the shipped default model for its encoder; for another encoder, heads with seeded random weights
(speed and the encoder's float differences do not depend on the head weights).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
from machine import MachineWatch, cpu_description

from pragmeter.encoders.runtime import (BACKEND_CHOICES, MAX_ABS_DIFF, PRECISIONS, THREADS_ENV, cpu_has_bf16, isa_cap,
                                        resolve_runtime)
from pragmeter.encoders.runtime import MIN_TAU as MIN_KENDALL_TAU  # the accuracy bounds a faster scorer must meet

POSTS = "implicit_hate/data/implicit-hate-corpus/implicit_hate_v1_stg1_posts.tsv"


def sample_texts(n: int, seed: int, root: str | None) -> list[str]:
    from pragmeter.data.root import data_file
    from pragmeter.io import read_table

    posts = read_table(data_file(POSTS, root=root))["post"].dropna()
    return posts.sample(n, random_state=seed).tolist()


def heads_for(encoder: str, backend: str, seed: int, precision: str | None = "fp32", device: str | None = None,
              model: str | None = None):
    """ImpScore ``model`` (a shipped name or folder; None: the first shipped model on ``encoder``, else seeded random
    heads) on ``device``; precision None: the device's own, bf16 on a GPU."""
    import torch

    from pragmeter.encoders import canonical_name
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore, shipped_models

    on_encoder = [name for name in shipped_models() if canonical_name(model_encoder(name)) == canonical_name(encoder)]
    if model or on_encoder:
        name = model or on_encoder[0]
        return ImpScore.load(name, backend=backend, precision=precision or "auto", device=device), name
    from pragmeter.encoders import load_encoder

    torch.manual_seed(seed)
    dim = load_encoder(encoder).get_embedding_dimension()
    runtime = resolve_runtime(backend, precision, encoder=encoder, device=device)
    model = ImpScore(ImpScoreHeads(HeadsConfig(dim)).to(device or "cpu"), encoder, runtime=runtime)
    return model, f"random heads (seed {seed})"


def model_encoder(model: str) -> str:
    from pragmeter.impscore.model import resolve_model_dir

    return json.loads((resolve_model_dir(model) / "config.json").read_text())["encoder"]


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import kendalltau

    return float(kendalltau(a, b).statistic)


def padded_batches(encoder, texts: list[str]) -> tuple[list[tuple[int, int]], int] | None:
    """(width, texts) of each batch the encoder makes of the distinct ``texts``, and their real tokens (None: torch,
    which pads as sentence-transformers does)."""
    if not hasattr(encoder, "batches"):
        return None
    unique = sorted(set(texts))
    lengths = [len(ids) for ids in encoder.token_ids(unique)]
    return [(max(lengths[i] for i in batch), len(batch)) for batch in encoder.batches(unique)], sum(lengths)


def padding_overhead(padded: tuple[list[tuple[int, int]], int] | None) -> float | None:
    """Padded tokens over real tokens in ``padded`` (padded_batches' answer; None: torch)."""
    return None if padded is None else round(sum(width * size for width, size in padded[0]) / padded[1], 3)


def multiply_adds(config, widths_and_sizes: list[tuple[int, int]]) -> float:
    """Multiply-adds of a BERT-style encoder (``config``: its transformers config) over padded batches given as
    (width, texts): per token and layer the four attention projections, the feed-forward pair and the attention
    products (two of width × hidden)."""
    hidden, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    return float(sum(size * width * layers * (4 * hidden * hidden + 2 * hidden * inner + 2 * width * hidden)
                     for width, size in widths_and_sizes))


def work_gflop(st, ours, texts: list[str], padded=...) -> tuple[float, float | None]:
    """GFLOP (2 per multiply-add) of the official path's batches (sentence-transformers: texts sorted by character
    length, 32 a batch, padded to the longest) and of ours (unique texts in token-length batches, ``padded`` when
    already known; None for torch), so a rate can be set against the CPU's peak."""
    config = st[0].auto_model.config
    lengths = [len(ids) for ids in st.tokenizer(texts, truncation=True, max_length=st.max_seq_length)["input_ids"]]
    order = np.argsort([-len(text) for text in texts], kind="stable")
    official = [(max(lengths[i] for i in order[start:start + 32]), len(order[start:start + 32]))
                for start in range(0, len(order), 32)]
    padded = padded_batches(ours.encoder, texts) if padded is ... else padded
    return 2e-9 * multiply_adds(config, official), None if padded is None else 2e-9 * multiply_adds(config, padded[0])


def measure(encoder: str, texts: list[str], repeats: int, backend: str, precision: str, seed: int,
            device: str | None = None, model: str | None = None) -> dict:
    # the official way on a GPU is still fp32 (sentence-transformers' default); ours takes the device's precision.
    # Both run the model's own encoder weights (a fine-tuned model's layers included), so their scores compare.
    official_model, heads = heads_for(encoder, "torch", seed, device=device, model=model)
    ours = heads_for(encoder, backend, seed, None if device and precision == "auto" else precision, device, model)[0]
    st = official_model.encoder

    def official() -> np.ndarray:
        return official_model.score_embeddings(st.encode(texts, batch_size=32, convert_to_numpy=True))

    def pragmeter() -> np.ndarray:
        return ours.score(texts)

    def synchronise() -> None:  # a GPU's work is queued: time it to the end
        if device and device.startswith("cuda"):
            import torch

            torch.cuda.synchronize()

    # Warm-up (and the one-time ONNX export) outside the timed rounds.
    official_model.score_embeddings(st.encode(texts[:64], batch_size=32))
    ours.score(texts[:64])
    times: dict[str, list[float]] = {"official": [], "pragmeter": []}
    # CPU seconds of this process per method: other jobs barely change them (wall time they change a lot), so
    # with --threads 1 (no idle threads spinning) their ratio estimates the quiet-machine ratio of the work.
    cpu: dict[str, list[float]] = {"official": [], "pragmeter": []}
    scores: dict[str, np.ndarray] = {}
    for round_ in range(repeats):
        order = [("official", official), ("pragmeter", pragmeter)]
        for name, run in order if round_ % 2 == 0 else order[::-1]:
            start, cpu_start = time.perf_counter(), time.process_time()
            scores[name] = run()
            synchronise()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - cpu_start)
            print(f"{encoder} round {round_ + 1}/{repeats} {name}: {len(texts) / times[name][-1]:.1f} sentences/s",
                  file=sys.stderr)
    official_rate = len(texts) / statistics.median(times["official"])
    our_rate = len(texts) / statistics.median(times["pragmeter"])
    # Each round times both methods back to back, so its ratio is the least disturbed by other jobs' load.
    round_ratios = [o / p for o, p in zip(times["official"], times["pragmeter"])]
    max_abs = float(np.abs(scores["official"] - scores["pragmeter"]).max())
    tau = kendall_tau(scores["official"], scores["pragmeter"])
    padded = padded_batches(ours.encoder, texts)
    official_work, our_work = work_gflop(st, ours, texts, padded)
    return {
        "encoder": encoder, "model": model, "backend": ours.backend, "precision": ours.precision, "heads": heads,
        "signature": ours.signature(), "padding_overhead": padding_overhead(padded), "sentences": len(texts),
        "unique_sentences": len(set(texts)), "repeats": repeats,
        "official_sentences_per_s": round(official_rate, 1), "pragmeter_sentences_per_s": round(our_rate, 1),
        "ratio": round(statistics.median(round_ratios), 2), "round_ratios": [round(r, 2) for r in round_ratios],
        "ratio_of_median_rates": round(our_rate / official_rate, 2),
        "official_gflop": round(official_work, 1), "pragmeter_gflop": our_work and round(our_work, 1),
        "official_gflop_per_s": round(official_work / statistics.median(times["official"]), 1),
        "pragmeter_gflop_per_s": our_work and round(our_work / statistics.median(times["pragmeter"]), 1),
        "max_abs_score_diff": max_abs, "kendall_tau": tau,
        "meets_accuracy_bounds": bool(max_abs <= MAX_ABS_DIFF and tau >= MIN_KENDALL_TAU),
        "cpu_ratio": round(statistics.median(o / p for o, p in zip(cpu["official"], cpu["pragmeter"])), 2),
        "official_cpu_s": [round(t, 2) for t in cpu["official"]],
        "pragmeter_cpu_s": [round(t, 2) for t in cpu["pragmeter"]],
        "official_round_s": [round(t, 2) for t in times["official"]],
        "pragmeter_round_s": [round(t, 2) for t in times["pragmeter"]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", action="append",
                        help="encoder(s) to compare (default, with no --model either: all-MiniLM-L6-v2, and the "
                             "default model as users load it when its encoder is another)")
    parser.add_argument("--model", action="append", default=[],
                        help="ImpScore model(s) to time as users load them, each beside the official way on the same "
                             "encoder weights (e.g. the default, whose MiniLM layers are fine-tuned)")
    parser.add_argument("--backend", default="auto", choices=[b for b in BACKEND_CHOICES if b not in ("torch", "onnx-int8")],
                        help="pragmeter's backend (default auto: what a user gets on this machine)")
    parser.add_argument("--precision", default="auto", choices=PRECISIONS,
                        help="pragmeter's precision (default auto: bf16 where the CPU has AVX-512 BF16 or AMX and the "
                             "encoder is within bounds in bf16, see pragmeter.encoders.runtime)")
    parser.add_argument("--n", type=int, default=2000, help="sentences (default 2000)")
    parser.add_argument("--repeats", type=int, default=5, help="alternating timed rounds per method (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-root", default=None)
    parser.add_argument("--out", help="also write the results as JSON here")
    parser.add_argument("--device", default=None,
                        help="torch device for both methods (e.g. cuda; default: the CPU, where the backend applies)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for both methods (torch and ONNX Runtime; default: each library's own)")
    args = parser.parse_args()

    import importlib.metadata

    import torch

    if args.threads:
        os.environ[THREADS_ENV] = str(args.threads)
        torch.set_num_threads(args.threads)

    import pragmeter
    from pragmeter.provenance import code_commit

    texts = sample_texts(args.n, args.seed, args.data_root)
    # refused here, in one line, before any work; each model resolves it again for its own encoder
    runtime = resolve_runtime(args.backend, args.precision, args.threads, device=args.device)
    backend = runtime.backend
    flags = cpu_description()["simd"]
    load = os.getloadavg()[0]
    shown = " ".join(f"{flag}={'yes' if flag in flags else 'no'}" for flag in ("avx2", "avx512_vnni", "avx512_bf16",
                                                                             "amx_bf16"))
    shown += f"; OpenVINO bf16={'yes' if cpu_has_bf16() else 'no'}"
    gpu = f"; GPU {torch.cuda.get_device_name(args.device)}" if args.device and args.device.startswith("cuda") else ""
    cap = f"; capped at {isa_cap()} (ONEDNN_MAX_CPU_ISA)" if isa_cap() else ""
    print(f"CPU flags: {shown}{cap}{gpu}; "
          f"pragmeter backend {backend}, precision {args.precision} (per encoder in the table; official: torch fp32); "
          f"load average {load:.2f}",
          file=sys.stderr)
    if load > 0.5:
        print(f"WARNING: load average {load:.2f} > 0.5: the machine is busy; the figures below are not valid speed "
              "figures (compare only side by side within this run)", file=sys.stderr)
    with MachineWatch() as watch:
        from pragmeter.encoders.finetuned import WEIGHTS_KEY
        from pragmeter.impscore.catalogue import model_config
        from pragmeter.impscore.model import default_model

        # nothing named: the official MiniLM path, and the default model too when its encoder is not that one
        default, config = default_model(), model_config(default_model())
        other = WEIGHTS_KEY in config or config["encoder"] != "all-MiniLM-L6-v2"
        encoders, models = (args.encoder or [], args.model) if args.encoder or args.model else \
            (["all-MiniLM-L6-v2"], [default] if other else [])
        results = [measure(e, texts, args.repeats, backend, args.precision, args.seed, args.device)
                   for e in encoders]
        results += [measure(model_encoder(m), texts, args.repeats, backend, args.precision, args.seed, args.device, m)
                    for m in models]
    versions = {}
    for package in ("torch", "sentence-transformers", "openvino", "onnxruntime"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    report = {"pragmeter": pragmeter.__version__, "commit": code_commit(), "versions": versions,
              "threads": torch.get_num_threads(), "device": args.device or "cpu",
              "gpu": torch.cuda.get_device_name(args.device) if gpu else None,
              "machine": platform.platform(), "date": time.strftime("%Y-%m-%d"), "machine_state": watch.record,
              "results": results}
    print(watch.summary())
    print(f"| encoder | official (torch fp32) sent/s | pragmeter backend, precision | pragmeter sent/s | ratio (median "
          f"per round) | max abs Δscore | Kendall τ | bounds (≤ {MAX_ABS_DIFF}, ≥ {MIN_KENDALL_TAU}) | CPU-time ratio "
          "| padding | GFLOP/s official / pragmeter |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        label = f"{r['encoder']} ({r['model']})" if r.get("model") else r["encoder"]
        print(f"| {label} | {r['official_sentences_per_s']} | {r['backend']}, {r['precision']} | "
              f"{r['pragmeter_sentences_per_s']} | {r['ratio']}× | {r['max_abs_score_diff']:.2e} | "
              f"{r['kendall_tau']:.5f} | {'met' if r['meets_accuracy_bounds'] else 'NOT MET'} | {r['cpu_ratio']}× | "
              f"{r['padding_overhead']} | {r['official_gflop_per_s']} / {r['pragmeter_gflop_per_s']} |")
    if args.out:
        from pragmeter.io import write_json_atomic

        write_json_atomic(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
