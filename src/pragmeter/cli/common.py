"""Options shared by several commands, so every command spells them the same way.

``--model`` is always the model under test (a chat backend, a classifier folder, or the ImpScore model that
``impscore evaluate`` checks); ``--impscore`` is the ImpScore model used as the instrument (scoring, profiles,
stratification). Old spellings stay accepted for one release and print the new one on stderr.
"""

from __future__ import annotations

import argparse
import sys

from pragmeter.errors import PragmeterError

# Exit status of a run that wrote its output but some requests failed after every retry (eval, generate): the output
# is marked incomplete, and the same command again asks only what failed.
INCOMPLETE = 3


class RenamedFlag(argparse.Action):
    """An old flag spelling: stores into the new flag's destination and says the new name on stderr. With
    ``nargs=0`` it is an old switch and stores ``const`` (True unless given)."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        if kwargs.get("nargs") == 0:
            kwargs.setdefault("const", True)
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"pragmeter: {option_string} is now {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, self.const if self.nargs == 0 else values)


def add_impscore_options(parser: argparse.ArgumentParser, batch_size: bool = True, old_name: bool = True) -> None:
    """``--impscore`` (the instrument), its encoder batch size and device; ``--model`` stays as the old name
    (``old_name``) where the command has no model under test of that name."""
    parser.add_argument("--impscore", default=None,
                        help="ImpScore model: shipped name or model folder (default: the shipped default)")
    if old_name:
        parser.add_argument("--model", dest="impscore", action=RenamedFlag, new="--impscore")
    if batch_size:
        parser.add_argument("--batch-size", type=positive_int, default=None,
                            help="texts per torch encoder batch (default 16 on a CPU, 1024 on a GPU; the openvino "
                                 "and onnx backends batch by token count instead)")
    parser.add_argument("--device", type=torch_device, default=None,
                        help="torch device, e.g. cpu or cuda (default: best available)")
    add_runtime_options(parser)


def add_runtime_options(parser: argparse.ArgumentParser, backend_default: str = "auto") -> None:
    """``--backend`` and ``--precision``: how ImpScore's encoder runs, the same on every command that scores."""
    from pragmeter.encoders.precision import BACKEND_CHOICES, PRECISIONS

    parser.add_argument("--backend", choices=BACKEND_CHOICES, default=backend_default,
                        help="how the encoder runs (default auto: OpenVINO on a CPU, torch on a GPU --device; "
                             "onnx: ONNX Runtime, needs the 'onnx' extra)")
    parser.add_argument("--precision", choices=PRECISIONS, default="auto",
                        help="encoder precision (default auto: bf16 where the CPU has AVX-512 BF16 or AMX and the "
                             "encoder's bf16 scores are within bounds (MiniLM), else fp32; recorded in every "
                             "signature; int8 is refused: outside the bounds)")


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
    """``--model``: the ImpScore model under test (``impscore evaluate``), with encoder batch size and device."""
    parser.add_argument("--model", default=None, help="shipped model name or model folder (default: the shipped default)")
    parser.add_argument("--batch-size", type=positive_int, default=None,
                        help="encoder batch size (default 16 on a CPU, 1024 on a GPU)")
    parser.add_argument("--device", type=torch_device, default=None,
                        help="torch device, e.g. cpu or cuda (default: best available)")
    parser.add_argument("--dtype", default=None, choices=["float32", "float16", "bfloat16"],
                        help="torch encoder precision (default: bfloat16 or float16 on a GPU, float32 on a CPU)")
    # The model under test is measured on the reference path (torch; fp32 on a CPU): its corpus embeddings come
    # from the training encoder, and accuracies stay comparable with the paper's.
    parser.set_defaults(backend="torch")


def add_data_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-root", default=None,
                        help="folder with the upstream data files (default: $PRAGMETER_DATA, else ../shared/data)")


def add_embedding_cache_options(parser: argparse.ArgumentParser, folder: bool = True, no_cache: bool = True) -> None:
    """``--cache DIR`` and ``--no-cache``: the on-disk embedding cache, and only that, on every command that has
    them (``--cache-dir`` is the old name of ``--cache``)."""
    if folder:
        parser.add_argument("--cache", default=None,
                            help="embedding cache folder (default: $PRAGMETER_CACHE/embeddings)")
        parser.add_argument("--cache-dir", dest="cache", action=RenamedFlag, new="--cache")
    if no_cache:
        parser.add_argument("--no-cache", action="store_true", help="do not reuse or store embeddings on disk")


MODEL_ARGS_HELP = ("KEY=VALUE pairs, comma-separated: base_url, model, api_key_env, temperature, max_tokens, seed, "
                   "top_p, concurrency, timeout, max_retries (gguf: also threads, ctx_size, parallel)")


def add_llm_options(parser: argparse.ArgumentParser, role: str = "model under test", args_note: str = "") -> None:
    """``--model BACKEND[:TARGET]`` and ``--model-args`` of a chat model."""
    parser.add_argument("--model", default="openai-chat",
                        help=f"backend of the {role} (default openai-chat); gguf:FILE_OR_NAME runs a local GGUF model "
                             "with llama.cpp, local:FOLDER a fine-tuned classifier")
    parser.add_argument("--model-args", default="", help=MODEL_ARGS_HELP + args_note)


def add_response_cache_options(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--response-cache FILE`` (when ``default`` names the default file) and ``--no-response-cache``: the LLM
    response cache that makes an interrupted run resume. ``--cache``/``--no-cache`` are their old names, kept for
    one release: everywhere else they mean the embedding cache."""
    if default:
        parser.add_argument("--response-cache", default=None, help=f"LLM response cache file (default {default})")
        parser.add_argument("--cache", dest="response_cache", action=RenamedFlag, new="--response-cache")
    parser.add_argument("--no-response-cache", action="store_true", help="neither read nor write the response cache")
    parser.add_argument("--no-cache", dest="no_response_cache", action=RenamedFlag, new="--no-response-cache", nargs=0)


def load_chat_backend(spec: str, model_args: str, **defaults: str):
    """The chat backend ``--model``/``--model-args`` name (``defaults``: model arguments unless given). The local
    classifier backend lives in classify/ and joins llm's backend registry here, at the top layer."""
    import pragmeter.classify.backend  # noqa: F401  (registers ``local``)
    from pragmeter.llm.backends import load_backend, parse_model_args

    return load_backend(spec, {**defaults, **parse_model_args(model_args)})


def add_input_option(parser: argparse.ArgumentParser, help: str, required: bool = True,
                     legacy_positional: bool = True) -> None:
    """``--input``, as on every command that reads one file or folder. The positional form these commands used
    to take is still accepted for one release (hidden; :func:`resolve_input` says the new form)."""
    parser.add_argument("--input", help=help + (" (required)" if required else ""))
    if legacy_positional:
        parser.add_argument("input_positional", nargs="?", default=None, help=argparse.SUPPRESS)
    parser.set_defaults(input_required=required)


def resolve_input(args: argparse.Namespace) -> str | None:
    """Fold an old-style positional input into ``args.input``; None, or the usage error to report."""
    legacy = getattr(args, "input_positional", None)
    if legacy is not None:
        if args.input is not None:
            return f"give the input once: --input {args.input} (extra argument {legacy!r})"
        print(f"pragmeter: a positional input is deprecated; use --input {legacy}", file=sys.stderr)
        args.input = legacy
    if getattr(args, "input_required", False) and args.input is None:
        return "the following arguments are required: --input"
    return None


def add_overwrite_option(parser: argparse.ArgumentParser, what: str = "output files that exist") -> None:
    parser.add_argument("--overwrite", action="store_true", help=f"replace {what}")


def refuse_existing(paths, overwrite: bool) -> None:
    """A command writing into a folder refuses, before any work, to replace the files it would write unless
    ``--overwrite``; an interrupted run wrote none of them yet, so rerunning it resumes through the caches."""
    from pragmeter.io import check_output

    for path in paths:
        check_output(path, overwrite)


def report_rows(errors: list[str], done: str, output, error_column: str, first) -> int:
    """Print "DONE n of N rows -> OUTPUT" and, where rows failed, a warning naming the first
    (``first(row, reason)`` says where it is); the number of rows that failed."""
    failed = sum(map(bool, errors))
    print(f"{done} {len(errors) - failed} of {len(errors)} rows -> {output}", file=sys.stderr)
    if failed:
        row = next(i for i, error in enumerate(errors) if error)
        print(f"warning: {failed} row(s) not {done} (reason in column '{error_column}'; first: "
              f"{first(row, errors[row])})", file=sys.stderr)
    return failed


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def load_model(args: argparse.Namespace, cache: bool = False):
    """The ImpScore model the command's flags name (``--impscore`` where it is the instrument, else ``--model``), run
    as ``--backend``/``--precision`` say (default auto: the fast path of this machine); ``cache``: with the on-disk
    embedding cache."""
    from pragmeter.encoders.precision import resolve_backend
    from pragmeter.impscore.model import load_impscore
    from pragmeter.impscore.scoring import chunk_size

    chunk_size()  # a bad $PRAGMETER_CHUNK_SIZE is refused before the model loads, not half-way through the job
    name = args.impscore if hasattr(args, "impscore") else args.model
    device, dtype = getattr(args, "device", None), getattr(args, "dtype", None)
    backend = resolve_backend(getattr(args, "backend", None) or "auto", device)
    if backend != "torch" and (device not in (None, "cpu") or dtype):
        raise PragmeterError(f"--device/--dtype need --backend torch (the {backend} backend runs on CPU; its "
                             "precision is --precision)")
    return load_impscore(name, backend=backend, precision=getattr(args, "precision", None) or "auto", device=device,
                         batch_size=getattr(args, "batch_size", None), dtype=dtype, cache=cache or None)
