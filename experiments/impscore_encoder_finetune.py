"""Does fine-tuning the encoder make ImpScore agree better with people? The default's recipe (frozen
all-MiniLM-L6-v2, heads trained on cached embeddings) against the same heads trained on together with the encoder's
top layers (all of them, or the last few), with or without the mpnet teacher's scores (impscore.distillation).

A forward and backward pass through the encoder for every training sentence is a GPU job, so the experiment runs in
three steps, each a verb of this script (and a fourth that compresses a result for shipping):

    # here: the corpus, the suite's sentences, the teacher's targets and the encoder (fp16 copy) into one folder
    python experiments/impscore_encoder_finetune.py prepare --corpus corpus_all.parquet --bundle ft-bundle \\
        --teacher impscore-mpnet-general --pairs-split val
    # on a GPU machine: train every variant and seed, score the suite's sentences, write scores and metrics
    python experiments/impscore_encoder_finetune.py train --bundle ft-bundle --output ft-out --device cuda
    # here: the human-written suite and the LLM-written sets from those scores (the suite's own evaluators)
    python experiments/impscore_encoder_finetune.py evaluate --corpus corpus_all.parquet --bundle ft-bundle \\
        --results ft-out --pairs-split val
    # here: a saved model's trained layers as rank-32 factors (the default ships so), its figures measured again
    python experiments/impscore_encoder_finetune.py compress --bundle ft-bundle --model ft-out/models/all6-s1 \\
        --rank 32 --output impscore-minilm-general-ft

The bundle (≈ 51 MB with the fp16 encoder copy; the teacher's targets need the mpnet corpus embeddings in the cache,
else leave ``--teacher`` out and the ``top2-teacher`` variant away) is all the GPU machine needs besides this
checkout: ``PYTHONPATH=src`` with its own torch and sentence-transformers. An all-six-layer model folder from
``--save-models`` holds ~21 MB of fp16 shards (each under 15 MiB).

``prepare`` records which sentences (and which sentence pairs) the suite's evaluators ask a model about by running
them once on a recording scorer, so ``train`` needs neither the data root nor pragmeter's evaluators; ``evaluate``
runs the same evaluators on a scorer that answers from the returned tables. The control (frozen encoder) is trained
in the same run, on the same encoder copy, so the comparison is side by side. The joint phase itself is the
library's (``pragmeter.impscore.finetune``): ``pragmeter impscore train --encoder-layers 6 --device cuda`` trains the
default's recipe end to end on one machine with a GPU and the data root.
Result: docs/results.md, "Fine-tuning the encoder".
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import shutil
import sys
import time
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from pragmeter.impscore.distillation import FIELDS, TeacherTargets  # the teacher's outputs per triplet
from pragmeter.impscore.finetune import TrainableEncoder, rows_used, split_embeddings

RECIPE = {"sources": "general", "alpha": 16, "source_weights": {"written_graded_everyday": 4}}
# Variants trained on top of the control's heads: encoder layers unfrozen (from the top), their learning rate, and
# the teacher's weight (0: margins only; the teacher's form is "differences", what the margins compare).
VARIANTS = [
    {"name": "frozen"},
    {"name": "top2", "layers": 2},
    {"name": "top2-teacher", "layers": 2, "distill_weight": 1.0},
    {"name": "all6", "layers": 6, "encoder_lr": 5e-5},
    {"name": "all6-teacher", "layers": 6, "encoder_lr": 5e-5, "distill_weight": 1.0},
    # rank-32 low-rank adapters on all six layers, trained as such (the default ships a rank-32 SVD of all6's change)
    {"name": "lora32", "layers": 6, "encoder_lr": 5e-4, "rank": 32, "adapters": True},
    {"name": "lora32-lr2e-4", "layers": 6, "encoder_lr": 2e-4, "rank": 32, "adapters": True},
    {"name": "lora32-lr1e-3", "layers": 6, "encoder_lr": 1e-3, "rank": 32, "adapters": True},
]


# ------------------------------------------------------------------------------------------------ prepare (CPU)
class RecordingScorer:
    """Answers every question with zeros and remembers what was asked: the sentences scored and the pairs whose
    pragmatic distance was asked for."""

    def __init__(self) -> None:
        self.texts: dict[str, None] = {}
        self.pairs: dict[tuple[str, str], None] = {}

    def score(self, texts) -> np.ndarray:
        self.texts.update(dict.fromkeys(texts))
        return np.zeros(len(texts))

    def pragmatic_distance(self, a, b) -> np.ndarray:
        self.pairs.update(dict.fromkeys(zip(a, b)))
        return np.zeros(len(a))

    def signature(self) -> str:
        return "recording"


def suites(corpus: pd.DataFrame, pairs_split: str, politeness_sample: int):
    from pragmeter.impscore.evaluators import HumanSuite, llm_written_suite

    return (HumanSuite(politeness_sample=politeness_sample, corpus=corpus, split=pairs_split),
            llm_written_suite(corpus=corpus))


def prepare(args: argparse.Namespace) -> int:
    import torch
    from safetensors.torch import load_file, save_file

    from pragmeter.encoders import embeddings_dir, require_encoder
    from pragmeter.impscore.corpus.build import corpus_fingerprint, resolve_sources

    corpus = pd.read_parquet(args.corpus)
    part = corpus[corpus["source"].isin(resolve_sources(RECIPE["sources"].split(",")))].reset_index(drop=True)
    if args.limit:
        part = part.groupby(["split", "source"], group_keys=False).head(args.limit).reset_index(drop=True)
    recorder = RecordingScorer()
    for suite in suites(corpus, args.pairs_split, args.politeness_sample):
        suite(recorder)
    texts = pd.unique(pd.concat([part["implicit"], part["explicit"], part["negative"],
                                 pd.Series(list(recorder.texts)),
                                 pd.Series([t for pair in recorder.pairs for t in pair])])).tolist()
    row = {text: i for i, text in enumerate(texts)}
    bundle = Path(args.bundle)
    bundle.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"text": texts}).to_parquet(bundle / "texts.parquet", compression="zstd")
    triplets = part[["split", "source", "pragmatic"]].copy()
    for column, side in (("i1", "implicit"), ("i2", "explicit"), ("i3", "negative")):
        triplets[column] = part[side].map(row).astype("int32")
    triplets.to_parquet(bundle / "triplets.parquet", compression="zstd")
    np.savez_compressed(bundle / "questions.npz", texts=np.array([row[t] for t in recorder.texts], dtype=np.int32),
                        pairs=np.array([[row[a], row[b]] for a, b in recorder.pairs], dtype=np.int32).reshape(-1, 2))
    if args.teacher:
        from pragmeter.impscore.distillation import teacher_targets

        # the training split's rows in corpus order, as triplets.parquet lists them (only they are matched)
        train = teacher_targets(args.teacher, part[part["split"] == "train"], embeddings_dir())["train"]
        np.savez_compressed(bundle / "teacher.npz", **{f"train/{f}": getattr(train.outputs, f).numpy() for f in FIELDS})
    encoder = Path(require_encoder(args.encoder))
    target = bundle / "encoder"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(encoder, target, ignore=shutil.ignore_patterns("model.safetensors", "README.md", "*.onnx",
                                                                   "onnx", "openvino"))
    # fp16 halves what travels to the GPU machine; `train` widens it back to fp32 before anything runs
    save_file({k: v.to(torch.float16).contiguous() for k, v in load_file(str(encoder / "model.safetensors")).items()},
              str(target / "model.fp16.safetensors"))
    from pragmeter.impscore.training import source_licences

    manifest = {"corpus_sha256": corpus_fingerprint(part), "sources": sorted(part["source"].unique()),
                "licences": source_licences(part),
                "encoder": args.encoder, "teacher": args.teacher, "pairs_split": args.pairs_split,
                "politeness_sample": args.politeness_sample, "texts": len(texts),
                "questions": {"texts": len(recorder.texts), "pairs": len(recorder.pairs)},
                "triplets": triplets["split"].value_counts().to_dict(), "recipe": RECIPE}
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(manifest), file=sys.stderr)
    return 0


# ------------------------------------------------------------------------------------------------ train (GPU)
def widen_encoder(folder: Path) -> Path:
    """The encoder folder with fp32 weights (written once from the fp16 copy)."""
    import torch
    from safetensors.torch import load_file, save_file

    weights = folder / "model.safetensors"
    if not weights.exists():
        half = load_file(str(folder / "model.fp16.safetensors"))
        save_file({k: v.to(torch.float32).contiguous() for k, v in half.items()}, str(weights))
    return folder


def answers(heads, table, questions) -> dict[str, np.ndarray]:
    """The suite's questions answered from embeddings: scores of its sentences, distances of its pairs."""
    import torch

    heads.eval()
    with torch.inference_mode():
        scores, _, _ = heads(table[torch.as_tensor(questions["texts"], dtype=torch.long, device=table.device)])
        pairs = torch.as_tensor(questions["pairs"], dtype=torch.long, device=table.device)
        _, p_a, _ = heads(table[pairs[:, 0]])
        _, p_b, _ = heads(table[pairs[:, 1]])
        distances = heads.pragmatic_distance_from_features(p_a, p_b)
    return {"scores": scores.float().cpu().numpy(), "distances": distances.float().cpu().numpy()}


def paper_accuracy(heads, triplets: pd.DataFrame, table) -> dict[str, float]:
    from pragmeter.datasets.pairs.registry import PRESETS
    from pragmeter.impscore.triplets import evaluate_heads

    out = {}
    for split in ("val", "test"):
        metrics, _ = evaluate_heads(heads, split_embeddings(triplets, table, split, PRESETS["paper"]))
        out.update({f"paper_{split}_{kind}": round(metrics[f"{kind}_accuracy"], 4)
                    for kind in ("implicitness", "pragmatics")})
    return out


def needed_rows(triplets: pd.DataFrame, questions: dict | None = None) -> np.ndarray:
    """Rows of the texts table that ``triplets`` (and the suite's ``questions``) use."""
    rows = rows_used(triplets)
    if questions is None:
        return rows
    return pd.unique(np.concatenate([rows, questions["texts"], questions["pairs"].reshape(-1)])).astype(np.int64)


def variant_config(config, variant: dict, args: argparse.Namespace):
    """The TrainConfig of a variant's joint phase: its layers, learning rate, rank and adapters, and the run's epochs
    and batch size (what training runs and what the saved folder records)."""
    return replace(config, encoder_layers=variant["layers"], encoder_lr=variant.get("encoder_lr", args.encoder_lr),
                   encoder_epochs=args.epochs, encoder_batch_size=args.batch_size, encoder_rank=variant.get("rank", 0),
                   encoder_adapters=variant.get("adapters", False))


def finetune(encoder: TrainableEncoder, heads, triplets: pd.DataFrame, questions: dict, config, variant: dict,
             teacher: TeacherTargets | None, args: argparse.Namespace) -> tuple[object, dict]:
    """The library's joint phase (impscore.finetune.train_layers) for one variant, then the suite's texts embedded
    by the trained encoder; the encoder is put back as packaged for the next variant."""
    from pragmeter.impscore.finetune import train_layers

    start_state = {k: v.detach().clone() for k, v in encoder.bert.state_dict().items()}
    config = variant_config(config, variant, args)
    tuned = train_layers(encoder, heads, triplets, config, heads_lr=args.heads_lr, bf16=args.bf16, teacher=teacher,
                         distill_weight=variant.get("distill_weight", 0.0),
                         log=lambda line: print(f"  {variant['name']} seed {config.seed}: {line}", file=sys.stderr,
                                                flush=True))
    trained_table = encoder.table(needed_rows(triplets, questions))
    encoder.bert.load_state_dict(start_state)
    return (tuned.heads, trained_table, tuned.weights), {"best_epoch": tuned.best_epoch, "history": tuned.history}


def save_model(folder: Path, heads, table, weights: dict, triplets: pd.DataFrame, config, variant: dict, extra: dict,
               manifest: dict, args: argparse.Namespace) -> Path:
    """A model folder as `pragmeter impscore train` writes one (card, config, test metrics per source), carrying the
    trained encoder layers; `ImpScore.load` applies them to the packaged encoder."""
    from pragmeter.impscore.evaluators import SUITE_CORPUS_SEED  # the corpus `prepare` takes is the suite's
    from pragmeter.impscore.finetune import held_out_metrics
    from pragmeter.impscore.training import TrainResult, save_trained

    heads = copy.deepcopy(heads).cpu().eval()
    config = replace(variant_config(config, variant, args), device="cpu",
                     teacher=manifest["teacher"] if variant.get("distill_weight") else None,
                     distill_weight=variant.get("distill_weight", 0.0), distill_on="differences")
    result = TrainResult(heads=heads, config=config, best_epoch=extra["best_epoch"], history=extra["history"],
                         counts=triplets["split"].value_counts().to_dict(),
                         **held_out_metrics(heads, triplets, table.cpu()))
    info = {"file": "the suite's corpus, the recipe's sources", "sources": manifest["sources"], "seed": SUITE_CORPUS_SEED,
            "sha256": manifest["corpus_sha256"], "licences": manifest.get("licences", {})}
    return save_trained(result, folder, folder.name, info, encoder_weights=weights)


def train(args: argparse.Namespace) -> int:
    import torch

    from pragmeter.impscore.losses import TripletOutputs
    from pragmeter.impscore.training import TrainConfig, train_heads

    bundle, output = Path(args.bundle), Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    texts = pd.read_parquet(bundle / "texts.parquet")["text"].tolist()
    triplets = pd.read_parquet(bundle / "triplets.parquet")
    with np.load(bundle / "questions.npz") as q:
        questions = {k: q[k] for k in q.files}
    teacher_all = None
    if (bundle / "teacher.npz").exists():
        with np.load(bundle / "teacher.npz") as t:
            teacher_all = TeacherTargets(TripletOutputs(*(torch.from_numpy(t[f"train/{f}"]) for f in FIELDS)))
    encoder = TrainableEncoder(widen_encoder(bundle / "encoder"), args.device, texts)
    names = [v["name"] for v in VARIANTS]
    variants = [v for v in VARIANTS if not args.variants or v["name"] in args.variants.split(",")]
    unknown = set(args.variants.split(",")) - set(names) if args.variants else set()
    if unknown:
        raise SystemExit(f"unknown variants: {', '.join(sorted(unknown))} (known: {', '.join(names)})")
    # the control's heads need the training and validation texts; the frozen variant's answers need every text
    rows = (np.arange(len(texts)) if any(v["name"] == "frozen" for v in variants)
            else needed_rows(triplets[triplets["split"] != "test"]))
    frozen = encoder.table(rows)
    print(f"embedded {len(rows):,} texts in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    results = output / "results.jsonl"
    done = set()
    if results.exists():
        done = {(r["variant"], r["seed"]) for r in map(json.loads, results.read_text().splitlines()) if r}
    answers_file = output / "answers.npz"
    stored = dict(np.load(answers_file)) if answers_file.exists() else {}
    known = {f.name for f in fields(TrainConfig)}
    for seed in (int(s) for s in args.seeds.split(",")):
        config = TrainConfig(**{k: v for k, v in RECIPE.items() if k in known}, seed=seed, device=args.device)
        control = None
        for variant in variants:
            if (variant["name"], seed) in done:
                continue
            if time.perf_counter() - started > args.budget:
                print(f"time budget of {args.budget} s spent: stopping before {variant['name']} seed {seed}",
                      file=sys.stderr)
                return 0
            run_started = time.perf_counter()
            if control is None:
                # on the CPU, as train_heads expects (it moves the training split to config.device itself)
                splits = {s: split_embeddings(triplets, frozen.cpu(), s) for s in ("train", "val")}
                control = train_heads(splits, config, show_progress=False).heads.to(args.device)
            if variant["name"] == "frozen":
                heads, table, extra, weights = control, frozen, {}, None
            else:
                (heads, table, weights), extra = finetune(encoder, control, triplets, questions, config, variant,
                                                          teacher_all, args)
            chosen = not args.save_runs or f"{variant['name']}/{seed}" in args.save_runs.split(",")
            if args.save_models and weights is not None and chosen:
                save_model(Path(args.save_models) / f"{variant['name']}-s{seed}", heads, table, weights, triplets,
                           config, variant, extra, json.loads((bundle / "manifest.json").read_text()), args)
            row = {"variant": variant["name"], "seed": seed, **paper_accuracy(heads, triplets, table), **extra,
                   "seconds": round(time.perf_counter() - run_started, 1), "recipe": {**RECIPE, **variant},
                   "settings": {k: getattr(args, k)
                                for k in ("epochs", "batch_size", "encoder_lr", "heads_lr", "bf16")},
                   "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"}
            stored.update({f"{variant['name']}/{seed}/{k}": v for k, v in answers(heads, table, questions).items()})
            np.savez(answers_file.with_suffix(".tmp.npz"), **stored)
            answers_file.with_suffix(".tmp.npz").replace(answers_file)
            with results.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row) + "\n")
            print(json.dumps({k: row[k] for k in ("variant", "seed", "paper_test_implicitness",
                                                  "paper_test_pragmatics", "seconds")}), file=sys.stderr, flush=True)
    return 0


# ------------------------------------------------------------------------------------------------ evaluate (CPU)
class AnsweringScorer:
    """Answers the suite's questions from a run's tables (``prepare`` recorded which they are)."""

    def __init__(self, texts: list[str], questions: dict, scores: np.ndarray, distances: np.ndarray, name: str):
        self.scores = {texts[i]: float(s) for i, s in zip(questions["texts"], scores)}
        self.distances = {(texts[a], texts[b]): float(d) for (a, b), d in zip(questions["pairs"], distances)}
        self.name = name

    def score(self, texts) -> np.ndarray:
        return np.array([self.scores[t] for t in texts])

    def pragmatic_distance(self, a, b) -> np.ndarray:
        return np.array([self.distances[pair] for pair in zip(a, b)])

    def signature(self) -> str:
        return self.name


def evaluate(args: argparse.Namespace) -> int:
    from impscore_human_selection import figure, summary_table  # the sibling experiment's table, same columns

    bundle, results = Path(args.bundle), Path(args.results)
    texts = pd.read_parquet(bundle / "texts.parquet")["text"].tolist()
    with np.load(bundle / "questions.npz") as q:
        questions = {k: q[k] for k in q.files}
    answers_ = dict(np.load(results / "answers.npz"))
    corpus = pd.read_parquet(args.corpus)
    manifest = json.loads((bundle / "manifest.json").read_text())
    human, llm = suites(corpus, args.pairs_split, manifest["politeness_sample"])
    rows = []
    for row in map(json.loads, (results / "results.jsonl").read_text().splitlines()):
        key = f"{row['variant']}/{row['seed']}"
        scorer = AnsweringScorer(texts, questions, answers_[f"{key}/scores"], answers_[f"{key}/distances"], key)
        row["human"] = {k: figure(v) for k, v in human.summary(human.evaluate(scorer)).items()}
        row["llm_written"] = {k: figure(v) for k, v in llm.summary(llm.evaluate(scorer)).items()}
        rows.append(row)
        print(json.dumps({"variant": row["variant"], "seed": row["seed"], "decision": row["human"]["decision"],
                          "pairs": row["human"]["pairs_macro"], "dev_rank": row["llm_written"]["dev_ranking"]}),
              file=sys.stderr)
    if args.output:
        Path(args.output).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(summary_table(rows))
    return 0


# ------------------------------------------------------------------------------------------------ compress (CPU)
def compress(args: argparse.Namespace) -> int:
    """A folder from ``train --save-models`` with its trained layers as rank-R factors of each matrix's change
    (encoders.low_rank.low_rank_change), its held-out figures measured again on the compressed encoder, written as a
    new model folder (what ``impscore train --encoder-rank R`` writes in one run)."""
    from pragmeter.encoders import require_encoder
    from pragmeter.encoders.finetuned import WEIGHTS_KEY, check_shards, read_shards
    from pragmeter.impscore.evaluators import SUITE_CORPUS_SEED
    from pragmeter.impscore.finetune import compress_layers, held_out_metrics
    from pragmeter.impscore.model import CONFIG_FILE, read_heads, read_model_config
    from pragmeter.impscore.heads import ImpScoreHeads
    from pragmeter.impscore.numpy_heads import NumpyHeads
    from pragmeter.impscore.training import TrainResult, config_from_options, save_trained

    source, output = Path(args.model), Path(args.output)
    stored = read_model_config(source)
    tuned, _ = read_shards(check_shards(source, stored.get(WEIGHTS_KEY), str(source / CONFIG_FILE)))
    tuned = {name: tensor.float() for name, tensor in tuned.items()}
    training = stored["training"]
    config = replace(config_from_options(training), device="cpu", encoder_rank=args.rank)
    texts = pd.read_parquet(Path(args.bundle) / "texts.parquet")["text"].tolist()
    triplets = pd.read_parquet(Path(args.bundle) / "triplets.parquet")
    encoder = TrainableEncoder(require_encoder(config.encoder), "cpu", texts)
    base = {name: tensor.detach().clone() for name, tensor in encoder.bert.state_dict().items()}
    factors = compress_layers(encoder, base, tuned, args.rank)
    table = encoder.table(rows_used(triplets[triplets["split"].isin(["val", "test"])]))
    heads = ImpScoreHeads.from_numpy(NumpyHeads(stored["heads"], read_heads(source, stored)), "cpu")  # not the whole-layer encoder
    history = json.loads((source / "history.json").read_text(encoding="utf-8"))
    result = TrainResult(heads=heads, config=config, best_epoch=training["best_epoch"], history=history,
                         counts=training["counts"], **held_out_metrics(heads, triplets, table))
    info = {"seed": SUITE_CORPUS_SEED, **training["corpus"]}  # the bundle's corpus is the suite's; older folders
    # (run H9's) do not record its seed
    result.folder = save_trained(result, output, output.name, info, encoder_weights=factors)
    print(result.summary(), file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    p = verbs.add_parser("prepare", help="corpus, suite questions, teacher targets and encoder into --bundle")
    p.add_argument("--corpus", required=True, help="the suite's corpus (all sources, seed 0), parquet")
    p.add_argument("--bundle", required=True)
    p.add_argument("--encoder", default="all-MiniLM-L6-v2")
    p.add_argument("--teacher", default=None, help="a shipped model or folder whose scores a variant matches")
    p.add_argument("--pairs-split", choices=["test", "val"], default="val")
    p.add_argument("--politeness-sample", type=int, default=2000)
    p.add_argument("--limit", type=int, default=0, help="rows per split and source (smoke runs; 0 = all)")
    p.set_defaults(func=prepare)
    t = verbs.add_parser("train", help="train every variant and seed; write answers.npz and results.jsonl")
    t.add_argument("--bundle", required=True)
    t.add_argument("--output", required=True, help="folder; a rerun skips the (variant, seed) runs it holds")
    t.add_argument("--device", default="cuda")
    t.add_argument("--variants", default="", help="comma-separated variant names (default: all)")
    t.add_argument("--seeds", default="0,1,2")
    t.add_argument("--epochs", type=int, default=2)
    t.add_argument("--batch-size", type=int, default=256, help="triplets per step")
    t.add_argument("--encoder-lr", type=float, default=1e-4, help="unless the variant names its own")
    t.add_argument("--heads-lr", type=float, default=1e-3)
    t.add_argument("--no-bf16", dest="bf16", action="store_false", help="train in fp32 (default: bf16 autocast)")
    t.add_argument("--budget", type=float, default=float("inf"), help="seconds after which no new run starts")
    t.add_argument("--save-models", default=None, metavar="DIR",
                   help="also write each fine-tuned run as a model folder DIR/VARIANT-sSEED (heads + trained layers)")
    t.add_argument("--save-runs", default="", metavar="VARIANT/SEED,...",
                   help="with --save-models: only these runs (e.g. all6/0; default every fine-tuned run)")
    t.set_defaults(func=train)
    e = verbs.add_parser("evaluate", help="the human-written suite and the LLM-written sets from a run's answers")
    e.add_argument("--corpus", required=True)
    e.add_argument("--bundle", required=True)
    e.add_argument("--results", required=True, help="the folder `train` wrote")
    e.add_argument("--pairs-split", choices=["test", "val"], default="val")
    e.add_argument("--output", default=None, help="also write the rows with their suite figures (JSON lines)")
    e.set_defaults(func=evaluate)
    c = verbs.add_parser("compress", help="a saved model's trained layers as low-rank factors, re-measured")
    c.add_argument("--bundle", required=True)
    c.add_argument("--model", required=True, help="a folder `train --save-models` wrote")
    c.add_argument("--rank", type=int, default=32)
    c.add_argument("--output", required=True, help="the new model folder")
    c.set_defaults(func=compress)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    logging.basicConfig(format="%(message)s")  # the library's messages (the pragmeter logger), as a command shows them
    logging.getLogger("pragmeter").setLevel(logging.INFO)
    raise SystemExit(main())
