"""One runtime value: how the encoder runs is resolved once (resolve_runtime), validated the same way for both
graph runtimes, recorded with its reason in every signature, and said as flags on the command line."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pragmeter.cli import main
from pragmeter.encoders.runtime import Runtime, resolve_runtime, usable_cpus
from pragmeter.errors import PragmeterError

SRC = str(Path(__file__).resolve().parents[2] / "src")
TEXTS = ["You are talking too loudly.", "It is cold in here."]


def test_resolve_runtime_gives_one_frozen_value_with_its_reason_in_the_signature(on_host):
    on_host("zen4")
    runtime = resolve_runtime("openvino", "auto", 2, "all-MiniLM-L6-v2")
    assert (runtime.backend, runtime.precision, runtime.device, runtime.threads) == ("openvino", "bf16", "cpu",
                                                                                   min(2, usable_cpus()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        runtime.precision = "fp32"  # type: ignore[misc]
    signature = runtime.signature()
    assert signature.startswith(f"backend=openvino|precision=bf16|device=cpu|threads={runtime.threads}|reason=")
    assert "bf16 instructions" in signature and "within the bounds" in signature
    mpnet = resolve_runtime("openvino", "auto", encoder="all-mpnet-base-v2")
    assert mpnet.precision == "fp32" and "not within the bounds" in mpnet.reason  # why, not only what
    assert resolve_runtime("openvino", "fp32").reason == "as asked"


def test_a_classifier_that_records_no_bf16_check_runs_fp32_saying_none_was_measured(on_host, tmp_path):
    """A freshly trained classifier's folder has no bf16 check: on a bf16 CPU ``auto`` keeps fp32, and says that no
    check was measured, not that one missed the bounds."""
    import json

    from pragmeter.interpreter.runtime import interpreter_runtime

    on_host("zen4")
    folder = tmp_path / "classifier"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"encoder": "all-MiniLM-L6-v2"}), encoding="utf-8")
    fresh = interpreter_runtime(folder, "openvino")
    assert fresh.precision == "fp32" and fresh.reason == "fp32: this model's bf16 scores were not checked against fp32"
    outside = {"pairs": 8, "max_abs_score_diff": 0.5, "max_abs_probability_diff": 0.5, "label_agreement": 0.5,
               "within_bounds": False}
    (folder / "config.json").write_text(json.dumps({"bf16_check": outside}), encoding="utf-8")
    measured = interpreter_runtime(folder, "openvino")
    assert measured.precision == "fp32" and "not within the bounds" in measured.reason


def test_the_signature_of_every_impscore_result_carries_the_runtime():
    from pragmeter.impscore.model import ImpScore

    model = ImpScore.load(backend="onnx", threads=1)
    assert model.runtime == resolve_runtime("onnx", "auto", 1, model.config["encoder"])
    assert model.signature().endswith("|" + model.runtime.signature())
    assert "|backend=onnx|precision=fp32|device=cpu|threads=1|reason=" in model.signature()


@pytest.mark.parametrize("backend", ["openvino", "onnx"])
@pytest.mark.parametrize("value", ["abc", "1.5", "-1", "0", " "])
def test_a_bad_thread_count_is_refused_alike_by_both_graph_runtimes(backend, value, monkeypatch, capsys):
    """abc and 1.5 ended OpenVINO in a ValueError traceback, -1 was blamed on bf16, 0 ran on one backend and was
    refused by the other."""
    monkeypatch.setenv("PRAGMETER_ONNX_THREADS", value)
    if not value.strip():  # blank: unset, the runtime's own default
        assert resolve_runtime(backend).threads is None
        return
    assert main(["score", "--backend", backend, *TEXTS]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "bf16" not in err
    assert f"error: PRAGMETER_ONNX_THREADS={value!r}: expected a whole number of threads >= 1" in err
    with pytest.raises(PragmeterError, match="expected a whole number"):
        resolve_runtime(backend, threads=value)


def test_more_threads_than_cpus_are_capped_at_the_cpus(monkeypatch):
    """100000 threads ran two minutes at 6.5 GB for one sentence."""
    monkeypatch.setenv("PRAGMETER_ONNX_THREADS", "100000")
    for backend in ("openvino", "onnx"):
        runtime = resolve_runtime(backend)
        assert runtime.threads == usable_cpus() and f"capped at the {usable_cpus()} CPUs" in runtime.reason
    assert resolve_runtime("onnx", threads=100000).threads == usable_cpus()
    assert resolve_runtime("torch", device="cpu").threads is None  # the graph runtimes' variable, not torch's


def test_library_errors_name_parameters_and_the_cli_says_flags(capsys):
    with pytest.raises(PragmeterError) as info:
        resolve_runtime("onnx", "bf16")
    assert str(info.value).startswith("precision='bf16': needs backend openvino or torch")
    assert isinstance(info.value, ValueError) and (info.value.name, info.value.value) == ("precision", "bf16")
    assert main(["score", "--backend", "onnx", "--precision", "bf16", *TEXTS]) == 2
    assert "error: --precision bf16: needs backend openvino or torch (ONNX Runtime" in capsys.readouterr().err
    with pytest.raises(PragmeterError, match="device='cuda', backend='openvino': needs backend torch"):
        resolve_runtime("openvino", device="cuda")


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": SRC, **env},
                          capture_output=True, text=True, timeout=600)


def test_openvino_capped_at_sse41_falls_back_to_onnx_or_says_why_in_one_line():
    """Capped at SSE4.1, OpenVINO's CPU plugin fails on the encoder's LayerNorm: the default ended in a RuntimeError
    traceback where ONNX Runtime scores."""
    scored = _run("from pragmeter.cli import main; raise SystemExit(main(['score', 'It is cold in here.']))",
                  ONEDNN_MAX_CPU_ISA="SSE41")
    assert scored.returncode == 0 and "Traceback" not in scored.stderr, scored.stderr[-2000:]
    assert 0.0 <= float(scored.stdout.split("\t")[0]) <= 2.0
    runtime = _run("from pragmeter.encoders.runtime import resolve_runtime; print(resolve_runtime().signature())",
                   ONEDNN_MAX_CPU_ISA="SSE41")
    assert runtime.stdout.startswith("backend=onnx|") and "ONEDNN_MAX_CPU_ISA=SSE41 rules out openvino" in runtime.stdout
    asked = _run("from pragmeter.cli import main; raise SystemExit(main(['score', '--backend', 'openvino', 'Hi.']))",
                 ONEDNN_MAX_CPU_ISA="SSE41")
    assert asked.returncode == 2 and asked.stderr.count("\n") == 1, asked.stderr[-2000:]
    assert "--backend openvino: cannot run with ONEDNN_MAX_CPU_ISA=SSE41" in asked.stderr
    # built by hand past the resolution, the encoder's failure at run time is one line too
    direct = _run("from pragmeter.encoders.openvino import OpenVinoEncoder\n"
                  "OpenVinoEncoder('all-MiniLM-L6-v2').encode(['It is cold in here.'])", ONEDNN_MAX_CPU_ISA="SSE41")
    assert re.search(r"PragmeterError: OpenVINO could not (compile|run) encoder 'all-MiniLM-L6-v2' in fp32",
                     direct.stderr), direct.stderr[-2000:]
    assert "try backend='onnx' or 'torch'" in direct.stderr  # fp32 was asked: not told to try fp32


def test_a_runtime_is_what_a_graph_encoder_is_shared_by():
    from pragmeter.encoders.shared import load_graph_encoder

    one = load_graph_encoder("all-MiniLM-L6-v2", Runtime("onnx", "fp32"))
    assert load_graph_encoder("minilm", Runtime("onnx", "fp32")) is one  # keyed by content, not name
    assert load_graph_encoder("all-MiniLM-L6-v2", Runtime("onnx", "fp32", threads=1)) is not one
    with pytest.raises(PragmeterError, match="not a graph backend"):
        load_graph_encoder("all-MiniLM-L6-v2", Runtime("torch", "fp32"))


def test_graph_encoders_refuse_sentence_transformers_options_they_would_ignore():
    from pragmeter.encoders.shared import load_graph_encoder

    encoder = load_graph_encoder("all-MiniLM-L6-v2", Runtime("onnx", "fp32"))
    plain = encoder.encode(TEXTS, batch_size=8, convert_to_numpy=True, normalize_embeddings=False)
    assert plain.shape == (2, 384)
    for option in ({"normalize_embeddings": True}, {"output_value": "token_embeddings"}, {"precision": "int8"}):
        with pytest.raises(PragmeterError, match=f"does not take {next(iter(option))}="):
            encoder.encode(TEXTS, **option)


@pytest.mark.parametrize("recorded", ["yes", ["within_bounds"], {"within_bounds": "true"}])
def test_a_malformed_bf16_check_in_a_model_folder_counts_as_no_check(tmp_path, recorded):
    """A fine-tuned model's bf16 clearance is read from its config.json, a file someone else wrote: anything but a
    recorded ``within_bounds: true`` keeps auto in fp32 (a string there ended loading in an AttributeError)."""
    import json
    import shutil

    from pragmeter.encoders.finetuned import WEIGHTS_KEY
    from pragmeter.impscore.model import BF16_CHECK_KEY, DEFAULT_MODEL, ImpScore, resolve_model_dir

    folder = tmp_path / "model"
    shutil.copytree(resolve_model_dir(DEFAULT_MODEL), folder)
    config = json.loads((folder / "config.json").read_text())
    assert WEIGHTS_KEY in config  # the default carries fine-tuned layers
    (folder / "config.json").write_text(json.dumps({**config, BF16_CHECK_KEY: recorded}))
    runtime = ImpScore.load(folder, backend="openvino", precision="auto").runtime
    assert runtime.precision == "fp32"
    assert runtime.reason.startswith(("fp32: no bf16", "fp32: ONEDNN", "fp32: this encoder's bf16 scores are not"))


ENCODER = "all-MiniLM-L6-v2"


def test_the_corpus_the_svm_head_and_training_resolve_their_runtime_in_one_place(on_host):
    """Each use's policy is an argument of resolve_runtime (the backends it runs, what torch runs for it), and each
    gets a Runtime: the corpus embedding and an svm head's encoder run as scoring does on a CPU, torch in fp32 on a
    GPU (where scoring would take fp16); a model being trained autocasts to bf16 on CUDA."""
    from pragmeter.classify.svm import embedding_runtime
    from pragmeter.encoders.runtime import training_runtime
    from pragmeter.errors import InvalidParameter
    from pragmeter.impscore.triplets import corpus_runtime

    on_host("zen4")
    scoring = resolve_runtime("openvino", "auto", encoder=ENCODER)
    assert corpus_runtime("auto", "auto", ENCODER) == embedding_runtime("auto", None, ENCODER) == scoring
    for runtime in (corpus_runtime("auto", "auto", ENCODER, device="cuda"), embedding_runtime("auto", "cuda", ENCODER)):
        assert isinstance(runtime, Runtime) and (runtime.backend, runtime.precision, runtime.device) == (
            "torch", "fp32", "cuda")
        assert "fp32:" in runtime.reason and runtime.cache_key(ENCODER).endswith("-torch-fp32")
    assert resolve_runtime("auto", "auto", encoder=ENCODER, device="cuda").precision == "fp16"  # scoring's own
    assert embedding_runtime("bf16", "cuda", ENCODER).precision == "bf16"  # an svm head's torch autocast
    with pytest.raises(InvalidParameter, match=r"precision='bf16', backend='torch': needs backend openvino "
                                               r"\(the corpus embedding runs fp32 on torch\)"):
        corpus_runtime("torch", "bf16", ENCODER)
    with pytest.raises(InvalidParameter, match="backend='onnx': does not run the corpus embedding"):
        corpus_runtime("onnx", "auto", ENCODER)
    with pytest.raises(InvalidParameter, match="backend='onnx': does not run an svm head's encoder"):
        embedding_runtime("auto", None, ENCODER, backend="onnx")
    assert training_runtime("auto", "cuda").precision == "bf16" and training_runtime("auto", "cpu").precision == "fp32"
    with pytest.raises(InvalidParameter, match="precision='fp16'"):
        training_runtime("fp16", "cuda")  # fp16 training would need loss scaling


def test_every_embedding_cache_writer_keys_its_vectors_by_the_runtime(tmp_path):
    """The corpus embedding of training, ImpScore's scores and an svm head's encoder keep a text's vectors in one
    part of the cache for one runtime (Runtime.cache_key): scoring a corpus text reads the vector training wrote."""
    import numpy as np
    import pandas as pd

    from pragmeter.classify.model import ClassifierSettings
    from pragmeter.classify.svm import EmbeddingSVMClassifier
    from pragmeter.encoders.embedding_cache import attach_embedding_cache
    from pragmeter.impscore.heads import HeadsConfig, ImpScoreHeads
    from pragmeter.impscore.model import ImpScore
    from pragmeter.impscore.triplets import corpus_runtime, embed_corpus

    corpus = pd.DataFrame({"implicit": TEXTS[:1], "explicit": TEXTS[1:], "negative": ["Close the window."],
                           "split": ["train"], "source": ["test"]})
    settings = ClassifierSettings(["no", "yes"], ENCODER, 256, "single")
    for runtime in (corpus_runtime("openvino", "fp32", ENCODER), corpus_runtime("torch", "auto", ENCODER, "cpu")):
        root = tmp_path / runtime.backend
        splits = embed_corpus(corpus, ENCODER, root, show_progress=False, runtime=runtime)
        model = attach_embedding_cache(ImpScore(ImpScoreHeads(HeadsConfig(384)), ENCODER, runtime=runtime), root)
        assert model.embedding_key() == runtime.cache_key(ENCODER)
        vectors = model.encode(TEXTS[:1])
        assert [part.name for part in root.iterdir()] == [model.embedding_cache.folder.name]
        assert np.array_equal(vectors[0], splits["train"].e1[0].numpy())  # read from what the corpus wrote
        arrays = {name: np.zeros(0) for name in ("support_vectors", "dual_coef", "intercept", "n_support")}
        svm = EmbeddingSVMClassifier(settings, arrays, 0.5, 1.0, runtime=runtime)
        assert svm.embedding_cache().folder.name == model.embedding_cache.folder.name
