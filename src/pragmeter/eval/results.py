"""Results files: the results JSON (metrics plus everything needed to reproduce them) and per-sample JSONL."""

from __future__ import annotations

import json
from pathlib import Path

from pragmeter.io import atomic_path, write_json_atomic


def model_signature(settings: dict, max_tokens: int | None) -> str:
    """e.g. ``openai-chat:llama3|temperature=0.0|max_tokens=16|seed=none``."""
    seed = settings.get("seed", "none")
    tokens = settings.get("max_tokens") or max_tokens
    extra = settings.get("extra_decoding")
    if extra is None:  # settings written before extra_decoding existed
        extra = {"top_p": settings["top_p"]} if settings.get("top_p") is not None else {}
    extras = "".join(f"|{key}={value}" for key, value in sorted(extra.items()))
    return (f"{settings.get('backend')}:{settings.get('model')}|temperature={settings.get('temperature')}"
            f"|max_tokens={tokens}|seed={seed}{extras}")


def write_results(output: Path, payload: dict) -> Path:
    path = output / "results.json"
    write_json_atomic(path, payload)
    return path


def write_samples(output: Path, task: str, records: list[dict]) -> Path:
    path = output / f"samples_{task}.jsonl"
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    return path
