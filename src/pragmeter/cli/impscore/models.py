"""``pragmeter models``: the ImpScore models shipped in the package, with their encoder and test metrics."""

from __future__ import annotations

import argparse
import json


def register(subparsers) -> None:
    parser = subparsers.add_parser("models", help="list the shipped ImpScore models")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pragmeter.impscore.model import CONFIG_FILE, MODELS_DIR, default_model, shipped_models

    default = default_model()
    print("name\tencoder\ttest_implicitness_acc\ttest_pragmatics_acc\tdefault")
    for name in shipped_models():
        config = json.loads((MODELS_DIR / name / CONFIG_FILE).read_text(encoding="utf-8"))
        test = config.get("metrics", {}).get("test", {})
        print(f"{name}\t{config['encoder']}\t{test.get('implicitness_accuracy', float('nan')):.4f}\t"
              f"{test.get('pragmatics_accuracy', float('nan')):.4f}\t{'yes' if name == default else ''}")
    return 0
