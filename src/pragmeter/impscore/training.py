"""Training ImpScore's heads on precomputed embeddings.

The frozen encoder runs once per distinct text (cached on disk by encoder and text); every epoch then costs only
three small matrix products per batch. Model selection follows the paper: keep the epoch with the best validation
implicitness accuracy. Runs are deterministic under a seed.
"""

from __future__ import annotations

import copy
import json
import logging
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any
from pathlib import Path

import pandas as pd
import torch

from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
from pragmeter.errors import InvalidParameter, OutputExists
from pragmeter.provenance import RunRecord
from pragmeter.io.model_card import is_non_commercial
from pragmeter.impscore.losses import ImpScoreLoss, triplet_outputs
from pragmeter.impscore.accuracy import format_accuracy, per_source_metrics
from pragmeter.impscore.triplets import (TripletEmbeddings, check_source_weights, corpus_runtime, embed_corpus,
                                        evaluate_heads, train_weights)

log = logging.getLogger("pragmeter")


@dataclass
class TrainConfig:
    encoder: str = "all-MiniLM-L6-v2"
    dim: int = 64
    transform: str = "p2s"
    imp_metric: str = "cosine"
    prag_metric: str = "euclidean"
    gamma1: float = 0.5
    gamma2: float = 0.7
    alpha: float = 1.0
    lr: float = 0.01
    weight_decay: float = 0.001
    batch_size: int = 8192
    epochs: int = 30
    seed: int = 0
    device: str = "cpu"
    encode_batch_size: int = 64
    # How the frozen encoder runs while embedding the corpus: "auto" (resolved when the config is made, as scoring
    # resolves it: OpenVINO on a CPU, in bf16 where the CPU has it and the encoder's bf16 scores are within bounds,
    # else fp32; torch on a GPU device), "openvino" (fp32 or bf16) or "torch" (sentence-transformers, fp32 on a
    # CPU: the shipped models' recipe, slower). Cached under their own keys, as scoring's.
    encoder_backend: str = "auto"
    encoder_precision: str = "auto"
    # Hard negatives (ours; the paper's model is hard_negatives="none"): "source" uses the corpus column
    # hard_negative, "mined" the other pair's explicit sentence nearest to s1 in encoder space, "both" either.
    hard_negatives: str = "none"
    hard_alpha: float = 1.0
    # Weight of an in-batch pragmatic margin (ours; 0 = the paper's objective): each implicit sentence against the
    # nearest explicit side of the other pairs of its batch (losses.in_batch_hardest_margin).
    in_batch_negatives: float = 0.0
    # Loss weight of a source's training pairs (ours; default 1 for every source): a small source that teaches what
    # a large one does not (graded everyday groups beside 25k template dialogue pairs) can count for more.
    source_weights: dict[str, float] = field(default_factory=dict)
    # Distillation (ours; impscore.distillation): a teacher model (shipped name or folder) whose scores of each
    # triplet the student also matches, with weight distill_weight (0 = no teacher).
    teacher: str | None = None
    distill_weight: float = 0.0
    distill_on: str = "scores"  # "scores" (I of each sentence, both ΔP) or "differences" (what the margins compare)
    # Width of a hidden layer in each head map (ours; 0 = the paper's linear maps): more capacity on a frozen encoder.
    hidden: int = 0
    # Encoder layers trained with the heads after their own training, from the top (ours; 0 = the paper's frozen
    # encoder; impscore.finetune, a GPU job in practice); the model folder then carries the layers.
    encoder_layers: int = 0
    encoder_lr: float = 0.0
    encoder_epochs: int = 0  # epochs of that joint phase, after the heads' own training, in batches of
    encoder_batch_size: int = 0  # this many triplets
    # Rank of each trained matrix's change as shipped (0 = the whole layers): small enough for the repository at 32
    encoder_rank: int = 0
    # How that change is found: a truncated SVD of the trained change (False), or trained as such (True: low-rank
    # adapters, LoRA; the factors that ship are the ones trained)
    encoder_adapters: bool = False

    def __post_init__(self) -> None:
        # the config records what embeds the corpus, never "auto"
        runtime = corpus_runtime(self.encoder_backend, self.encoder_precision, self.encoder, self.device)
        self.encoder_backend, self.encoder_precision = runtime.backend, runtime.precision


@dataclass
class TrainResult:
    heads: ImpScoreHeads
    config: TrainConfig
    best_epoch: int
    history: list[dict] = field(default_factory=list)
    val: dict = field(default_factory=dict)
    test: dict = field(default_factory=dict)
    test_per_source: pd.DataFrame | None = None
    counts: dict = field(default_factory=dict)
    seconds: float = 0.0
    folder: Path | None = None  # the model folder, once saved

    def summary(self) -> str:
        """The run in one line: best epoch and test accuracies, and the folder written."""
        implicitness, pragmatics = (self.test.get(f"{name}_accuracy", float("nan"))
                                    for name in ("implicitness", "pragmatics"))
        return (f"best epoch {self.best_epoch}; test implicitness accuracy {implicitness:.4f}, pragmatics accuracy "
                f"{pragmatics:.4f} -> {self.folder}")


def config_from_options(options: Mapping[str, Any]) -> TrainConfig:
    """The TrainConfig that command options ask for (keys named as its fields, others ignored; ``source_weights``
    as (source, weight) pairs; the encoder name made canonical), refusing what a command must not accept silently:
    a teacher without a weight above 0 or the reverse, and bf16 corpus embedding on the torch backend (made when
    the config is: :func:`corpus_runtime`)."""
    from pragmeter.encoders import canonical_name

    values = {f.name: options[f.name] for f in fields(TrainConfig) if f.name in options}
    values.update(encoder=canonical_name(values.get("encoder", TrainConfig.encoder)),
                  source_weights=dict(values.get("source_weights", {})))
    config = TrainConfig(**values)
    if config.teacher and not config.distill_weight > 0:
        raise InvalidParameter("teacher", config.teacher, "a teacher's scores need a distillation weight above 0",
                               also={"distill_weight": config.distill_weight})
    if config.distill_weight > 0 and not config.teacher:
        raise InvalidParameter("distill_weight", config.distill_weight, "needs a teacher model to distil")
    if config.encoder_layers and not (config.encoder_lr > 0 and config.encoder_epochs > 0
                                      and config.encoder_batch_size > 0):
        raise InvalidParameter("encoder_layers", config.encoder_layers, "training encoder layers needs a learning "
                               "rate above 0 and at least 1 epoch and 1 text per batch",
                               also={"encoder_lr": config.encoder_lr, "encoder_epochs": config.encoder_epochs,
                                     "encoder_batch_size": config.encoder_batch_size})
    if config.encoder_rank and not config.encoder_layers:
        raise InvalidParameter("encoder_rank", config.encoder_rank, "compresses trained encoder layers: it needs "
                               "encoder layers to train", also={"encoder_layers": config.encoder_layers})
    if config.encoder_adapters and not config.encoder_rank:
        raise InvalidParameter("encoder_adapters", True, "trains rank-R adapters: it needs an encoder rank",
                               also={"encoder_rank": config.encoder_rank})
    if not config.encoder_layers:  # the frozen encoder: the joint phase's settings do not apply
        config = replace(config, encoder_lr=0.0, encoder_epochs=0, encoder_batch_size=0)
    return config


def mine_hard_negatives(data: TripletEmbeddings, pool: int = 8192, paraphrase_cosine: float = 0.8,
                        seed: int = 0, chunk: int = 1024) -> torch.Tensor:
    """For each pair, the explicit sentence of another pair (from a seeded pool) nearest to its implicit sentence in
    encoder space, skipping candidates that paraphrase its own explicit side (cosine ≥ ``paraphrase_cosine``).
    Surface-similar sentences that mean something else: what the pragmatic distance must learn to push away."""
    generator = torch.Generator().manual_seed(seed)
    candidates = torch.randperm(len(data), generator=generator)[:pool]
    unit = torch.nn.functional.normalize
    pool_explicit = unit(data.e2[candidates], dim=1)
    chosen = torch.empty(len(data), dtype=torch.long)
    for start in range(0, len(data), chunk):
        rows = torch.arange(start, min(start + chunk, len(data)))
        similarity = unit(data.e1[rows], dim=1) @ pool_explicit.T
        paraphrase = (unit(data.e2[rows], dim=1) @ pool_explicit.T) >= paraphrase_cosine
        similarity[paraphrase | (rows[:, None] == candidates[None, :])] = -2.0
        chosen[rows] = candidates[similarity.argmax(dim=1)]
    return data.e2[chosen]


def uses_source_hard_negatives(config: TrainConfig) -> bool:
    """Whether the objective reads the corpus's hard_negative column (else its texts need no embedding)."""
    return config.hard_negatives in ("source", "both") and config.hard_alpha > 0


def hard_negative_batch(data: TripletEmbeddings, config: TrainConfig) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(e4, mask) for the train split under ``config.hard_negatives``, or None for the paper's objective."""
    mode = config.hard_negatives
    if mode == "none" or config.hard_alpha <= 0:
        return None
    if mode not in ("source", "mined", "both"):
        raise InvalidParameter("hard_negatives", mode, choices=("none", "source", "mined", "both"))
    has_source = data.hard if data.hard is not None else torch.zeros(len(data), dtype=torch.bool)
    if mode == "source":
        return (data.e4 if data.e4 is not None else data.e3), has_source
    mined = mine_hard_negatives(data, seed=config.seed)
    if mode == "mined" or data.e4 is None:
        return mined, torch.ones(len(data), dtype=torch.bool)
    return torch.where(has_source[:, None], data.e4, mined), torch.ones(len(data), dtype=torch.bool)


def train_heads(splits: dict[str, TripletEmbeddings], config: TrainConfig, show_progress: bool = True,
                targets: dict | None = None) -> TrainResult:
    """Train with Adam on the train split, select on validation implicitness accuracy, report on test.
    ``targets``: a teacher's outputs per split (impscore.distillation.teacher_targets), matched with weight
    ``config.distill_weight``."""
    from tqdm import tqdm

    from pragmeter.impscore.distillation import distillation_loss

    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    train, val = splits["train"], splits["val"]
    embedding_dim = train.e1.shape[1]
    heads = ImpScoreHeads(HeadsConfig(embedding_dim, config.dim, config.transform, config.imp_metric, config.prag_metric,
                                      config.hidden))
    heads.to(config.device)
    loss_fn = ImpScoreLoss(heads, config.gamma1, config.gamma2, config.alpha)
    optimizer = torch.optim.Adam(heads.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    train_mask = train.pragmatic if train.pragmatic is not None else torch.ones(len(train), dtype=torch.bool)
    device_data = [t.to(config.device) for t in (train.e1, train.e2, train.e3, train_mask)]
    hard = hard_negative_batch(train, config)
    if hard is not None:
        device_data += [t.to(config.device) for t in hard]
    # No weights at all for the paper's objective, so its arithmetic (a plain mean) is unchanged.
    weights = train_weights(train.sources, config.source_weights).to(config.device) if config.source_weights else None
    val_data = TripletEmbeddings(*(t.to(config.device) for t in (val.e1, val.e2, val.e3)), val.sources, val.pragmatic)
    distilling = targets is not None and config.distill_weight > 0
    if distilling and len(targets["train"]) != len(train):
        raise ValueError(f"the teacher's targets cover {len(targets['train'])} training triplets, "
                         f"the corpus {len(train)}")

    best_accuracy, best_state, best_epoch, history = -1.0, None, 0, []
    # each batch's rows are gathered into these (a fresh tensor per batch costs more than the gather itself); a
    # batch's tensors are done with once its backward pass has run
    buffers = [torch.empty((min(config.batch_size, len(train)), *t.shape[1:]), dtype=t.dtype, device=t.device)
               for t in device_data]
    started = time.perf_counter()
    epochs = tqdm(range(1, config.epochs + 1), desc="training the heads", unit="epoch", disable=not show_progress,
                  file=sys.stderr)
    for epoch in epochs:
        heads.train()
        order = torch.randperm(len(train), generator=generator).to(config.device)
        total, batches = 0.0, 0
        for start in range(0, len(train), config.batch_size):
            batch = order[start : start + config.batch_size]
            parts = [torch.index_select(t, 0, batch, out=buffer[: len(batch)])
                     for t, buffer in zip(device_data, buffers)]
            batch_weights = None if weights is None else weights[batch]
            hard_terms = {} if hard is None else {"e4": parts[4], "hard": parts[5], "hard_alpha": config.hard_alpha}
            loss = loss_fn(*parts[:4], weights=batch_weights, in_batch=config.in_batch_negatives, **hard_terms)
            if distilling:
                student = triplet_outputs(heads, *parts[:3])
                loss = loss + config.distill_weight * distillation_loss(student, targets["train"].rows(batch),
                                                                        batch_weights, config.distill_on)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        metrics, _ = evaluate_heads(heads, val_data)
        history.append({"epoch": epoch, "train_loss": total / max(batches, 1), **{f"val_{k}": v for k, v in metrics.items()}})
        epochs.set_postfix(loss=f"{total / max(batches, 1):.4f}", val_imp=f"{metrics['implicitness_accuracy']:.4f}")
        if metrics["implicitness_accuracy"] > best_accuracy:
            best_accuracy, best_epoch = metrics["implicitness_accuracy"], epoch
            best_state = copy.deepcopy(heads.state_dict())
    heads.load_state_dict(best_state)
    heads.cpu().eval()
    result = TrainResult(heads=heads, config=config, best_epoch=best_epoch, history=history,
                         seconds=time.perf_counter() - started,
                         counts={name: len(data) for name, data in splits.items()})
    held_out = ["val", *(["test"] if "test" in splits and len(splits["test"]) else [])]
    for split in tqdm(held_out, desc="evaluating the best epoch", unit="split", disable=not show_progress,
                      file=sys.stderr):
        metrics, outputs = evaluate_heads(heads, splits[split])
        setattr(result, split, metrics)
        if split == "test":
            result.test_per_source = per_source_metrics(outputs, splits["test"].sources, splits["test"].pragmatic)
    return result


def source_licences(corpus: pd.DataFrame) -> dict[str, str]:
    """Source -> licence of its data, from the corpus's licence column (paper-only corpora from older builds lack it)."""
    if "licence" not in corpus.columns:
        return {}
    return {source: str(licence) for source, licence in
            corpus.groupby("source", sort=True)["licence"].first().items() if isinstance(licence, str) and licence}


def licence_section(licences: dict[str, str]) -> str:
    if not licences:
        return ""
    rows = "\n".join(f"| {source} | {licence} |" for source, licence in licences.items())
    non_commercial = sorted(s for s, licence in licences.items() if is_non_commercial(licence))
    note = (f"\nTrained on non-commercial data ({', '.join(non_commercial)}): the weights inherit those terms "
            "(non-commercial use; CC BY-NC-SA also asks derived works to share alike).\n") if non_commercial else ""
    return f"\n## Sources and licences\n| source | licence |\n|---|---|\n{rows}\n{note}"


def llm_written_section(sources: list[str]) -> str:
    """Which of the training sources hold sentences that a language model wrote (their cards say which model)."""
    from pragmeter.datasets.pairs.registry import LLM_WRITTEN_SOURCES

    written = [s for s in sources if s in LLM_WRITTEN_SOURCES]
    if not written:
        return "\n## Sentences written by a language model\nNone: people wrote every sentence (or a rule made it from theirs).\n"
    return ("\n## Sentences written by a language model\n" + ", ".join(written) + ": one side of these sources' pairs was "
            "written by a language model (src/pragmeter/data/generated/README.md names the model and prompt of each; "
            "CAPP's paraphrases are its authors' machine rewrites). Every other source is text that people wrote.\n")


def model_card(name: str, result: TrainResult, corpus_info: dict) -> str:
    cfg, test = result.config, result.test
    table = result.test_per_source
    per_source = "\n".join(
        f"| {r.source} | {r.pairs} | {format_accuracy(r.implicitness_accuracy)} | {format_accuracy(r.pragmatics_accuracy)} |"
        for r in table.itertuples()
    ) if table is not None else ""
    weights = "".join(f", source weight {source} × {weight:g}" for source, weight in sorted(cfg.source_weights.items()))
    if cfg.hard_negatives != "none":
        weights += f", hard negatives {cfg.hard_negatives} × {cfg.hard_alpha:g}"
    if cfg.in_batch_negatives > 0:
        weights += f", in-batch hardest negatives × {cfg.in_batch_negatives:g}"
    if cfg.teacher and cfg.distill_weight > 0:
        weights += f", distilled from `{cfg.teacher}` ({cfg.distill_on} × {cfg.distill_weight:g})"
    if cfg.encoder_backend != "torch":
        weights += f"; corpus embedded through {cfg.encoder_backend} in {cfg.encoder_precision}"
    encoder = (f"the encoder `{cfg.encoder}` with its top {cfg.encoder_layers} transformer layers trained together "
               f"with the heads after the heads' own training ({cfg.encoder_epochs} epochs of {cfg.encoder_batch_size}-"
               f"triplet batches, encoder lr {cfg.encoder_lr:g}; the trained layers ship in this folder as "
               + (f"rank-{cfg.encoder_rank} factors of each matrix's change ("
                  + ("trained as such: low-rank adapters" if cfg.encoder_adapters else "truncated SVD")
                  + ") and the other tensors whole, " if cfg.encoder_rank else "")
               + "`encoder-N.safetensors`, fp16, applied to the packaged encoder on first use)"
               if cfg.encoder_layers else f"the frozen encoder `{cfg.encoder}`")
    stage = "the encoder's" if cfg.encoder_layers else "the heads'"
    from pragmeter.io.model_card import base_model_id, combined_licence, front_matter

    licences = corpus_info.get("licences") or {}
    metadata = front_matter(combined_licence(licences.values()) if licences else "other", base_model_id(cfg.encoder),
                            corpus_info.get("sources", []), "sentence-similarity", ["accuracy"],
                            tags=("pragmeter", "impscore", "implicitness"))
    return metadata + f"""# {name}

ImpScore heads (pragmatic/semantic projections{f" through a {cfg.hidden}-wide hidden layer" if cfg.hidden else ""}, l = {cfg.dim}, transform {cfg.transform}, implicitness
{cfg.imp_metric}, pragmatic distance {cfg.prag_metric}) on {encoder}.
Implicitness = 1 − cos(h_s, h_p W_t) ∈ [0, 2]; higher is more implicit (Wang et al., ICLR 2025).

## Data
Rebuilt ImpScore corpus (`pragmeter impscore corpus build`), sources: {', '.join(corpus_info.get('sources', []))}.
Pairs: train {result.counts.get('train', 0):,}, val {result.counts.get('val', 0):,}, test {result.counts.get('test', 0):,}
(8:1:1 per source, grouped by implicit sentence, seed {corpus_info.get('seed', cfg.seed)}). Corpus sha256: `{corpus_info.get('sha256', 'n/a')}`.

{licence_section(corpus_info.get('licences', {}))}{llm_written_section(corpus_info.get('sources', []))}
## Training
Adam lr {cfg.lr}, weight decay {cfg.weight_decay}, batch {cfg.batch_size}, {cfg.epochs} epochs, γ1 = {cfg.gamma1},
γ2 = {cfg.gamma2}, α = {cfg.alpha}{weights}; best validation implicitness accuracy at {stage} epoch {result.best_epoch}.
pragmeter commit `{corpus_info.get('commit', 'unknown')}`, trained {corpus_info.get('date', '')}.

## Test metrics
| metric | value |
|---|---|
| implicitness accuracy | {test.get('implicitness_accuracy', float('nan')):.4f} |
| pragmatics accuracy | {test.get('pragmatics_accuracy', float('nan')):.4f} |
| mean I implicit / explicit | {test.get('mean_I_implicit', float('nan')):.3f} / {test.get('mean_I_explicit', float('nan')):.3f} |
| mean ΔP⁺ / ΔP⁻ | {test.get('mean_dP_positive', float('nan')):.3f} / {test.get('mean_dP_negative', float('nan')):.3f} |

| source | test pairs | implicitness acc. | pragmatics acc. |
|---|---|---|---|
{per_source}

## Use
```python
from pragmeter import ImpScore
model = ImpScore.load("{name}")
model.score(["You are talking too loudly.", "I'm finding it a bit hard to concentrate."])
```
"""


def save_trained(result: TrainResult, folder: str | Path, name: str, corpus_info: dict,
                 encoder_weights: dict | None = None) -> Path:
    """The model folder of a training run, written atomically; ``encoder_weights``: the encoder tensors trained with
    the heads (name -> tensor), shipped as shards beside the heads."""
    from pragmeter.impscore.model import ImpScore

    run = RunRecord.now()
    info = {**corpus_info, "commit": corpus_info.get("commit") or run.commit or "unknown", "date": run.date[:10],
            "run": run.to_dict()}
    model = ImpScore(result.heads, result.config.encoder)
    extra = {"name": name, "training": {**asdict(result.config), "best_epoch": result.best_epoch,
                                        "counts": result.counts, "corpus": info},
             "metrics": {"val": result.val, "test": result.test}}

    def records(staging: Path) -> None:
        if result.test_per_source is not None:
            result.test_per_source.to_csv(staging / "test_per_source.csv", index=False)
        (staging / "history.json").write_text(json.dumps(result.history, indent=1) + "\n", encoding="utf-8")

    return model.save(folder, card=model_card(name, result, info), extra_config=extra, encoder_weights=encoder_weights,
                      base_encoder=result.config.encoder, also=records)


def train(config: TrainConfig, output: str | Path | None = None, corpus: pd.DataFrame | str | Path | None = None, *,
          name: str | None = None, data_root: str | Path | None = None, cache_root: str | Path | None = None,
          overwrite: bool = False, show_progress: bool = True,
          on_corpus_report: Callable[[str], None] | None = None) -> TrainResult:
    """Corpus -> trained ImpScore: the corpus (a frame, a corpus file or the official all_data.csv, or None: built
    from the data root, its per-source table given to ``on_corpus_report``), its fingerprint and licences, the
    split and source-weight checks (before the long embedding step), the cached embeddings, training, and the
    model folder ``output`` (not written when None). ``result.folder`` is the folder written.

    Raises PragmeterError for a folder that holds a model (unless ``overwrite``), a corpus without train or val
    rows, or source weights naming sources the corpus lacks."""
    from pragmeter.encoders import embeddings_dir
    from pragmeter.errors import PragmeterError
    from pragmeter.impscore.corpus.build import build_corpus, corpus_fingerprint, format_report, load_corpus
    from pragmeter.impscore.distillation import distillation_targets

    if output is not None and (Path(output) / "config.json").exists() and not overwrite:
        raise OutputExists(output, "already holds a model")
    if isinstance(corpus, pd.DataFrame):
        info = {"file": "given as a table"}
    elif corpus is not None:
        info, corpus = {"file": str(corpus)}, load_corpus(corpus, seed=config.seed)
    else:
        corpus, report = build_corpus(seed=config.seed, root=data_root)
        info = {"file": "built from the data root"}
        if on_corpus_report is not None:
            on_corpus_report(format_report(report))
    info.update(sources=sorted(corpus["source"].unique()), sha256=corpus_fingerprint(corpus),
                licences=source_licences(corpus))
    for split in ("train", "val"):
        if not (corpus["split"] == split).any():
            raise PragmeterError(f"the corpus has no {split!r} rows; training needs train and val splits")
    try:
        check_source_weights(config.source_weights, corpus["source"].unique(), "the corpus")
    except ValueError as error:
        raise InvalidParameter("source_weights", InvalidParameter.ALONE, str(error)) from None
    if config.teacher:  # a missing teacher fails now, not after the long embedding step
        from pragmeter.impscore.model import resolve_model_dir

        resolve_model_dir(config.teacher)
    cache_root = Path(cache_root) if cache_root else embeddings_dir()
    splits = embed_corpus(corpus, config.encoder, cache_root, config.encode_batch_size, None,
                          show_progress=show_progress, backend=config.encoder_backend,
                          precision=config.encoder_precision, hard_negatives=uses_source_hard_negatives(config))
    targets = distillation_targets(config, corpus, cache_root, show_progress=show_progress)
    result = train_heads(splits, config, show_progress=show_progress, targets=targets)
    encoder_weights = None
    if config.encoder_layers:  # then the encoder's top layers with those heads (impscore.finetune)
        from pragmeter.impscore.finetune import finetune

        result, encoder_weights = finetune(result, corpus, show_progress=show_progress)
    if output is not None:
        result.folder = save_trained(result, output, name or Path(output).name, info, encoder_weights=encoder_weights)
    return result
