"""An interpreter's model folder, and what it is asked, when someone else wrote them: no NaN answer from damaged
weights (refused when loading, and a non-finite probability is an error wherever it comes from), encoder folders
named by a config read from the model folder only, fingerprinting that reads regular files only and boundedly,
readings that are a list of texts, a long text cut before it is tokenized. The folders are copies of the packaged
interpreter (the fast MiniLM one: the checks are the same for every packaged interpreter), edited consistently (each
file's sha256 written back into the config), run through torch on the CPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from pragmeter.cli import main
from pragmeter.errors import DataError, PragmeterError
from pragmeter.interpreter.hub import DEFAULT_INTERPRETER, FAST_INTERPRETER, MODELS_DIR
from pragmeter.interpreter.model import Interpreter

CONTEXT = "Ann offers Bob a coffee at eleven at night."
UTTERANCE = "It would keep me awake."
READINGS = ["Bob does not want a coffee.", "Bob wants a coffee."]
PACKAGED = MODELS_DIR / FAST_INTERPRETER


def copy_packaged(folder: Path) -> Path:
    shutil.copytree(PACKAGED, folder)
    return folder


def edit_config(folder: Path, change) -> None:
    config = json.loads((folder / "config.json").read_text())
    change(config)
    (folder / "config.json").write_text(json.dumps(config))


def rewrite_head(folder: Path, change) -> None:
    """The head's tensors changed by ``change`` (name -> tensor), written back with the config's sha256."""
    from safetensors.torch import load_file, save_file

    from pragmeter.data.root import sha256_of

    head = load_file(str(folder / "head.safetensors"))
    change(head)
    save_file({name: tensor.contiguous() for name, tensor in head.items()}, str(folder / "head.safetensors"))
    edit_config(folder, lambda config: config["head_weights"].update(sha256=sha256_of(folder / "head.safetensors")))


def load(folder: Path) -> Interpreter:
    return Interpreter.load(folder, device="cpu", precision="fp32", backend="torch", progress=False)


def one_line_error(capsys) -> str:
    """The command's error: one line (after the line saying how the interpreter runs, once it loaded)."""
    lines = [line for line in capsys.readouterr().err.strip().splitlines() if not line.startswith("interpreter ")]
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    return lines[0]


# ---------------------------------------------------------------- NaN in a model folder: never an answer
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_nan_or_infinity_in_the_head_is_refused_when_loading(value, tmp_path, capsys):
    folder = copy_packaged(tmp_path / "model")
    rewrite_head(folder, lambda head: head["classifier.weight"].__setitem__((0, 0), value))
    with pytest.raises(DataError, match=r"head.safetensors: tensor 'classifier.weight' holds NaN or infinite"):
        load(folder)
    capsys.readouterr()
    assert main(["interpret", UTTERANCE, "--context", CONTEXT, "--reading", READINGS[0], "--reading", READINGS[1],
                 "--model", str(folder), "--backend", "torch", "--precision", "fp32", "--no-progress"]) == 2
    assert "holds NaN or infinite values" in one_line_error(capsys)


def test_nan_in_whole_weights_is_refused_when_loading(tmp_path):
    """A ``classifier train`` folder (whole weights, model.safetensors), as written by TextClassifier.save."""
    from safetensors.torch import load_file, save_file

    from pragmeter.classify.model import TextClassifier

    whole = load(copy_packaged(tmp_path / "shipped")).classifier
    whole.save(tmp_path / "whole", "card")
    weights = load_file(str(tmp_path / "whole" / "model.safetensors"))
    name = next(n for n in sorted(weights) if n.endswith("attention.self.query.weight"))
    weights[name][3, 3] = float("nan")
    save_file(weights, str(tmp_path / "whole" / "model.safetensors"))
    with pytest.raises(DataError, match=rf"model.safetensors: tensor '.*{name}' holds NaN"):
        TextClassifier.load(tmp_path / "whole", "cpu", "fp32")


@pytest.fixture(scope="module")
def overflowing(tmp_path_factory) -> Path:
    """Finite weights whose logits overflow: every row of the classification layer 3e38, so every logit is +inf
    or -inf and the softmax is NaN."""
    folder = copy_packaged(tmp_path_factory.mktemp("overflow") / "model")
    rewrite_head(folder, lambda head: head["classifier.weight"].fill_(3e38))
    return folder


def test_a_non_finite_probability_is_an_error_never_an_answer(overflowing, capsys):
    model = load(overflowing)  # every tensor is finite: loading cannot tell
    with pytest.raises(DataError, match="NaN or infinite probabilities for input 0"):
        model.choose(CONTEXT, UTTERANCE, READINGS)
    with pytest.raises(DataError, match="NaN or infinite probabilities"):
        model.classify([CONTEXT], [READINGS[0]])
    capsys.readouterr()
    assert main(["interpret", UTTERANCE, "--context", CONTEXT, "--reading", READINGS[0], "--reading", READINGS[1],
                 "--model", str(overflowing), "--backend", "torch", "--precision", "fp32", "--no-progress"]) == 2
    assert "NaN or infinite probabilities" in one_line_error(capsys)
    assert "*" not in capsys.readouterr().out  # no reading is marked as chosen


def test_eval_with_a_local_model_that_gives_nan_stops_in_one_line(overflowing, tmp_path, data_root, capsys):
    capsys.readouterr()
    code = main(["eval", "--tasks", "drinq_vanilla", "--model", f"local:{overflowing}", "--model-args",
                 "device=cpu,backend=torch,precision=fp32", "--output", str(tmp_path / "run"), "--limit", "4",
                 "--no-progress", "--data-root", str(data_root)])
    assert code == 2 and "NaN or infinite probabilities" in one_line_error(capsys)
    assert not (tmp_path / "run" / "results.json").exists()  # no accuracy read from NaN answers


def test_check_probabilities_names_the_first_bad_row():
    from pragmeter.classify.model import check_probabilities

    good = np.array([[0.25, 0.75], [0.5, 0.5]], dtype=np.float32)
    assert check_probabilities(good, "m") is good
    with pytest.raises(DataError, match=r"m: .* for input 1 \(1 of 2\)"):
        check_probabilities(np.array([[0.25, 0.75], [np.nan, 0.5]]), "m")


def test_nan_in_svm_weights_is_refused_when_loading(tmp_path):
    from pragmeter.classify.model import ClassifierSettings
    from pragmeter.classify.svm import EmbeddingSVMClassifier, _save_arrays

    settings = ClassifierSettings(["a", "b"], "all-MiniLM-L6-v2", 64, "single")
    arrays = {"support_vectors": np.ones((2, 4), np.float32), "dual_coef": np.ones((1, 2), np.float32),
              "intercept": np.zeros(1, np.float32), "n_support": np.array([1, 1], np.int32)}
    EmbeddingSVMClassifier(settings, arrays, 0.5, 1.0).save(tmp_path / "svm", "card")
    assert EmbeddingSVMClassifier.load(tmp_path / "svm").labels == ["a", "b"]  # the untampered folder loads
    arrays["dual_coef"][0, 1] = np.inf
    _save_arrays(arrays, tmp_path / "svm" / "svm.safetensors")
    with pytest.raises(DataError, match="svm.safetensors: tensor 'dual_coef' holds NaN or infinite"):
        EmbeddingSVMClassifier.load(tmp_path / "svm")


# ---------------------------------------------------------------- encoder folders a config names
def encoder_copy(folder: Path) -> Path:
    """A folder holding the packaged MiniLM's files (links to them: a Hugging Face cache's snapshot is made so)."""
    from pragmeter.encoders import require_encoder

    source = Path(require_encoder("all-MiniLM-L6-v2"))
    for item in source.rglob("*"):
        target = folder / item.relative_to(source)
        if item.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif item.suffix not in (".onnx", ".xml", ".bin") and "onnx" not in item.parts and "openvino" not in item.parts:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(item)
    return folder


def set_base(folder: Path, base: str) -> None:
    edit_config(folder, lambda config: config["pragmeter"].update(base_encoder=base))


def test_a_relative_base_encoder_is_read_from_the_model_folder_never_the_working_directory(
        tmp_path, monkeypatch, private_cache):
    folder = copy_packaged(tmp_path / "model")
    set_base(folder, "enc")
    elsewhere = tmp_path / "elsewhere"
    encoder_copy(elsewhere / "enc")
    monkeypatch.chdir(elsewhere)  # ./enc is here, not in the model folder: never used
    with pytest.raises(DataError, match=r"config.json: 'pragmeter' base_encoder: encoder 'enc' is not a folder in the "
                                        r"model folder"):
        load(folder)
    encoder_copy(folder / "enc")  # the model folder's own: used, and it is the packaged encoder's content
    model = load(folder)
    assert model.settings.base_encoder == str((folder / "enc").resolve())
    packaged = load(PACKAGED)
    assert np.allclose(model.scores(CONTEXT, UTTERANCE, READINGS), packaged.scores(CONTEXT, UTTERANCE, READINGS),
                       atol=1e-5)


@pytest.mark.parametrize("base", ["/etc", "/", "not-an-encoder-anywhere"])
def test_a_base_encoder_that_is_not_a_packaged_name_or_an_encoder_folder_is_refused_unread(base, tmp_path, monkeypatch):
    import pragmeter.encoders.fingerprint as fingerprint

    folder = copy_packaged(tmp_path / "model")
    set_base(folder, base)
    read = []
    monkeypatch.setattr(fingerprint, "_file_hash", lambda path: read.append(path))  # nothing may be hashed
    with pytest.raises(DataError, match="not an encoder folder|neither a packaged encoder"):
        load(folder)
    assert read == []


def test_fingerprinting_refuses_an_encoder_folder_of_too_many_files_before_reading_one(tmp_path, monkeypatch):
    import pragmeter.encoders.fingerprint as fingerprint

    folder = tmp_path / "big"
    (folder / "deep").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    for index in range(fingerprint.MAX_ENTRIES):
        (folder / "deep" / f"{index}.txt").touch()
    read = []
    monkeypatch.setattr(fingerprint, "_file_hash", lambda path: read.append(path))
    with pytest.raises(DataError, match=f"big: more than {fingerprint.MAX_ENTRIES} files and folders"):
        fingerprint.folder_fingerprint(folder)
    assert read == []


FIFO_CHILD = """
import sys
from pathlib import Path
from pragmeter.errors import PragmeterError
try:
    if sys.argv[1] == "interpreter":
        from pragmeter.interpreter.model import Interpreter
        Interpreter.load(sys.argv[2], device="cpu", precision="fp32", backend="torch", progress=False)
    else:
        from pragmeter.classify.openvino import export_folder
        export_folder(Path(sys.argv[2]))
except PragmeterError as error:
    print(error, file=sys.stderr)
    sys.exit(2)
"""


@pytest.mark.parametrize("where", ["encoder", "model"])
def test_a_fifo_in_an_encoder_or_model_folder_is_refused_never_read(where, tmp_path, private_cache):
    """A FIFO in the base encoder's folder (fingerprinted for every cache key) or in the model folder (fingerprinted
    for its OpenVINO export) is refused by name; reading it would wait forever for a writer (in a child process: the
    timeout only ends a hang)."""
    folder = copy_packaged(tmp_path / "model")
    encoder_copy(folder / "enc")
    set_base(folder, "enc")
    fifo = folder / "enc" / "extra.bin" if where == "encoder" else folder / "notes.json"
    os.mkfifo(fifo)
    child = subprocess.run([sys.executable, "-c", FIFO_CHILD, "interpreter" if where == "encoder" else "export",
                            str(folder)], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == 2 and f"{fifo}: not a regular file" in child.stderr, child.stderr


def test_a_fifo_in_an_impscore_encoder_folder_is_refused_by_score(tmp_path, private_cache):
    from pragmeter.impscore.model import resolve_model_dir

    shipped = resolve_model_dir("impscore-minilm")  # heads only, over the packaged encoder
    folder = tmp_path / "impscore"
    shutil.copytree(shipped, folder)
    encoder_copy(folder / "enc")
    os.mkfifo(folder / "enc" / "extra.bin")
    config = json.loads((folder / "config.json").read_text())
    config["encoder"] = "enc"
    (folder / "config.json").write_text(json.dumps(config))
    child = subprocess.run(
        [sys.executable, "-c", "import sys; from pragmeter.cli import main; sys.exit(main())", "score",
         "--impscore", str(folder), "--backend", "openvino", "It is cold in here."],  # its export is keyed by content
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == 2 and "extra.bin: not a regular file" in child.stderr, child.stderr


# ---------------------------------------------------------------- a long text: cut before it is tokenized
class SpyTokenizer:
    """A tokenizer that records the longest text it was asked to tokenize (counting copies included)."""

    def __init__(self, tokenizer) -> None:
        self._tokenizer, self.longest = tokenizer, 0

    def __call__(self, texts, pairs=None, **kwargs):
        for value in [*(texts if isinstance(texts, list) else [texts]), *(pairs or [])]:
            self.longest = max(self.longest, len(value))
        return self._tokenizer(texts, pairs, **kwargs)

    def __getattr__(self, name):
        return getattr(self._tokenizer, name)


def test_a_huge_premise_or_reading_is_cut_before_it_is_tokenized_with_the_same_answer():
    from pragmeter.encoders.tokens import CHARS_PER_TOKEN

    model = load(PACKAGED)
    limit = model.settings.max_length * CHARS_PER_TOKEN * 4  # what cut_long_text may keep of a text of words
    huge = f"{CONTEXT} {'It is very late and everyone is tired. ' * 50_000}"  # 2 MB
    expected = model.classify([huge[:limit], CONTEXT], [READINGS[0], huge[:limit]])
    spy = model.classifier.tokenizer = SpyTokenizer(model.classifier.tokenizer)
    got = model.classify([huge, CONTEXT], [READINGS[0], huge])
    assert 0 < spy.longest <= limit  # the 2 MB text never reached the tokenizer
    assert np.allclose([list(row.values()) for row in got], [list(row.values()) for row in expected], atol=1e-6)
    assert model.classifier.truncated >= 2  # and both are still counted as truncated


# ---------------------------------------------------------------- readings: a list of texts
@pytest.fixture(scope="module")
def packaged_model() -> Interpreter:
    return load(PACKAGED)


@pytest.mark.parametrize("readings, message", [
    ("No", r"readings must be a list of texts, not str 'No'"),  # never ranked as "N" and "o"
    (b"No", r"readings must be a list of texts, not bytes"),
    ({"a": 1}, r"readings must be a list of texts, not dict"),
    (7, r"readings must be a list of texts, not int 7"),
    ([], r"readings: none given"),
    (["Bob declines.", 3], r"readings 1: empty or not text \(not a string \(int\)"),
    (["Bob declines.", None], r"readings 1: empty or not text \(missing value"),
    (["Bob declines.", "  "], r"readings 1: empty or not text \(empty text"),
    (["Bob declines.", ["nested"]], r"readings 1: empty or not text \(not a string \(list\)"),
])
def test_rank_and_choose_refuse_readings_that_are_not_a_list_of_texts(packaged_model, readings, message):
    for method in (packaged_model.rank, packaged_model.choose):
        with pytest.raises(PragmeterError, match=message):
            method(CONTEXT, UTTERANCE, readings)


def test_scores_many_refuses_a_string_among_the_lists_and_checks_every_item(packaged_model):
    with pytest.raises(PragmeterError, match=r"item 1: readings must be a list of texts, not str"):
        packaged_model.scores_many([CONTEXT, CONTEXT], [READINGS, "No"])
    with pytest.raises(PragmeterError, match=r"readings must be a list of lists of texts, one per premise, not str"):
        packaged_model.scores_many([CONTEXT], "No")
    with pytest.raises(PragmeterError, match=r"the context must be a text, not int"):
        packaged_model.rank(3, UTTERANCE, READINGS)
    assert len(packaged_model.rank(CONTEXT, UTTERANCE, tuple(READINGS))) == 2  # any sequence of texts is a list


# ---------------------------------------------------------------- command-line arguments and devices
@pytest.mark.parametrize("where", ["utterance", "context", "reading"])
def test_interpret_refuses_an_argument_that_is_not_utf8_in_one_line(where):
    """As ``score`` does: bytes that are not UTF-8 reach Python as lone surrogates, which no tokenizer takes."""
    latin1 = "café ok".encode("latin-1")
    argv = {"utterance": [latin1, b"--context", b"c"], "context": [b"ok", b"--context", latin1],
            "reading": [b"ok"]}[where]
    readings = [b"--reading", b"x", b"--reading", latin1 if where == "reading" else b"y"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "LC_ALL": "C.UTF-8"}
    child = subprocess.run([sys.executable, "-m", "pragmeter", b"interpret", *argv, *readings], capture_output=True,
                           timeout=300, env=env)
    err = child.stderr.decode("utf-8", "replace").strip()
    assert child.returncode == 2 and len(err.splitlines()) == 1, err
    assert "contains a lone surrogate U+DCE9" in err and "not valid UTF-8" in err
    assert {"utterance": "UTTERANCE", "context": "--context", "reading": "--reading 2"}[where] in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_a_cuda_device_without_cuda_is_one_line_not_a_traceback(tmp_path, data_root, capsys):
    capsys.readouterr()
    assert main(["eval", "--tasks", "drinq_vanilla", "--model", "local:interpreter-minilm-inli", "--model-args",
                 "device=cuda", "--output", str(tmp_path / "run"), "--limit", "2", "--no-progress",
                 "--data-root", str(data_root)]) == 2
    assert "model argument device 'cuda': CUDA is not available on this machine" in one_line_error(capsys)
    with pytest.raises(PragmeterError, match="device='cuda': CUDA is not available"):
        Interpreter.load(device="cuda", backend="torch", precision="fp32")


# ---------------------------------------------------------------- the local backend's answer cache
@pytest.fixture(scope="module")
def single_text_folder(tmp_path_factory) -> Path:
    """A single-text classifier over MiniLM (its head as initialised: the answers need not be right, only keyed)."""
    from pragmeter.classify.model import ClassifierSettings, TextClassifier

    labels = ["non-hateful", "non-subtle", "subtle"]
    settings = ClassifierSettings(labels, "all-MiniLM-L6-v2", 64, "single", answer_words={l: l for l in labels})
    folder = tmp_path_factory.mktemp("single") / "model"
    TextClassifier.from_encoder("all-MiniLM-L6-v2", settings, "cpu", seed=0).save(folder, "card")
    return folder


def test_a_single_text_classifier_keys_its_answers_by_how_it_runs(single_text_folder, tmp_path, data_root):
    from pragmeter.classify.backend import LocalClassifierBackend

    def identity(**args) -> dict:
        return LocalClassifierBackend.from_args(str(single_text_folder), {"device": "cpu", **args}).identity()

    fp32, bf16, auto = identity(precision="fp32"), identity(precision="bf16"), identity()
    assert fp32["runtime"] == "torch fp32" and bf16["runtime"] == "torch bf16"
    assert auto == fp32  # auto on a CPU runs fp32: the same answers, rightly shared
    output = tmp_path / "run"

    def hits(precision: str) -> int:
        assert main(["eval", "--tasks", "ishate_subtle", "--model", f"local:{single_text_folder}", "--model-args",
                     f"device=cpu,precision={precision}", "--output", str(output), "--limit", "3", "--no-progress",
                     "--overwrite", "--data-root", str(data_root)]) == 0
        return json.loads((output / "results.json").read_text())["results"]["ishate_subtle"]["cache_hits"]

    assert hits("fp32") == 0
    assert hits("bf16") == 0  # never the fp32 run's answers
    assert hits("fp32") == 3


# ---------------------------------------------------------------- invisible text; a copied embedding-cache row
INVISIBLE = "\u200b\ufeff\u2060"


def test_text_of_only_invisible_characters_is_empty_everywhere(packaged_model, tmp_path, capsys):
    from pragmeter.text import invalid_text_reason, is_blank

    for text in (INVISIBLE, f" {INVISIBLE}\n", "\u200d\u00ad", "\U000e0041"):
        assert is_blank(text) and invalid_text_reason(text).startswith("empty text"), repr(text)
    assert not is_blank(f"{INVISIBLE}a") and invalid_text_reason(f"{INVISIBLE}a") is None
    with pytest.raises(PragmeterError, match=r"readings 1: empty or not text \(empty text \(only invisible"):
        packaged_model.rank(CONTEXT, UTTERANCE, [READINGS[0], INVISIBLE])
    with pytest.raises(PragmeterError, match="the utterance is empty"):
        packaged_model.choose(CONTEXT, INVISIBLE, READINGS)
    # `score --strict`: the invisible row is refused as an empty one is, and named
    source = tmp_path / "in.csv"
    source.write_text(f"text\nIt is late.\n{INVISIBLE}\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["score", "--input", str(source), "--output", str(tmp_path / "out.csv"), "--strict", "--no-cache",
                 "--impscore", "impscore-minilm", "--backend", "torch", "--no-progress"]) == 1
    errors = pd.read_csv(tmp_path / "out.csv", keep_default_na=False)["impscore_error"].tolist()
    assert errors[0] == "" and "empty text (only invisible characters" in errors[1]


def test_an_embedding_cache_row_copied_from_another_text_is_dropped_and_computed_again(tmp_path, caplog):
    import logging
    import sqlite3

    from pragmeter.encoders.embedding_cache import DB_FILE, EmbeddingCache, text_key

    def encode(texts):  # a vector that says which text it is
        return np.array([[len(text), sum(map(ord, text)) % 97, 1.0] for text in texts], dtype=np.float32)

    cache = EmbeddingCache(tmp_path, "enc", width=3)
    texts = ["It is late.", "Close the window, would you?"]
    first = cache.get_or_compute(texts, encode)
    cache.close()
    with sqlite3.connect(tmp_path / "enc" / DB_FILE) as db:  # the second text's row now holds all of the first's
        columns = [row[1] for row in db.execute("PRAGMA table_info(embeddings)") if row[1] != "key"]
        values = db.execute(f"SELECT {', '.join(columns)} FROM embeddings WHERE key = ?",
                            (text_key(texts[0]),)).fetchone()
        db.execute(f"UPDATE embeddings SET {', '.join(f'{c} = ?' for c in columns)} WHERE key = ?",
                   (*values, text_key(texts[1])))
    calls = []
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        again = EmbeddingCache(tmp_path, "enc", width=3).get_or_compute(texts, lambda t: calls.append(t) or encode(t))
    assert np.array_equal(again, first) and calls == [[texts[1]]]  # computed again, the other row read
    assert "1 damaged row(s)" in caplog.text


def test_a_cache_written_before_rows_had_checksums_opens_and_is_computed_again(tmp_path):
    import hashlib
    import sqlite3

    from pragmeter.encoders.embedding_cache import DB_FILE, EmbeddingCache

    (tmp_path / "enc").mkdir()
    with sqlite3.connect(tmp_path / "enc" / DB_FILE) as db:
        db.execute("CREATE TABLE embeddings (key BLOB NOT NULL UNIQUE, vector BLOB NOT NULL)")
        db.execute("INSERT INTO embeddings VALUES (?, ?)", (hashlib.sha1(b"a").digest(), np.zeros(3, np.float32).tobytes()))
    got = EmbeddingCache(tmp_path, "enc", width=3).get_or_compute(["a"], lambda t: np.ones((len(t), 3), np.float32))
    assert np.array_equal(got, np.ones((1, 3)))
    assert np.array_equal(EmbeddingCache(tmp_path, "enc", width=3).get_or_compute(["a"], None), np.ones((1, 3)))


# ---------------------------------------------------------------- how it runs: said, and what a folder may claim
def test_interpret_says_how_the_interpreter_runs_on_stderr(capsys):
    assert main(["interpret", UTTERANCE, "--context", CONTEXT, "--reading", READINGS[0], "--reading", READINGS[1],
                 "--backend", "torch", "--precision", "fp32", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert f"interpreter {DEFAULT_INTERPRETER}: backend=torch|precision=fp32|device=cpu|" in captured.err
    assert "backend=" not in captured.out  # standard output holds the answer only


PLAUSIBLE = {"max_abs_probability_diff": 0.012, "max_abs_score_diff": 0.009, "label_agreement": 1.0, "pairs": 4000,
             "path": "openvino", "within_bounds": True}


@pytest.mark.parametrize("claim, problem", [
    ({**PLAUSIBLE, "pairs": 3}, "measured on 3 pairs"),
    ({**PLAUSIBLE, "pairs": True}, "measured on True pairs"),
    ({k: v for k, v in PLAUSIBLE.items() if k != "pairs"}, "measured on None pairs"),
    ({**PLAUSIBLE, "path": "guess"}, "path 'guess'"),
    ({**PLAUSIBLE, "max_abs_probability_diff": -1.0}, "max_abs_probability_diff is -1.0"),
    ({**PLAUSIBLE, "max_abs_probability_diff": 0.0, "max_abs_score_diff": 0.0}, "no change at all"),
])
def test_a_bf16_claim_no_measurement_makes_runs_fp32_and_says_why(claim, problem, tmp_path, on_host, caplog):
    import logging

    from pragmeter.interpreter.runtime import interpreter_runtime

    folder = copy_packaged(tmp_path / "model")
    on_host("zen4")  # a CPU with bf16: the recorded claim alone decides
    edit_config(folder, lambda config: config.update(bf16_check=PLAUSIBLE))
    assert interpreter_runtime(folder).precision == "bf16"  # a claim a measurement makes is believed
    edit_config(folder, lambda config: config.update(bf16_check=claim))
    with caplog.at_level(logging.WARNING, logger="pragmeter"):
        assert interpreter_runtime(folder).precision == "fp32"
    assert "claims bf16 within bounds, but" in caplog.text and problem in caplog.text


def test_labels_renamed_consistently_in_the_config_are_refused(tmp_path):
    """implied and contradiction swapped in id2label, label2id and the settings alike: every prediction would be
    renamed; the head file (covered by its sha256) records the labels it was written with."""
    folder = copy_packaged(tmp_path / "model")

    def swap(config: dict) -> None:
        labels = config["pragmeter"]["labels"]
        labels[0], labels[3] = labels[3], labels[0]
        config["id2label"] = {str(i): label for i, label in enumerate(labels)}
        config["label2id"] = {label: i for i, label in enumerate(labels)}

    edit_config(folder, swap)
    with pytest.raises(DataError, match=r"config.json: labels \['contradiction', .*'implied'\] are not the ones "
                                        r"head.safetensors was written with"):
        load(folder)


def test_a_shipped_folder_records_its_labels_in_the_head_it_writes(tmp_path):
    from safetensors import safe_open

    from pragmeter.interpreter.shipped import HEAD_FILE, save_shipped

    model = load(PACKAGED)
    save_shipped(model.classifier, {}, {"classifier.bias": torch.zeros(4), "classifier.weight": torch.zeros(4, 384)},
                 tmp_path / "out", "card")
    with safe_open(str(tmp_path / "out" / HEAD_FILE), "pt") as handle:
        assert json.loads(handle.metadata()["labels"]) == model.labels
