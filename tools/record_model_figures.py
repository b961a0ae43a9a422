"""Record a shipped model's release figures in its folder: the human-written suite, the in-distribution test accuracy
on the paper's sources and (with --speed) sentences per second; ``pragmeter impscore models`` reads them back.

    python tools/record_model_figures.py impscore-minilm-human [--speed] [--purpose "one line"]

Writes ``evaluation`` (and ``purpose``) into config.json and replaces the card's "## Human-written evidence" section.
"""

from __future__ import annotations

import argparse
import json
import os
import re

from pragmeter.encoders import embeddings_dir
from pragmeter.impscore.catalogue import measure_throughput, model_config
from pragmeter.impscore.corpus import build_corpus
from pragmeter.impscore.evaluators import SUITE_CORPUS_SEED, HumanSuite, summary_table
from pragmeter.impscore.model import CARD_FILE, CONFIG_FILE, MODELS_DIR, ImpScore
from pragmeter.impscore.ood import development_sentences
from pragmeter.impscore.triplets import embed_corpus, evaluate_heads
from pragmeter.datasets.pairs.registry import PRESETS
from pragmeter.provenance import RunRecord

SECTION = "## Human-written evidence"


def card_section(summary: dict, paper: dict, run: dict) -> str:
    return (f"{SECTION}\n`pragmeter impscore evaluate human --model {run['model']}` (text that people wrote; the default "
            f"is chosen on `decision`), commit `{run['commit']}`, {run['date'][:10]}:\n\n{summary_table(summary)}"
            f"\n\nIn-distribution test accuracy on the paper's sources (seed-0 test split): implicitness "
            f"{paper['implicitness_accuracy']:.4f}, pragmatics {paper['pragmatics_accuracy']:.4f} "
            f"({paper['n_triplets']:,} pairs).\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--speed", action="store_true", help="also time sentences/s on this machine (quiet machine!)")
    parser.add_argument("--purpose", default=None, help="one-line purpose (one model only)")
    parser.add_argument("--no-paper-test", action="store_true",
                        help="keep the recorded paper-source accuracy (models trained on another corpus build)")
    args = parser.parse_args()
    corpus = build_corpus(["all"], seed=SUITE_CORPUS_SEED)[0]
    suite = HumanSuite(corpus=corpus)
    paper_test = corpus[(corpus["split"] == "test") & corpus["source"].isin(PRESETS["paper"])]
    for name in args.models:
        folder = MODELS_DIR / name
        model = ImpScore.load(name, cache=True)  # the path users get: its default backend
        human = suite.evaluate(model)
        summary = suite.summary(human)
        config = model_config(name)
        if args.no_paper_test:
            paper = config.get("evaluation", {}).get("paper_test") or {**config["metrics"]["test"]}
        else:
            # embedded as users' scores are (OpenVINO at the model's precision; torch for the other backends)
            runtime = model.runtime if model.backend == "openvino" else None
            paper, _ = evaluate_heads(model.heads, embed_corpus(paper_test, model.encoder_name, embeddings_dir(),
                                                                show_progress=False, runtime=runtime)["test"])
        run = {**RunRecord.now(model.signature()).to_dict(), "model": name}
        evaluation = {"human": {k: (v["value"] if isinstance(v, dict) else v) for k, v in summary.items()},
                      "human_intervals": {k: v for k, v in summary.items() if isinstance(v, dict)},
                      "paper_test": {k: paper[k] for k in ("implicitness_accuracy", "pragmatics_accuracy", "n_triplets")},
                      "run": run}
        if args.speed:
            texts = list(dict.fromkeys(development_sentences()))[:256]
            evaluation["speed"] = {"sentences_per_second": round(measure_throughput(name, texts), 1),
                                   "load_average": os.getloadavg()[0], "machine": run.get("machine")}
        elif "speed" in config.get("evaluation", {}):
            evaluation["speed"] = config["evaluation"]["speed"]
        config["evaluation"] = evaluation
        if args.purpose:
            config["purpose"] = args.purpose
        (folder / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        card = (folder / CARD_FILE).read_text(encoding="utf-8")
        section = card_section(summary, paper, run)
        pattern = re.compile(rf"{re.escape(SECTION)}\n.*?(?=\n## |\Z)", re.S)
        card = pattern.sub(section.rstrip("\n"), card) if SECTION in card else card.rstrip("\n") + "\n\n" + section
        (folder / CARD_FILE).write_text(card, encoding="utf-8")
        print(f"{name}: decision {human.metrics[suite.primary_metric]:.3f}, paper test {paper['implicitness_accuracy']:.4f} / "
              f"{paper['pragmatics_accuracy']:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
