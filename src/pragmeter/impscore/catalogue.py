"""The shipped ImpScore models as a user chooses among them: purpose, encoder, speed, in-distribution accuracy on the
paper's sources, the human-written suite's figures and licence terms — all read from each model's config.json
(``purpose``, ``evaluation``), written there at release time by ``tools/record_model_figures.py``."""

from __future__ import annotations

import json
import time

from pragmeter.encoders.finetuned import WEIGHTS_KEY
from pragmeter.io.model_card import is_non_commercial
from pragmeter.impscore.model import CARD_FILE, CONFIG_FILE, MODELS_DIR, default_model, shipped_models


def licence_terms(config: dict, card: str = "") -> str:
    """'non-commercial (imppres, ...)' when any training source is NC-licensed (from the config, or the card of an
    older model whose config lacks the licences), else 'permissive'."""
    licences = config.get("training", {}).get("corpus", {}).get("licences") or {}
    restricted = sorted(source for source, licence in licences.items() if is_non_commercial(licence))
    if restricted:
        return f"non-commercial ({', '.join(restricted)})"
    if not licences:
        return "non-commercial (see card)" if "non-commercial" in card else "see card"
    return "permissive"


def model_config(name: str) -> dict:
    return json.loads((MODELS_DIR / name / CONFIG_FILE).read_text(encoding="utf-8"))


def measure_throughput(name: str, texts: list[str], repeats: int = 2) -> float:
    """Sentences per second of ``ImpScore.load(name).score`` on this machine (best of ``repeats``, after a warm-up)."""
    from pragmeter.impscore.model import ImpScore

    model = ImpScore.load(name)
    model.score(texts[:16])
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        model.score(texts)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def catalogue(measure: bool = False) -> list[dict]:
    """One row per shipped model (the default first)."""
    texts = None
    if measure:
        from pragmeter.impscore.ood import development_sentences

        texts = list(dict.fromkeys(development_sentences()))[:256]
    rows = []
    default = default_model()
    for name in sorted(shipped_models(), key=lambda n: (n != default, n)):
        config = model_config(name)
        evaluation = config.get("evaluation", {})
        paper, human, speed = evaluation.get("paper_test", {}), evaluation.get("human", {}), evaluation.get("speed", {})
        rows.append({"name": name, "default": name == default, "purpose": config.get("purpose", ""),
                     "encoder": config["encoder"] + (" (fine-tuned)" if WEIGHTS_KEY in config else ""),
                     "sentences_per_second": (measure_throughput(name, texts) if measure
                                              else speed.get("sentences_per_second")),
                     "paper_test_implicitness": paper.get("implicitness_accuracy"),
                     "paper_test_pragmatics": paper.get("pragmatics_accuracy"),
                     "human_decision": human.get("decision"), "floyd_battery": human.get("floyd_battery"),
                     "human_pairs": human.get("pairs_macro"),
                     "licence": licence_terms(config, (MODELS_DIR / name / CARD_FILE).read_text(encoding="utf-8"))})
    return rows


def _cell(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def catalogue_text(rows: list[dict], measured: bool = False) -> str:
    """:func:`catalogue` as ``pragmeter impscore models`` prints it: a markdown table, then each model's purpose."""
    speed = "sentences/s (this machine)" if measured else "sentences/s (recorded)"
    lines = [f"| model | encoder | {speed} | paper test imp. / prag. | human suite | Floyd (a) | human pairs | licence |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {'**' + r['name'] + '** (default)' if r['default'] else r['name']} | {r['encoder']} | "
              f"{_cell(r['sentences_per_second'], 0)} | {_cell(r['paper_test_implicitness'])} / "
              f"{_cell(r['paper_test_pragmatics'])} | {_cell(r['human_decision'])} | {_cell(r['floyd_battery'])} | "
              f"{_cell(r['human_pairs'])} | {r['licence']} |" for r in rows]
    return "\n".join([*lines, "", *(f"{r['name']}: {r['purpose'] or '(no purpose recorded)'}" for r in rows)])
