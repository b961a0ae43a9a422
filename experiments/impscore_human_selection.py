"""Which ImpScore recipe agrees best with people? Train heads for each variant and seed on one corpus (frozen encoder,
embeddings cached) and score each on the human-written suite (``pragmeter impscore evaluate human``), the
in-distribution test accuracy on the paper's sources, and the LLM-written sets (reported, never deciding alone).

    python experiments/impscore_human_selection.py --corpus corpus_all.parquet --output selection.jsonl \\
        --variants '[{"name": "paper+graded", "sources": "paper,written_graded_everyday",
                      "source_weights": {"written_graded_everyday": 4}, "alpha": 8}]' --seeds 0,1,2

``sources`` takes source names and presets (``paper``, ``figurative``, ``human``, ``generated``, ``general``, ``all``;
runs of 2026-11-27 named ``human`` the suite's pair sources, Circa and LUDWIG included); other keys are TrainConfig
fields (``encoder``, ``encoder_backend``/``encoder_precision``, a distillation ``teacher`` folder with
``distill_weight``). One JSON line per (variant, seed) is appended to
``--output`` as it finishes, so an interrupted run resumes where it stopped. The corpus must be the suite's
(``pragmeter impscore corpus build --sources all``, seed 0), whose test split the suite holds out.
Result: docs/results.md, "ImpScore on human-written evidence".
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import fields
from pathlib import Path

import pandas as pd

from pragmeter.datasets.pairs.registry import PRESETS
from pragmeter.encoders import embeddings_dir
from pragmeter.encoders.embedding_cache import attach_embedding_cache
from pragmeter.impscore.corpus.build import resolve_sources
from pragmeter.impscore.distillation import distillation_targets
from pragmeter.impscore.evaluators import HumanSuite, llm_written_suite
from pragmeter.impscore.model import ImpScore
from pragmeter.impscore.training import TrainConfig, train_heads
from pragmeter.impscore.triplets import corpus_runtime, embed_corpus, evaluate_heads

def expand(sources: str) -> list[str]:
    return resolve_sources(sources.split(","))


def figure(value) -> float:
    return round(float(value["value"] if isinstance(value, dict) else value), 4)


def run_variant(corpus: pd.DataFrame, variant: dict, seed: int, encoder: str, human: HumanSuite, llm,
                limit: int) -> dict:
    sources = expand(variant.get("sources", "paper"))
    part = corpus[corpus["source"].isin(sources)]
    if limit:
        part = part.groupby("split", group_keys=False).head(limit)
    known = {f.name for f in fields(TrainConfig)}
    config = TrainConfig(**{"encoder": encoder, **{k: v for k, v in variant.items() if k in known}, "seed": seed})
    encoder = config.encoder
    runtime = corpus_runtime(config.encoder_backend, config.encoder_precision, encoder)
    splits = embed_corpus(part, encoder, embeddings_dir(), show_progress=False, runtime=runtime)
    targets = distillation_targets(config, part, embeddings_dir(), show_progress=False)
    started = time.perf_counter()
    result = train_heads(splits, config, show_progress=False, targets=targets)
    paper = {}  # accuracy on the paper's sources: validation (for choosing) and test (reported)
    for split in ("val", "test"):
        rows = part[(part["split"] == split) & part["source"].isin(PRESETS["paper"])]
        paper[split], _ = evaluate_heads(result.heads, embed_corpus(rows, encoder, embeddings_dir(),
                                                                     show_progress=False, runtime=runtime)[split])
    # scored as trained: the suite's sentences go through the same backend and precision as the corpus did
    model = attach_embedding_cache(ImpScore(result.heads, encoder, {"name": variant["name"]}, runtime=runtime))
    summary, llm_summary = human.summary(human.evaluate(model)), llm.summary(llm.evaluate(model))
    return {"variant": variant["name"], "seed": seed, "encoder": encoder, "train_seconds": round(time.perf_counter() - started, 1),
            **{f"paper_{split}_{kind}": round(paper[split][f"{kind}_accuracy"], 4)
               for split in ("val", "test") for kind in ("implicitness", "pragmatics")},
            "human": {k: figure(v) for k, v in summary.items()},
            "llm_written": {k: figure(v) for k, v in llm_summary.items()}, "recipe": variant}


COLUMNS = [("paper_test_implicitness", "paper imp."), ("paper_test_pragmatics", "paper prag."),
           ("human.decision", "decision"), ("human.floyd_battery", "Floyd (a)"),
           ("human.floyd_battery_choice", "Floyd (b)"), ("human.pairs_macro", "human pairs"),
           ("human.politeness", "politeness ρ"), ("llm_written.dev_ranking", "dev τ (LLM)"),
           ("llm_written.pairs:written_graded_everyday", "graded pairs (LLM)")]


def summary_table(rows: list[dict]) -> str:
    """Mean ± SD over seeds per variant, one markdown row each (variants in first-seen order; "–" where a run has no
    such figure, e.g. a corpus without that source's held-out pairs)."""
    import numpy as np

    def value(row: dict, key: str) -> float:
        for part in key.split("."):
            row = row.get(part, {})
        return float(row) if isinstance(row, (int, float)) else float("nan")

    lines = ["| variant | seeds | " + " | ".join(label for _, label in COLUMNS) + " |",
             "|---|---|" + "---|" * len(COLUMNS)]
    for variant in dict.fromkeys(r["variant"] for r in rows):
        mine = [r for r in rows if r["variant"] == variant]
        cells = []
        for key, _ in COLUMNS:
            values = [value(r, key) for r in mine]
            sd = f" ± {np.std(values, ddof=1):.3f}" if len(values) > 1 else ""
            cells.append("–" if np.isnan(values).any() else f"{np.mean(values):.3f}{sd}")
        lines.append(f"| {variant} | {len(mine)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="the suite's corpus (all sources, seed 0), parquet")
    parser.add_argument("--variants", required=True, help="JSON list of variants, or a file holding one")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated training seeds (default 0,1,2)")
    parser.add_argument("--encoder", default="all-MiniLM-L6-v2")
    parser.add_argument("--output", required=True, help="JSON lines, appended per (variant, seed); resumes")
    parser.add_argument("--limit", type=int, default=0, help="rows per split (smoke runs; 0 = all)")
    parser.add_argument("--politeness-sample", type=int, default=2000)
    parser.add_argument("--summary", action="store_true", help="print the mean ± SD table of --output and stop")
    parser.add_argument("--pairs-split", choices=["test", "val"], default="test",
                        help="split of the human-written pairs the suite scores (val: for choosing; default test)")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary_table([json.loads(line) for line in Path(args.output).read_text().splitlines() if line]))
        return 0
    text = Path(args.variants).read_text() if Path(args.variants).is_file() else args.variants
    variants = json.loads(text)
    corpus = pd.read_parquet(args.corpus)
    output = Path(args.output)
    done = set()
    if output.exists():
        done = {(row["variant"], row["seed"]) for row in map(json.loads, output.read_text().splitlines()) if row}
    human = HumanSuite(politeness_sample=args.politeness_sample, corpus=corpus, split=args.pairs_split)
    llm = llm_written_suite(corpus=corpus)
    for variant in variants:
        for seed in (int(s) for s in args.seeds.split(",")):
            if (variant["name"], seed) in done:
                continue
            row = run_variant(corpus, variant, seed, args.encoder, human, llm, args.limit)
            with output.open("a", encoding="utf-8") as handle:  # one whole line per finished run
                handle.write(json.dumps(row) + "\n")
            print(json.dumps({k: row[k] for k in ("variant", "seed", "paper_test_implicitness", "paper_test_pragmatics")}
                             | {"decision": row["human"]["decision"], "floyd": row["human"]["floyd_battery"],
                                "pairs": row["human"]["pairs_macro"], "dev_rank": row["llm_written"]["dev_ranking"]}),
                  file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    logging.basicConfig(format="%(message)s")  # the library's messages (the pragmeter logger), as a command shows them
    logging.getLogger("pragmeter").setLevel(logging.INFO)
    raise SystemExit(main())
