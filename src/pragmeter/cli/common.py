"""Options shared by several commands."""

from __future__ import annotations

import argparse

from pragmeter.errors import PragmeterError


def positive_int(value: str) -> int:
    """argparse type of batch sizes and counts: a whole number >= 1."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {value!r}")
    return number


def torch_device(value: str) -> str:
    """argparse type of --device: a torch device that this machine has (checked before any work starts)."""
    if value == "cpu":
        return value
    import torch

    try:
        device = torch.device(value)
    except (RuntimeError, ValueError):
        raise argparse.ArgumentTypeError(f"{value!r} is not a torch device (cpu, cuda, cuda:1, mps)") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise argparse.ArgumentTypeError(f"{value!r}: CUDA is not available on this machine (use cpu)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise argparse.ArgumentTypeError(f"{value!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise argparse.ArgumentTypeError(f"{value!r}: MPS is not available on this machine (use cpu)")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise argparse.ArgumentTypeError(f"{value!r}: pragmeter runs on cpu, cuda or mps")
    return value


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, help="shipped model name or model folder (default: the shipped default)")
    parser.add_argument("--batch-size", type=positive_int, default=64, help="encoder batch size (default 64)")
    parser.add_argument("--device", type=torch_device, default=None,
                        help="torch device, e.g. cpu or cuda (default: cpu)")


def add_data_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-root", default=None,
                        help="folder with the upstream data files (default: $PRAGMETER_DATA, else ../shared/data)")


def default_backend(device: str | None) -> str:
    """onnx (same scores, faster start and run on CPU) when ONNX Runtime is installed and no GPU is asked for."""
    import importlib.util

    if device not in (None, "cpu") or importlib.util.find_spec("onnxruntime") is None:
        return "torch"
    return "onnx"


def load_model(args: argparse.Namespace, auto_backend: bool = False):
    """The ImpScore model of ``--model``; ``--backend`` when the command has it (``auto_backend``: its default is
    :func:`default_backend`), else torch."""
    from pragmeter.impscore.model import ImpScore

    backend = getattr(args, "backend", None) or (default_backend(args.device) if auto_backend else "torch")
    if backend != "torch" and args.device not in (None, "cpu"):
        raise PragmeterError(f"--device {args.device} needs --backend torch (the {backend} backend runs on CPU)")
    return ImpScore.load(args.model, device=args.device, batch_size=args.batch_size, backend=backend)
