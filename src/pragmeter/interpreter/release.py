"""Releasing an interpreter: a ``classifier train inli`` run written in the shipped form
(:mod:`pragmeter.interpreter.shipped`: low-rank changes over its base encoder plus the classification layer), the rank
chosen on validation, bf16 checked against fp32, the card and metrics written (``pragmeter interpret ship``)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from pragmeter.errors import PragmeterError
from pragmeter.interpreter.model import Interpreter

SHIPPED_METRICS = {"val_whole", "val_compressed", "bf16_check", "rank"}  # what interpreter_card reads


def ship(source: str | os.PathLike, output: str | os.PathLike, rank: int | Sequence[int], val, test=None,
         bf16_pairs: int = 4096, batch_size: int = 64, progress: bool = True) -> dict:
    """The shipped form (:mod:`pragmeter.interpreter.shipped`) of the ``classifier train inli`` folder ``source`` at
    ``rank``, written to ``output`` with its card: validation accuracy of the whole and of the compressed model
    (``val``: Examples) with each validation pair's predicted label, bf16 checked on the first ``bf16_pairs``
    validation pairs (through OpenVINO, the path ``auto`` runs, where the CPU has bf16; else torch's autocast; 0: not
    measured, recorded as outside the bounds, so ``auto`` runs the model in fp32), the test report of the compressed
    model when ``test`` is given. Several ranks: each one's compressed validation accuracy is measured and the best
    ships (the smallest among equals); the test split is read once, for that one. Returns the metrics (also in
    metrics.json)."""
    from pragmeter.classify.card import interpreter_card
    from pragmeter.classify.evaluators import ClassificationEvaluator
    from pragmeter.classify.model import TextClassifier, base_encoder
    from pragmeter.encoders.runtime import cpu_has_bf16
    from pragmeter.interpreter.runtime import bf16_bounds, bf16_check, bf16_within
    from pragmeter.interpreter.shipped import compress, save_shipped

    source = Path(source)
    ranks = sorted({rank} if isinstance(rank, int) else set(rank))
    if not ranks or ranks[0] < 1:
        raise PragmeterError(f"rank must be at least 1, got {rank!r}")
    classifier = TextClassifier.load(source, "cpu", "fp32")
    classifier.settings.base_encoder = base_encoder(source, classifier.settings)  # the encoder the changes are over
    meant = Interpreter(classifier, source.name).meant  # an interpreter, before any work
    validation = ClassificationEvaluator(val, "val", "accuracy", batch_size, progress)
    whole = validation.evaluate(classifier).details["report"]
    by_rank, predicted, fp32 = {}, {}, {}  # per rank: report, labels and fp32 probabilities of the validation pairs

    def measure(model, at: int) -> None:
        details = validation.evaluate(model).details
        by_rank[at], predicted[at], fp32[at] = details["report"], details["predictions"], details["probabilities"]

    for candidate in ranks[:-1]:  # compress() replaces the encoder: each candidate starts from the whole model
        trial = TextClassifier.load(source, "cpu", "fp32")
        compress(trial, candidate)
        measure(trial, candidate)
    factors, head = compress(classifier, ranks[-1])
    measure(classifier, ranks[-1])
    rank = max(ranks, key=lambda r: (by_rank[r]["accuracy"], -r))
    if rank != ranks[-1]:
        classifier = TextClassifier.load(source, "cpu", "fp32")
        factors, head = compress(classifier, rank)
    # each validation pair's label as the shipped model predicts it (in fp32 on the CPU), one digit per pair, the
    # index in ``labels``: what a check of the shipped folder compares a few pairs against
    compressed = {**by_rank[rank], "predicted": "".join(str(classifier.labels.index(p)) for p in predicted[rank]),
                  "labels": list(classifier.labels)}
    pairs = max(0, min(bf16_pairs, len(val)))
    texts, hypotheses, checked_fp32 = val.texts[:pairs], val.pairs[:pairs], fp32[rank][:pairs]
    on_openvino = pairs > 0 and cpu_has_bf16()  # what ``auto`` runs here is OpenVINO's bf16: measured on that path
    if pairs and not on_openvino:
        check = {**bf16_check(classifier, texts, hypotheses, meant, checked_fp32, batch_size), "path": "torch"}
    else:  # not measured (yet): outside the bounds until it is
        check = {**bf16_bounds([], [], meant), "path": "none"}
    try:
        trained = json.loads((source / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        trained = {}
    metrics = {"rank": rank, "source": source.name, "val_whole": whole, "val_compressed": compressed,
               **({"val_by_rank": {str(r): by_rank[r]["accuracy"] for r in ranks}} if len(ranks) > 1 else {}),
               "bf16_check": check, "training": {k: trained.get(k) for k in (
                   "command", "commit", "settings", "train_config", "best_epoch", "history", "train_examples",
                   "data_files", "transformers", "torch", "device")}}
    if test is not None:
        tested = ClassificationEvaluator(test, "test", "accuracy", batch_size, progress).evaluate(classifier).details
        metrics["test_compressed"], predictions = tested["report"], tested["predictions"]
        if test.groups:
            from pragmeter.metrics.classification import accuracy_by_group

            metrics["test_compressed"]["per_source"] = accuracy_by_group(test.labels, predictions, test.groups)
    save_shipped(classifier, factors, head, output, interpreter_card(metrics), metrics, check)
    if on_openvino:  # the graph is converted from the shipped folder, then the check is written beside it
        from pragmeter.classify.openvino import OpenVinoClassifier
        from pragmeter.encoders.runtime import Runtime

        graph = OpenVinoClassifier(output, Runtime("openvino", "bf16"), progress=progress, fp32_layers=())
        check = {**bf16_bounds(checked_fp32, graph.probabilities(texts, hypotheses, batch_size), meant),
                 "path": "openvino"}
        if not bf16_within(check, fp32_recheck=True) and len(val) >= 2 * pairs:
            metrics["bf16_check_every_layer"] = check  # what bf16 measured with no layer kept in fp32
            chosen_on = slice(pairs, 2 * pairs)  # validation pairs beyond the check's: where layers are chosen
            layers, metrics["bf16_fp32_layers_tried"] = choose_fp32_layers(
                output, graph.layers, val.texts[chosen_on], val.pairs[chosen_on], fp32[rank][chosen_on], meant,
                batch_size)
            if layers:  # the check measured again, on its own pairs, as bf16 will run
                graph = OpenVinoClassifier(output, Runtime("openvino", "bf16"), progress=False, fp32_layers=layers)
                check = {**bf16_bounds(checked_fp32, graph.probabilities(texts, hypotheses, batch_size), meant),
                         "path": "openvino", "fp32_layers": list(layers)}
        metrics["bf16_check"] = check
        save_shipped(classifier, factors, head, output, interpreter_card(metrics), metrics, check)
    return metrics


def card_text(folder: str | os.PathLike, metrics: dict) -> str:
    """The card of the shipped ``folder`` from its ``metrics`` (an error names its metrics.json): the one way a card
    is written after :func:`ship` (a recorded weight, a note), so what the metrics say and what the card says stay
    one. Made before anything is written, so a folder whose card cannot be made is left as it was."""
    from pragmeter.classify.card import interpreter_card

    try:
        return interpreter_card(metrics)
    except PragmeterError as error:
        raise PragmeterError(f"{Path(folder) / 'metrics.json'}: {error}") from None


def write_card(folder: str | os.PathLike, text: str) -> None:
    """Replace the shipped ``folder``'s card (README.md) with ``text``, atomically."""
    from pragmeter.io import atomic_path

    with atomic_path(Path(folder) / "README.md") as staging:
        staging.write_text(text, encoding="utf-8")


def add_card_note(folder: str | os.PathLike, text: str) -> None:
    """Add the paragraph ``text`` to a shipped folder's card (after its data paragraphs; e.g. where the weights it
    was trained from come from), kept in its metrics.json so that every later rewrite of the card keeps it; a
    paragraph already there is not added twice."""
    from pragmeter.classify.card import CARD_NOTES
    from pragmeter.classify.model import read_json_object
    from pragmeter.io import write_json_atomic

    folder, text = Path(folder), text.strip()
    if not text:
        raise PragmeterError("a card note needs some text")
    path = folder / "metrics.json"
    metrics = read_json_object(path) if path.is_file() else {}
    if not SHIPPED_METRICS <= metrics.keys():
        raise PragmeterError(f"{path}: not a shipped interpreter's metrics (`pragmeter interpret ship` writes them)")
    notes = metrics.get(CARD_NOTES, [])
    if isinstance(notes, list) and text not in notes:
        metrics[CARD_NOTES] = [*notes, text]
    card = card_text(folder, metrics)  # notes that are not texts are refused here, before anything is written
    write_json_atomic(path, metrics)
    write_card(folder, card)


def fp32_layer_plans(layers: int) -> list[tuple[int, ...]]:
    """The sets of encoder layers bf16 may keep in fp32, fewest first: each run of a quarter of the layers, then each
    run of half of them starting at a quarter's boundary."""
    plans = []
    for width in (max(1, layers // 4), max(1, layers // 2)):
        step = max(1, layers // 4)
        for start in range(0, layers - width + 1, step):
            plan = tuple(range(start, start + width))
            if plan not in plans:
                plans.append(plan)
    return plans


def choose_fp32_layers(folder: Path, layers: int, premises, hypotheses, fp32, meant: list[int],
                       batch_size: int = 64) -> tuple[tuple[int, ...], dict]:
    """The fewest encoder layers (:func:`fp32_layer_plans`) that, kept in fp32, bring OpenVINO's bf16 within the
    recheck's bound (RECHECKED_MAX_ABS_DIFF) on these pairs (``fp32``: their fp32 probabilities); among as many, the
    smallest change. Returns (the layers, or () where none does; each plan's largest change, by its layers)."""
    from pragmeter.classify.openvino import OpenVinoClassifier
    from pragmeter.encoders.runtime import Runtime
    from pragmeter.interpreter.runtime import RECHECKED_MAX_ABS_DIFF, bf16_bounds

    tried, passing = {}, []
    for plan in fp32_layer_plans(layers):
        graph = OpenVinoClassifier(folder, Runtime("openvino", "bf16"), progress=False, fp32_layers=plan)
        bounds = bf16_bounds(fp32, graph.probabilities(list(premises), list(hypotheses), batch_size), meant)
        change = max(bounds["max_abs_probability_diff"], bounds["max_abs_score_diff"])
        tried[",".join(map(str, plan))] = change
        if change <= RECHECKED_MAX_ABS_DIFF:
            passing.append((len(plan), change, plan))
    return (min(passing)[2] if passing else ()), tried


def ship_run(run: str | os.PathLike, output: str | os.PathLike, rank: int | Sequence[int], root=None,
             evaluate_test: bool = False, bf16_pairs: int = 4096, limit: int | None = None, batch_size: int = 64,
             progress: bool = True) -> dict:
    """:func:`ship` of the ``classifier train inli`` (or interpreter recipe) folder ``run`` on the INLI splits of
    its own recipe (label scheme and split scheme, as its config records them; the first ``limit`` validation and
    test pairs when given), the test split read only with ``evaluate_test``. Returns the summary ``pragmeter interpret ship`` prints: the
    chosen rank and the whole, shipped (and test) accuracies."""
    from pragmeter.classify.model import read_settings
    from pragmeter.classify.recipes.inli import LABEL_SCHEMES, SPLIT_SCHEMES, build

    run = Path(run)
    recipe = read_settings(run)[2].recipe or {}
    labels, split = recipe.get("labels", "4way"), recipe.get("split_scheme", "standard")
    # the multi-source recipe (classify/recipes/interpreter.py) validates and tests on INLI's standard 4-way splits
    if recipe.get("name") not in ("inli", "interpreter") or labels not in LABEL_SCHEMES or split not in SPLIT_SCHEMES:
        raise PragmeterError(f"{run / 'config.json'}: not an INLI run (recipe {recipe!r}); ship a folder that "
                             f"`pragmeter classifier train inli` or the interpreter recipe wrote")
    data = build(labels, split, root)
    if limit:
        data.val, data.test = data.val.head(limit), data.test.head(limit)
    shipped = ship(run, output, rank, data.val, data.test if evaluate_test else None, bf16_pairs, batch_size, progress)
    summary = {"rank": shipped["rank"], "val_whole": shipped["val_whole"]["accuracy"],
               "val_shipped": shipped["val_compressed"]["accuracy"],
               **({"val_by_rank": shipped["val_by_rank"]} if "val_by_rank" in shipped else {}),
               "bf16_within_bounds": shipped["bf16_check"]["within_bounds"]}
    if "test_compressed" in shipped:
        summary["test_shipped"] = shipped["test_compressed"]["accuracy"]
    return summary
