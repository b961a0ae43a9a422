"""Encoder layers trained together with ImpScore's heads (the paper keeps its encoder frozen).

After the heads' own training on the frozen encoder, the top ``encoder_layers`` transformer layers and those heads
train together on the same margin objective (AdamW, gradients clipped at 1, bf16 autocast) for ``encoder_epochs``
epochs of ``encoder_batch_size`` triplets; the epoch with the best validation implicitness accuracy is kept. Every
text is tokenised once up front, so that an accelerator never waits on the host for tokens. The model folder then
carries the trained layers (pragmeter.encoders.finetuned), or with ``encoder_rank`` R each matrix's change as
rank-R factors (truncated SVD: a fraction of the layers' size), and the held-out figures are then the compressed
encoder's; with ``encoder_adapters`` too, the layers train rank-R adapters (LoRA) whose factors ship as trained.
Training all of an encoder's layers needs an accelerator in practice; on a CPU it is slow (docs/results.md).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from pragmeter.encoders.low_rank import LowRankAdapter, low_rank_change

HEADS_LR = 1e-3  # the heads' learning rate in the joint phase (they start trained)
WEIGHT_DECAY = 0.01


class TrainableEncoder:
    """A sentence-transformers encoder whose layers can train, run through the model's own modules (its
    Transformer, its Pooling whatever the mode, Normalize where the folder has it), so what trains is what serves:
    ``embed`` matches SentenceTransformer.encode. ``texts`` are tokenised once; rows index them."""

    def __init__(self, folder: str | Path, device: str, texts: list[str]) -> None:
        from sentence_transformers import SentenceTransformer

        self.st = SentenceTransformer(str(folder), device=device).float()
        self.bert = self.st[0].auto_model
        self.device = device
        # the newer name; older sentence-transformers releases have only the long one
        self.width = getattr(self.st, "get_embedding_dimension", self.st.get_sentence_embedding_dimension)()
        tokenizer = self.st.tokenizer
        self.token_types = "token_type_ids" in tokenizer.model_input_names
        ids = tokenizer(texts, truncation=True, max_length=self.st.max_seq_length)["input_ids"]
        self.lengths = torch.tensor([len(i) for i in ids])
        self.ids = torch.full((len(ids), int(self.lengths.max())), tokenizer.pad_token_id or 0, dtype=torch.int32)
        for row, sequence in enumerate(ids):
            self.ids[row, :len(sequence)] = torch.tensor(sequence)

    def unfreeze(self, layers: int, adapter_rank: int = 0) -> list[torch.nn.Parameter]:
        """Only the top ``layers`` transformer layers train; returns their parameters. With ``adapter_rank`` R their
        matrices stay frozen and each trains a rank-R change (LowRankAdapter; biases and layer norms whole)."""
        for p in self.bert.parameters():
            p.requires_grad_(False)
        blocks = self.bert.encoder.layer
        top = list(blocks[len(blocks) - layers:]) if layers else []
        frozen = set()  # the adapted matrices
        if adapter_rank:
            for block in top:
                for name, module in list(block.named_modules()):
                    if isinstance(module, torch.nn.Linear):
                        parent, _, child = name.rpartition(".")
                        setattr(block.get_submodule(parent), child, LowRankAdapter(module, adapter_rank))
                        frozen.add(id(module.weight))
        trainable = [p for block in top for p in block.parameters() if id(p) not in frozen]
        for p in trainable:
            p.requires_grad_(True)
        return trainable

    def adapter_factors(self) -> dict[str, torch.Tensor]:
        """The trained layers as shipped after adapter training: each adapted matrix's change as ``NAME.up`` /
        ``NAME.down`` factors (named as the base encoder names the matrix), the other trained tensors whole; fp16.
        The adapters are removed and the encoder left holding base + up @ down (the fp16 factors, as loaded)."""
        from pragmeter.encoders.low_rank import DOWN, UP

        out, adapters = {}, []
        for name, module in self.bert.named_modules():
            if isinstance(module, LowRankAdapter):
                adapters.append((name, module))
                out[f"{name}.weight{UP}"] = module.up.detach().cpu().half()
                out[f"{name}.weight{DOWN}"] = module.down.detach().cpu().half()
        for name, module in adapters:
            parent, _, child = name.rpartition(".")
            setattr(self.bert.get_submodule(parent), child, module.base)
        for name, p in self.bert.named_parameters():  # what trained whole: biases and layer norms (unfreeze)
            if p.requires_grad:
                out[name] = p.detach().cpu().half()
        self.load_changes(self.bert.state_dict(), out, "the adapters")
        return out

    def load_changes(self, base: dict[str, torch.Tensor], changes: dict[str, torch.Tensor], label: str) -> None:
        """Put ``changes`` as shipped (whole tensors, ``.up``/``.down`` factors; pragmeter.encoders.finetuned) onto
        ``base`` and into the encoder, so what is measured next is what ships; ``label`` names them in errors."""
        from pragmeter.encoders.low_rank import UP, apply_changes

        merged = {name: tensor.detach().cpu().clone() for name, tensor in base.items()
                  if name in changes or name + UP in changes}
        apply_changes(merged, changes, label, "the trained encoder")
        self.bert.load_state_dict(merged, strict=False)

    def forward(self, rows) -> torch.Tensor:
        """Embeddings of the texts at ``rows`` (with gradients where layers train)."""
        rows = torch.as_tensor(rows, dtype=torch.long)
        width = int(self.lengths[rows].max())
        ids = self.ids[rows, :width].to(self.device).long()
        mask = (torch.arange(width)[None, :] < self.lengths[rows, None]).to(self.device).long()
        features = {"input_ids": ids, "attention_mask": mask}
        if self.token_types:
            features["token_type_ids"] = torch.zeros_like(ids)
        return self.st(features)["sentence_embedding"]

    def embed(self, rows, batch_size: int | None = None) -> torch.Tensor:
        """fp32 embeddings of the texts at ``rows``, no gradient, batched in length order, returned in row order
        (``batch_size`` None: 512 on a GPU, 32 on a CPU, where padding to a long batch's longest text costs most)."""
        batch_size = batch_size or (512 if self.device.startswith("cuda") else 32)
        rows = torch.as_tensor(rows, dtype=torch.long)
        order = torch.argsort(self.lengths[rows])
        out = torch.empty(len(rows), self.width, device=self.device)
        self.st.eval()
        with torch.inference_mode():
            for start in range(0, len(rows), batch_size):
                chunk = order[start:start + batch_size]
                out[chunk.to(self.device)] = self.forward(rows[chunk])
        return out

    def table(self, rows) -> torch.Tensor:
        """A table with a row per text: the embeddings of ``rows``, zeros elsewhere."""
        table = torch.zeros(len(self.lengths), self.width, device=self.device)
        table[torch.as_tensor(rows, device=self.device)] = self.embed(rows)
        return table


def triplet_rows(corpus: pd.DataFrame) -> tuple[list[str], pd.DataFrame]:
    """The corpus as distinct texts and, per pair, the rows of its implicit side (i1), explicit side (i2) and
    negative (i3), with split, source and pragmatic."""
    texts = pd.unique(pd.concat([corpus["implicit"], corpus["explicit"], corpus["negative"]])).tolist()
    row_of = {text: i for i, text in enumerate(texts)}
    pragmatic = corpus["pragmatic"] if "pragmatic" in corpus.columns else pd.Series(True, index=corpus.index)
    rows = pd.DataFrame({"i1": corpus["implicit"].map(row_of), "i2": corpus["explicit"].map(row_of),
                         "i3": corpus["negative"].map(row_of), "split": corpus["split"].to_numpy(),
                         "source": corpus["source"].to_numpy(), "pragmatic": pragmatic.to_numpy(dtype=bool)})
    return texts, rows.reset_index(drop=True)


def rows_used(rows: pd.DataFrame) -> np.ndarray:
    return pd.unique(pd.concat([rows["i1"], rows["i2"], rows["i3"]])).astype(np.int64)


def split_embeddings(rows: pd.DataFrame, table: torch.Tensor, split: str, sources: list[str] | None = None):
    """One split's TripletEmbeddings read from a texts table (``sources``: only those)."""
    from pragmeter.impscore.triplets import TripletEmbeddings

    part = rows[rows["split"] == split]
    if sources is not None:
        part = part[part["source"].isin(sources)]
    index = {c: torch.tensor(part[c].to_numpy(), dtype=torch.long, device=table.device) for c in ("i1", "i2", "i3")}
    return TripletEmbeddings(table[index["i1"]], table[index["i2"]], table[index["i3"]], part["source"].tolist(),
                             torch.tensor(part["pragmatic"].to_numpy(dtype=bool)))


@dataclass
class TunedLayers:
    heads: object  # ImpScoreHeads, the best epoch's, on the encoder's device
    weights: dict[str, torch.Tensor]  # the trained layers' tensors (CPU), named as in the base encoder
    best_epoch: int
    history: list[dict] = field(default_factory=list)


def train_layers(encoder: TrainableEncoder, heads, rows: pd.DataFrame, config, *, heads_lr: float = HEADS_LR,
                 bf16: bool = True, teacher=None, distill_weight: float = 0.0,
                 log: Callable[[str], None] | None = None) -> TunedLayers:
    """Train the top ``config.encoder_layers`` layers of ``encoder`` with a copy of ``heads`` on the training rows;
    leaves ``encoder`` with the best epoch's weights. ``teacher`` (distillation.TeacherTargets of the training
    rows) adds its score differences with ``distill_weight``. With ``config.encoder_adapters`` the layers train
    rank-``config.encoder_rank`` adapters, and the weights returned are their factors (what ships)."""
    from pragmeter.impscore.distillation import distillation_loss
    from pragmeter.impscore.losses import ImpScoreLoss, triplet_outputs
    from pragmeter.impscore.triplets import evaluate_heads, train_weights

    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    adapter_rank = config.encoder_rank if config.encoder_adapters else 0
    layers = encoder.unfreeze(config.encoder_layers, adapter_rank)
    heads = copy.deepcopy(heads).to(encoder.device).train()
    loss_fn = ImpScoreLoss(heads, config.gamma1, config.gamma2, config.alpha)
    optimizer = torch.optim.AdamW([{"params": layers, "lr": config.encoder_lr},
                                   {"params": heads.parameters(), "lr": heads_lr}], weight_decay=WEIGHT_DECAY)
    train = rows[rows["split"] == "train"].reset_index(drop=True)
    weights = train_weights(train["source"].tolist(), config.source_weights).to(encoder.device)
    pragmatic = torch.tensor(train["pragmatic"].to_numpy(dtype=bool), device=encoder.device)
    columns = {c: torch.tensor(train[c].to_numpy(), dtype=torch.long) for c in ("i1", "i2", "i3")}
    val_rows = rows_used(rows[rows["split"] == "val"])
    autocast = "cuda" if encoder.device.startswith("cuda") else "cpu"
    best: tuple[float, object, int] = (-1.0, None, 0)
    history = []
    for epoch in range(1, config.encoder_epochs + 1):
        encoder.st.train()
        heads.train()
        order = torch.randperm(len(train), generator=generator)
        total = 0.0
        for start in range(0, len(train), config.encoder_batch_size):
            batch = order[start:start + config.encoder_batch_size]
            ids = torch.cat([columns[c][batch] for c in ("i1", "i2", "i3")])
            unique, inverse = torch.unique(ids, return_inverse=True)  # each text of the batch embedded once
            with torch.autocast(autocast, dtype=torch.bfloat16, enabled=bf16):
                embedded = encoder.forward(unique)
            e1, e2, e3 = embedded[inverse.to(encoder.device)].float().chunk(3)
            on_device = batch.to(encoder.device)
            loss = loss_fn(e1, e2, e3, pragmatic[on_device], weights=weights[on_device])
            if teacher is not None and distill_weight > 0:
                loss = loss + distill_weight * distillation_loss(triplet_outputs(heads, e1, e2, e3),
                                                                 teacher.rows(on_device), weights[on_device],
                                                                 "differences")
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(layers + list(heads.parameters()), 1.0)
            optimizer.step()
            total += loss.item() * len(batch)
        metrics, _ = evaluate_heads(heads, split_embeddings(rows, encoder.table(val_rows), "val"))
        history.append({"epoch": epoch, "train_loss": round(total / len(train), 5),
                        "val_implicitness": round(metrics["implicitness_accuracy"], 4),
                        "val_pragmatics": round(metrics["pragmatics_accuracy"], 4)})
        if log is not None:
            log(f"encoder layers, epoch {epoch}: {history[-1]}")
        if metrics["implicitness_accuracy"] > best[0]:
            best = (metrics["implicitness_accuracy"],
                    (copy.deepcopy(encoder.bert.state_dict()), copy.deepcopy(heads.state_dict())), epoch)
    trained = {id(p) for p in layers}
    names = [name for name, p in encoder.bert.named_parameters() if id(p) in trained]
    encoder.bert.load_state_dict(best[1][0])
    heads.load_state_dict(best[1][1])
    heads.eval()
    weights = (encoder.adapter_factors() if adapter_rank
               else {name: best[1][0][name].detach().cpu() for name in names})
    return TunedLayers(heads, weights, best[2], history)


def compress_layers(encoder: TrainableEncoder, base: dict[str, torch.Tensor], tuned: dict[str, torch.Tensor],
                    rank: int) -> dict[str, torch.Tensor]:
    """The rank-``rank`` form of ``tuned`` (low_rank_change), put into ``encoder`` in place of its layers so the
    held-out figures measured next are the compressed encoder's; returns the factors to ship."""
    factors = low_rank_change(base, tuned, rank)
    encoder.load_changes(base, factors, "the compressed layers")
    return factors


def held_out_metrics(heads, rows: pd.DataFrame, table: torch.Tensor) -> dict:
    """``val``, ``test`` and ``test_per_source`` of ``heads`` on a texts table (the TrainResult fields)."""
    from pragmeter.impscore.accuracy import per_source_metrics
    from pragmeter.impscore.triplets import evaluate_heads

    val, _ = evaluate_heads(heads, split_embeddings(rows, table, "val"))
    test_split = split_embeddings(rows, table, "test")
    test, out = evaluate_heads(heads, test_split)
    return {"val": val, "test": test,
            "test_per_source": per_source_metrics(out, test_split.sources, test_split.pragmatic)}


def finetune(result, corpus: pd.DataFrame, show_progress: bool = True):
    """``result`` (heads trained on the frozen encoder) with ``result.config.encoder_layers`` encoder layers then
    trained with them: a TrainResult whose heads, metrics and history are the joint phase's, and the trained
    layers' tensors for the model folder (their rank-``encoder_rank`` factors when set; the metrics are then the
    compressed encoder's)."""
    from dataclasses import replace

    from pragmeter.encoders import require_encoder
    from pragmeter.encoders.runtime import training_runtime

    config = result.config
    texts, rows = triplet_rows(corpus)
    encoder = TrainableEncoder(require_encoder(config.encoder), config.device, texts)
    base = {name: tensor.detach().clone() for name, tensor in encoder.bert.state_dict().items()}
    training = training_runtime("auto", config.device)  # bf16 autocast on CUDA, fp32 elsewhere
    tuned = train_layers(encoder, result.heads, rows, config, bf16=training.precision == "bf16",
                         log=logging.getLogger("pragmeter").info if show_progress else None)
    weights = (compress_layers(encoder, base, tuned.weights, config.encoder_rank)
               if config.encoder_rank and not config.encoder_adapters else tuned.weights)
    table = encoder.table(rows_used(rows[rows["split"].isin(["val", "test"])])).cpu()
    heads = tuned.heads.cpu().eval()
    return replace(result, heads=heads, best_epoch=tuned.best_epoch, **held_out_metrics(heads, rows, table),
                   history=[*result.history, *({**h, "phase": "encoder"} for h in tuned.history)]), weights
