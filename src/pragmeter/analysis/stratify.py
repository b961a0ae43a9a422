"""Accuracy by implicitness (ImpScore paper §7.2, Figure 7): items are put in ImpScore bins ([0, 0.25) …
[1.75, 2], the last bin closed), and each bin gets its item count, accuracy and Wilson 95% interval. The trend
is summarised twice: Spearman ρ between bin centre and bin accuracy (non-empty bins), and the slope of a
logistic regression of item correctness on the item's score, with a Wald 95% CI (negative = accuracy falls as
texts get more implicit).

Inputs: a predictions table (text, gold, prediction; or a 0/1 correctness column), a per-sample log of
``pragmeter eval --log-samples`` (``samples_<task>.jsonl``), or a harness results folder holding such logs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from pragmeter.metrics.correlation import logistic_slope, spearman
from pragmeter.metrics.intervals import wilson_interval
from pragmeter.errors import DataError, InvalidParameter, PragmeterError
from pragmeter.text import is_blank

log = logging.getLogger("pragmeter")

BIN_EDGES = np.round(np.linspace(0.0, 2.0, 9), 4)
SCORE_RANGE = (0.0, 2.0)


@dataclass
class Predictions:
    """Items to stratify: text, correctness (1/0) and optionally their ImpScore (else scored later)."""

    name: str
    texts: list[str]
    correct: np.ndarray
    scores: np.ndarray | None = None
    source: str = ""
    model: dict | None = None  # the model under test (harness settings), when known
    task: str | None = None
    filter: str | None = None
    extra: dict = field(default_factory=dict)


def _norm(value) -> str | None:
    """A label compared case- and space-insensitively; None when missing (None, NaN or blank)."""
    return None if is_blank(value) else str(value).strip().lower()


def _warn_without_gold(path: Path, where: str, column: str, numbers: list[int]) -> None:
    """A missing prediction is a wrong answer, but an item without a gold label has nothing to grade it against: such
    items are left out of the accuracy, and their rows named (one line) so that none is lost silently."""
    if not numbers:
        return
    shown = ", ".join(map(str, numbers[:10])) + (", …" if len(numbers) > 10 else "")
    log.warning(f"warning: {path}: {where}{'s' if len(numbers) > 1 else ''} {shown}: field {column!r} is missing; "
                f"{len(numbers)} such item(s) left out of the accuracy")


def assign_bins(scores: np.ndarray, edges: np.ndarray = BIN_EDGES) -> np.ndarray:
    """Bin index of each score: [e_i, e_{i+1}) with the last bin closed on the right."""
    scores = np.asarray(scores, dtype=np.float64)
    if np.isnan(scores).any():
        raise PragmeterError("cannot bin a missing ImpScore (NaN)")
    if scores.size and (scores.min() < edges[0] - 1e-6 or scores.max() > edges[-1] + 1e-6):
        raise PragmeterError(f"ImpScores outside [{edges[0]}, {edges[-1]}] (min {scores.min():.4f}, "
                             f"max {scores.max():.4f}); is this an ImpScore column?")
    return np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, len(edges) - 2)


def stratify(scores: np.ndarray, correct: np.ndarray, edges: np.ndarray = BIN_EDGES) -> dict:
    """Per-bin counts, accuracy and Wilson intervals, and the trend statistics."""
    scores = np.asarray(scores, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    if scores.shape != correct.shape:
        raise ValueError("scores and correctness differ in length")
    bins_of = assign_bins(scores, edges)
    bins = []
    for index in range(len(edges) - 1):
        members = correct[bins_of == index]
        n, k = int(members.size), int(members.sum())
        low, high = wilson_interval(k, n)
        bins.append({"low": float(edges[index]), "high": float(edges[index + 1]),
                     "centre": float((edges[index] + edges[index + 1]) / 2), "n": n, "correct": k,
                     "accuracy": k / n if n else None, "ci_low": low, "ci_high": high,
                     "mean_score": float(scores[bins_of == index].mean()) if n else None})
    filled = [b for b in bins if b["n"]]
    total_k, total_n = int(correct.sum()), int(correct.size)
    low, high = wilson_interval(total_k, total_n)
    return {
        "n": total_n, "correct": total_k, "accuracy": total_k / total_n if total_n else None,
        "ci_low": low, "ci_high": high, "bin_edges": [float(e) for e in edges], "bins": bins,
        "trend": {"spearman_bin_centre_vs_accuracy": spearman([b["centre"] for b in filled],
                                                                    [b["accuracy"] for b in filled]),
                  "logistic_slope_per_score_unit": logistic_slope(scores, correct)},
    }


# ---------------------------------------------------------------------------------------------------- inputs
def from_table(path: Path, text_column: str, gold_column: str | None, prediction_column: str | None,
               correct_column: str | None, score_column: str | None, gold_value: str | None) -> Predictions:
    from pragmeter.io import numeric_column, read_table, require_column

    frame = read_table(path)
    texts = require_column(frame, text_column, path).tolist()
    if correct_column:
        raw = require_column(frame, correct_column, path).tolist()
        correct = []
        for row, value in enumerate(raw):
            norm = _norm(value)
            if norm not in ("1", "0", "1.0", "0.0", "true", "false"):
                raise DataError(f"{path}: data row {row + 1}: field {correct_column!r} is {value!r}; expected 1/0 "
                                "or true/false")
            correct.append(norm in ("1", "1.0", "true"))
        # With a correctness column the gold labels are needed only to filter by --gold-value.
        needs_gold = gold_value is not None or (gold_column and gold_column in frame.columns)
        golds = require_column(frame, gold_column, path).tolist() if needs_gold else [None] * len(texts)
    else:
        if not gold_column or not prediction_column:
            raise InvalidParameter("correct_column", InvalidParameter.ALONE, "give it, or a gold and a prediction column",
                                   also={"gold_column": gold_column, "prediction_column": prediction_column})
        golds = require_column(frame, gold_column, path).tolist()
        predictions = require_column(frame, prediction_column, path).tolist()
        # A missing prediction is wrong, as an invalid answer is in the harness metrics.
        correct = [_norm(p) is not None and _norm(p) == _norm(g) for g, p in zip(golds, predictions)]
        # Only graded rows: a row without a gold label is left out below, not counted as wrong.
        _check_vocabulary(path, prediction_column, [p if _norm(g) is not None else None
                                                    for g, p in zip(golds, predictions)], golds)
    scores = None
    if score_column:
        scores = numeric_column(require_column(frame, score_column, path), score_column, path).to_numpy(np.float64)
        bad = np.flatnonzero(np.isnan(scores))
        if bad.size:
            raise DataError(f"{path}: data row {bad[0] + 1}: field {score_column!r} is empty")
        outside = np.flatnonzero((scores < SCORE_RANGE[0] - 1e-6) | (scores > SCORE_RANGE[1] + 1e-6))  # as assign_bins
        if outside.size:
            row = int(outside[0])
            raise DataError(f"{path}: data row {row + 1}: field {score_column!r} is {scores[row]:g}, outside the "
                            f"ImpScore range [{SCORE_RANGE[0]}, {SCORE_RANGE[1]}] ({outside.size} such row(s)); is "
                            "this an ImpScore column?")
    for row, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"{path}: data row {row + 1}: field {text_column!r} is empty")
    keep = list(range(len(texts)))
    if gold_value is not None or not correct_column:  # the gold labels grade or filter the rows
        _warn_without_gold(path, "data row", gold_column, [i + 1 for i in keep if _norm(golds[i]) is None])
        keep = [i for i in keep if _norm(golds[i]) is not None]
    if gold_value is not None:
        keep = [i for i in keep if _norm(golds[i]) == _norm(gold_value)]
    keep = np.array(keep, dtype=int)
    return Predictions(
        name=path.name.split(".")[0], texts=[texts[i] for i in keep],
        correct=np.asarray(correct, dtype=np.float64)[keep], scores=None if scores is None else scores[keep],
        source=str(path), filter=f"gold={gold_value}" if gold_value is not None else None)


def _check_vocabulary(path: Path, column: str, predictions: list, golds: list) -> None:
    """Predictions outside the gold labels count as wrong (as invalid answers do); say so, and refuse a column
    with no gold label at all (a wrong column or label scheme, which would read as accuracy 0)."""
    vocabulary = {_norm(g) for g in golds} - {None}
    outside = [row for row, p in enumerate(predictions) if _norm(p) is not None and _norm(p) not in vocabulary]
    if not outside:
        return
    first = outside[0]
    labels = ", ".join(sorted(vocabulary)[:10])
    message = (f"{path}: data row {first + 1}: field {column!r} is {predictions[first]!r}, not a gold label "
               f"({labels})")
    if len(outside) == sum(_norm(p) is not None for p in predictions):
        raise DataError(f"{message}; no prediction is a gold label: wrong column or label names?")
    log.warning(f"warning: {message}; {len(outside)} such row(s) count as wrong")


def from_samples(path: Path, gold_value: str | None = None, model: dict | None = None) -> Predictions:
    """A harness per-sample log; every answered sample (item × run) is one trial, invalid answers count as wrong;
    requests that failed after every retry were not answered and are left out, as in the harness metrics."""
    from pragmeter.io import read_records

    numbered = read_records(path)
    if not numbered:
        raise DataError(f"{path}: no samples")
    texts, correct, without_gold = [], [], []
    for line_number, record in numbered:
        if record.get("error"):
            continue
        if _norm(record.get("gold")) is None:
            without_gold.append(line_number)
            continue
        if gold_value is not None and _norm(record.get("gold")) != _norm(gold_value):
            continue
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"{path}: line {line_number}: field 'text' is missing; stratification needs the text "
                            "of each item (tasks that log it: hate_detection, ishate_implicit, ishate_subtle)")
        value = record.get("correct")
        if value is None:
            value = record.get("parsed") is not None and record.get("parsed") == record.get("gold")
        if not isinstance(value, (bool, int, float)) or value not in (0, 1):
            raise DataError(f"{path}: line {line_number}: field 'correct' is {value!r}; expected 1/0 or true/false")
        texts.append(text)
        correct.append(float(value))
    _warn_without_gold(path, "line", "gold", without_gold)
    runs = set()
    for line_number, record in numbered:
        run = record.get("run", 0)
        if not isinstance(run, int) or isinstance(run, bool) or run < 0:
            raise DataError(f"{path}: line {line_number}: field 'run' is {run!r}; expected a run number (0, 1, …)")
        runs.add(run)
    # Named by its file (samples_<task>.jsonl), as the harness writes it: the name becomes part of output paths.
    name = path.stem.removeprefix("samples_")
    task = numbered[0][1].get("task")
    return Predictions(name=name, texts=texts, correct=np.asarray(correct, dtype=np.float64), source=str(path),
                       model=model, task=task if isinstance(task, str) and task else name,
                       filter=f"gold={gold_value}" if gold_value is not None else None,
                       extra={"runs": len(runs)})


def results_model(results_dir: Path) -> dict | None:
    """The model settings recorded in a results folder's results.json (None when there is none); one that is not a
    regular file inside the folder is not read (``io.untrusted.refusal``)."""
    from pragmeter.io import read_json
    from pragmeter.io.untrusted import refusal

    results = results_dir / "results.json"
    if not os.path.lexists(results):
        return None
    problem = refusal(results_dir, results)
    if problem:
        raise DataError(f"{results}: {problem}; not read")
    model = read_json(results, dict, "harness results").get("model")
    return model if isinstance(model, dict) else None


def sample_logs(results_dir: Path) -> list[tuple[Path, dict | None]]:
    """Per-sample logs of a harness results folder, with the model settings from its results.json. Only regular
    files inside the folder are logs (``io.untrusted.refusal``): a link or FIFO is said and passed over."""
    from pragmeter.io.untrusted import refusal

    logs = []
    for path in sorted(results_dir.glob("samples_*.jsonl")):
        problem = refusal(results_dir, path)
        if problem is None:
            logs.append(path)
        else:
            log.warning(f"warning: {path}: {problem}; not read")
    model = results_model(results_dir) if logs else None
    return [(path, model) for path in logs]


# ---------------------------------------------------------------------------------------------------- run
def stratified_path(output: Path, name: str, suffix: str = ".json") -> Path:
    """Where the stratification ``name`` is written in ``output``: ``stratified_<name><suffix>``, the name made one
    safe file name (``io.untrusted.safe_name``: a task or file name may come from someone else's file)."""
    from pragmeter.io.untrusted import safe_name

    return output / f"stratified_{safe_name(name)}{suffix}"


def score_predictions(predictions: Predictions, model) -> np.ndarray:
    if predictions.scores is not None:
        return predictions.scores
    from pragmeter.impscore.scoring import encode_in_chunks

    distinct = list(dict.fromkeys(predictions.texts))
    scores = model.score_embeddings(encode_in_chunks(model, distinct, f"scoring {predictions.name}"))
    lookup = dict(zip(distinct, scores))
    return np.array([lookup[t] for t in predictions.texts], dtype=np.float64)


def write_stratified(predictions: Predictions, scores: np.ndarray, output: Path, impscore: str | None) -> dict:
    """Write ``stratified_<name>.json``, ``stratified_<name>.png`` and the per-item scores and bins."""
    import pandas as pd

    from pragmeter.analysis.plots import stratified_figure
    from pragmeter.provenance import RunRecord
    from pragmeter.io import write_json_atomic, write_table

    result = stratify(scores, predictions.correct)
    name = predictions.name
    output.mkdir(parents=True, exist_ok=True)
    model_name = (predictions.model or {}).get("model")
    title = f"{name}" + (f" — {model_name}" if model_name else "") + (f" ({predictions.filter})" if predictions.filter else "")
    png = stratified_path(output, name, ".png").name
    bins = result["bins"]
    stratified_figure(title, [b["centre"] for b in bins], [b["accuracy"] for b in bins],
                      [b["ci_low"] for b in bins], [b["ci_high"] for b in bins], [b["n"] for b in bins],
                      float(BIN_EDGES[1] - BIN_EDGES[0]), output / png)
    items = stratified_path(output, name, "_items.parquet").name
    write_table(pd.DataFrame({"text": predictions.texts, "impscore": scores,
                              "bin": assign_bins(scores), "correct": predictions.correct}), output / items,
                overwrite=True)
    payload = {"kind": "pragmeter-stratified", "version": 1, "name": name, "source": predictions.source,
               "task": predictions.task, "model": predictions.model, "impscore_model": impscore,
               "filter": predictions.filter, "metric": "accuracy", **predictions.extra, **result,
               "plots": [png], "items_file": items, "run": RunRecord.now(impscore).to_dict()}
    write_json_atomic(stratified_path(output, name), payload)
    return payload


def stratify_predictions(predictions: Predictions, output: Path, impscore) -> dict:
    """Score (unless the input had scores; ``impscore()`` gives the ImpScore model, loaded only when needed),
    stratify and write one input; its payload. An input left without items is an error naming its filter."""
    if not predictions.texts:
        raise PragmeterError(f"{predictions.source}: no items left to stratify"
                             + (f" ({predictions.filter})" if predictions.filter else ""))
    model = None if predictions.scores is not None else impscore()
    return write_stratified(predictions, score_predictions(predictions, model), output,
                            None if model is None else model.signature())


def stratified_lines(payload: dict, path: Path) -> list[str]:
    """A written stratification in a few lines: n and accuracy, each bin with its Wilson CI, then the trend."""
    lines = [f"{payload['name']}: n={payload['n']} accuracy={payload['accuracy']:.4f} -> {path}"]
    for b in payload["bins"]:
        accuracy = "   -  " if b["accuracy"] is None else f"{b['accuracy']:.4f} [{b['ci_low']:.3f}, {b['ci_high']:.3f}]"
        lines.append(f"  [{b['low']:.2f}, {b['high']:.2f}{']' if b['high'] == 2.0 else ')'} n={b['n']:<6} {accuracy}")
    rho = payload["trend"]["spearman_bin_centre_vs_accuracy"]
    slope = payload["trend"]["logistic_slope_per_score_unit"]
    if rho["rho"] is not None:
        lines.append(f"  Spearman rho(bin centre, accuracy) = {rho['rho']:+.3f} (p={rho['p_value']:.3g}, {rho['n']} bins)")
    if slope["slope"] is not None:
        lines.append(f"  logistic slope = {slope['slope']:+.3f} per score unit [{slope['ci_low']:+.3f}, "
                     f"{slope['ci_high']:+.3f}] (n={payload['n']})")
    return lines


def stratify_all(inputs: list[Predictions], output: Path, impscore: Callable[[], Any]) -> Iterator[str]:
    """``pragmeter analyze stratify``: stratify and write each input (:func:`stratify_predictions`; ``impscore()``
    is called once, and only for an input without scores); yields what to report as each is written."""
    impscore = cache(impscore)
    for predictions in inputs:
        payload = stratify_predictions(predictions, output, impscore)
        yield from stratified_lines(payload, stratified_path(output, predictions.name))


def _is_sample_log(path: Path) -> bool:
    """A per-sample log of the harness (its records have task, prompt and parsed), not a predictions table."""
    from pragmeter.io import read_records

    if path.suffix != ".jsonl":
        return False
    records = read_records(path)
    return bool(records) and all(key in records[0][1] for key in ("task", "prompt", "parsed"))


def load_predictions(input_path: str | Path, gold_value: str | None = None, text_column: str = "text",
                     gold_column: str = "gold", prediction_column: str = "prediction", correct_column: str | None = None,
                     score_column: str | None = None) -> list[Predictions]:
    """What to stratify: a predictions table, a samples_<task>.jsonl of ``pragmeter eval --log-samples``, or a
    results folder holding such logs (one Predictions per log)."""
    from pragmeter.io import check_input

    path = Path(input_path)
    if path.is_dir() and os.access(path, os.R_OK | os.X_OK):
        logs = sample_logs(path)
        if not logs:
            raise PragmeterError(f"{path}: no samples_<task>.jsonl (an eval run that logs its samples writes them)")
        # A run folder holds one log per task: stratify every task that can be, say why for the others.
        inputs, skipped = [], []
        for sample_log, model in logs:
            try:
                predictions = from_samples(sample_log, gold_value, model)
            except DataError as error:
                skipped.append(str(error))
                continue
            if predictions.texts:
                inputs.append(predictions)
            else:
                skipped.append(f"{sample_log}: no items left to stratify ({predictions.filter})")
        if not inputs:  # nothing to stratify: the reasons are the error (one line, naming the files)
            raise PragmeterError(skipped[0] if len(skipped) == 1 else
                                 f"{path}: no task log could be stratified: {'; '.join(skipped)}")
        for reason in skipped:
            log.info(f"pragmeter analyze stratify: skipped {reason}")
        return inputs
    if not path.exists():
        raise PragmeterError(f"{path}: no such file or folder")
    check_input(path)
    if _is_sample_log(path):
        return [from_samples(path, gold_value, results_model(path.parent))]
    return [from_table(path, text_column, gold_column, prediction_column, correct_column, score_column,
                       gold_value)]



def stratify_input(input_path: str | Path, output: str | Path | None, impscore: Callable[[], Any],
                   name: str | None = None, overwrite: bool = False, gold_value: str | None = None,
                   text_column: str = "text", gold_column: str = "gold", prediction_column: str = "prediction",
                   correct_column: str | None = None, score_column: str | None = None) -> Iterator[str]:
    """``pragmeter analyze stratify``: what ``input_path`` holds (:func:`load_predictions`; ``name`` renames a
    single input), stratified into ``output`` (default: the results folder, or the input file's folder) by
    :func:`stratify_all`. Files it would replace are refused unless ``overwrite``, before any scoring."""
    from pragmeter.io import check_outputs

    inputs = load_predictions(input_path, gold_value, text_column, gold_column, prediction_column, correct_column,
                              score_column)
    if name:
        if len(inputs) > 1:
            raise InvalidParameter("name", name, "needs a single input (this folder holds several sample logs)")
        inputs[0].name = name
    path = Path(input_path)
    output = Path(output) if output else path if path.is_dir() else path.parent
    check_outputs([stratified_path(output, p.name) for p in inputs], overwrite)
    yield from stratify_all(inputs, output, impscore)
