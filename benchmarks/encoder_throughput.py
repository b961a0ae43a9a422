"""How close the graph encoder runs to the CPU's limit: texts/s and multiply-accumulates/s of the OpenVINO encoder
on texts of one token length each, for several lengths, and on the README's training corpus itself.

A transformer encoder costs, per token, 4·h² (attention projections) + 2·h·f (feed-forward) multiply-accumulates
per layer, plus 2·n·h per layer for attention over n tokens (h: hidden size, f: feed-forward width, from the
encoder's config.json). When texts/s × tokens × that cost stays flat across lengths, the matrix kernels, not
padding, batching or Python, set the speed: what is left is the CPU's own rate in that precision.

    python benchmarks/encoder_throughput.py --precision bf16 --corpus corpus.parquet --corpus-texts 20000

The machine state is recorded (``machine.py``): only a quiet machine gives figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from machine import MachineWatch

WORDS = "the quick brown fox jumps over a lazy dog while people watch from the other side".split()


def cost_per_text(config: dict, tokens: int) -> int:
    """Multiply-accumulates of one text of ``tokens`` tokens through the encoder of ``config`` (config.json)."""
    hidden, ffn, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    return layers * tokens * (4 * hidden * hidden + 2 * hidden * ffn + 2 * tokens * hidden)


def texts_of_length(tokens: int, count: int) -> list[str]:
    """``count`` distinct texts of about ``tokens`` tokens each (special tokens included)."""
    return [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(max(tokens - 3, 1))) + f" {i}" for i in range(count)]


def measure(encoder, texts: list[str], config: dict) -> dict:
    ids, _ = encoder.tokenizer.tokenize(texts)
    cost = sum(cost_per_text(config, len(row)) for row in ids)
    encoder.encode(texts[: min(200, len(texts))])  # warm
    started = time.perf_counter()
    encoder.encode(texts)
    seconds = time.perf_counter() - started
    return {"texts": len(texts), "mean_tokens": round(sum(map(len, ids)) / len(ids), 1),
            "seconds": round(seconds, 2), "texts_per_s": round(len(texts) / seconds, 1),
            "gmac_per_s": round(cost / seconds / 1e9, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    parser.add_argument("--precision", default="bf16", choices=["fp32", "bf16"])
    parser.add_argument("--lengths", default="10,18,34,66,130", help="token lengths to measure, comma-separated")
    parser.add_argument("--texts", type=int, default=3000, help="texts per length (a third of it from 64 tokens)")
    parser.add_argument("--corpus", default=None, help="an ImpScore corpus (parquet): also measure its own texts")
    parser.add_argument("--corpus-texts", type=int, default=20000, help="a seeded sample of the corpus's texts")
    parser.add_argument("--output", default=None, help="write the report as JSON here too")
    args = parser.parse_args(argv)

    from pragmeter.encoders import require_encoder
    from pragmeter.encoders.openvino import OpenVinoEncoder
    from pragmeter.encoders.runtime import Runtime

    config = json.loads((Path(require_encoder(args.encoder)) / "config.json").read_text(encoding="utf-8"))
    encoder = OpenVinoEncoder(args.encoder, Runtime("openvino", args.precision))
    report: dict = {"encoder": args.encoder, "precision": args.precision, "rows": []}
    with MachineWatch() as watch:
        for tokens in map(int, args.lengths.split(",")):
            count = args.texts if tokens < 64 else max(args.texts // 3, 1)
            row = {"what": f"{tokens} tokens", **measure(encoder, texts_of_length(tokens, count), config)}
            report["rows"].append(row)
            print(json.dumps(row), flush=True)
        if args.corpus:
            import random

            from pragmeter.impscore.corpus.build import load_corpus
            from pragmeter.impscore.triplets import corpus_texts

            texts = corpus_texts(load_corpus(args.corpus))  # what training embeds (without source hard negatives)
            sample = random.Random(0).sample(texts, min(args.corpus_texts, len(texts)))
            row = {"what": f"corpus sample ({len(sample):,} of {len(texts):,} texts)",
                   **measure(encoder, sample, config)}
            # the whole corpus's arithmetic, and the encoder's time for it at the sample's rate
            lengths = [len(ids) for ids in encoder.tokenizer.tokenize(texts)[0]]
            whole = sum(cost_per_text(config, n) for n in lengths)
            row.update(corpus_texts=len(texts), corpus_tokens=sum(lengths), corpus_tmac=round(whole / 1e12, 2),
                       corpus_seconds_at_sample_rate=round(whole / (row["gmac_per_s"] * 1e9), 1))
            report["rows"].append(row)
            print(json.dumps(row), flush=True)
    report["machine"] = watch.record
    print(watch.summary(), file=sys.stderr)
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
