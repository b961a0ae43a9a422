"""Weight averaging of two fine-tuned classifiers that share an architecture (a "model soup"): each tensor is
``(1 - share) * first + share * second``. Two runs continued from the same weights can land on either side of a
trade-off (one keeps more of what a broad set teaches, the other more of a new source); their average is a third
candidate that costs no training, judged on validation like any other."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from pragmeter.data.root import sha256_of
from pragmeter.errors import PragmeterError
from pragmeter.io.atomic import staged_folder

WEIGHTS = "model.safetensors"


def _read(folder: Path) -> tuple[dict, dict]:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        return config, load_file(folder / WEIGHTS)
    except (OSError, ValueError, SafetensorError) as error:
        raise PragmeterError(f"{folder}: not a classifier folder with config.json and {WEIGHTS} ({error})") from None


def average_weights(first: str | os.PathLike, second: str | os.PathLike, output: str | os.PathLike,
                    share: float = 0.5, command: str | None = None) -> dict:
    """Write ``(1 - share) * first + share * second`` to ``output`` (a new folder, written whole or not at all): the
    tensors averaged; ``second``'s tokenizer and metrics copied (not its card, which describes another folder); and
    ``second``'s config with the average recorded in its recipe (``average``: the other folder's name, its weights'
    sha256 and its share). Both folders must hold the same tensors (names, shapes) and the same labels. ``command``
    (the one that made the average) is added after ``second``'s training command in its metrics, so the card's
    reproduction lists both. Returns the recorded average."""
    import torch
    from safetensors.torch import save_file

    first, second = Path(first), Path(second)
    if not 0.0 < share < 1.0:
        raise PragmeterError(f"share must be between 0 and 1 (exclusive), got {share!r}")
    config_a, a = _read(first)
    config_b, b = _read(second)
    if set(a) != set(b) or any(a[k].shape != b[k].shape for k in a):
        different = sorted(set(a) ^ set(b)) or sorted(k for k in a if a[k].shape != b[k].shape)
        raise PragmeterError(f"{first} and {second} hold different tensors (first: {different[0]}); only weights of "
                             "one architecture average")
    labels = [config.get("pragmeter", {}).get("labels") for config in (config_a, config_b)]
    if labels[0] != labels[1]:
        raise PragmeterError(f"{first} and {second} have different labels ({labels[0]} vs {labels[1]})")
    mixed = {k: ((1 - share) * a[k].float() + share * b[k].float()).to(a[k].dtype)
             if torch.is_floating_point(a[k]) else b[k] for k in a}
    record = {"folder": first.name, "sha256": sha256_of(first / WEIGHTS), "share": round(1 - share, 6)}
    config_b.setdefault("pragmeter", {}).setdefault("recipe", {})["average"] = record
    with staged_folder(output) as stage:
        for path in second.iterdir():
            if path.is_file() and not path.is_symlink() and path.name not in (WEIGHTS, "config.json", "README.md"):
                shutil.copyfile(path, stage / path.name)
        metrics_path = stage / "metrics.json"
        if metrics_path.is_file():  # what a shipped card is written from: the average there too
            try:
                metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
            except ValueError:
                raise PragmeterError(f"{second / 'metrics.json'}: not JSON") from None
            if not isinstance(metrics, dict):
                raise PragmeterError(f"{second / 'metrics.json'}: not a metrics object")
            if command:
                metrics["command"] = "\n".join(c for c in (metrics.get("command"), command) if isinstance(c, str))
            if isinstance(metrics.get("settings"), dict) and isinstance(metrics["settings"].get("recipe"), dict):
                metrics["settings"]["recipe"]["average"] = record
            metrics_path.write_text(json.dumps(metrics, indent=2) + "\n", encoding="utf-8")
        save_file(mixed, str(stage / WEIGHTS), metadata={"format": "pt"})
        (stage / "config.json").write_text(json.dumps(config_b, indent=2) + "\n", encoding="utf-8")
    return record
