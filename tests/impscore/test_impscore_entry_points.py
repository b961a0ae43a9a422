"""The ImpScore commands' library entry points: options checked before any work (the loaders passed in are not
called), and what they say and write, on real small files."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pragmeter.errors import PragmeterError
from pragmeter.impscore.ood import DATA_DIR


def never(*args):
    raise AssertionError("loaded before the checks")


class LengthScorer:
    """Longer text = more implicit (a transparent stand-in for ImpScore)."""

    truncated = 0

    def score(self, texts):
        return np.array([len(t) / 100 for t in texts], dtype=float)

    def pragmatic_distance(self, a, b):
        return np.abs(np.array([len(x) for x in a], float) - np.array([len(y) for y in b], float))

    def signature(self) -> str:
        return "length"


@pytest.mark.parametrize("options, message", [
    ({"teacher": "impscore-mpnet-general"},
     "teacher='impscore-mpnet-general', distill_weight=0.0: a teacher's scores need a distillation weight above 0"),
    ({"distill_weight": 2.0}, r"distill_weight=2.0: needs a teacher model to distil"),
    ({"encoder_backend": "torch", "encoder_precision": "bf16"}, "precision='bf16', backend='torch': needs backend "
                                                                "openvino"),
    ({"encoder_layers": 2, "encoder_lr": 5e-5, "encoder_batch_size": 8},
     r"encoder_layers=2, encoder_lr=5e-05, encoder_epochs=0, encoder_batch_size=8: training encoder layers needs"),
    ({"encoder_rank": 32}, "encoder_rank=32, encoder_layers=0: compresses trained encoder layers: it needs encoder "
                           "layers to train"),
    ({"encoder_layers": 6, "encoder_lr": 1e-3, "encoder_epochs": 2, "encoder_batch_size": 8, "encoder_adapters": True},
     "encoder_adapters=True, encoder_rank=0: trains rank-R adapters: it needs an encoder rank"),
])
def test_train_options_that_do_not_go_together_are_refused(options, message):
    from pragmeter.impscore.training import config_from_options

    with pytest.raises(PragmeterError, match=message):
        config_from_options(options)


def test_train_options_become_a_config():
    from pragmeter.impscore.training import TrainConfig, config_from_options

    config = config_from_options({"encoder": "all-MiniLM-L6-v2", "epochs": 3, "source_weights": [("figqa", 2.0)],
                                  "output": "ignored", "teacher": "m", "distill_weight": 0.5})
    assert config == TrainConfig(epochs=3, source_weights={"figqa": 2.0}, teacher="m", distill_weight=0.5)


def test_train_result_summary_names_epoch_accuracies_and_folder():
    from pragmeter.impscore.training import TrainConfig, TrainResult

    result = TrainResult(None, TrainConfig(), best_epoch=4, test={"implicitness_accuracy": 0.91,
                                                                    "pragmatics_accuracy": 0.8}, folder=Path("m"))
    assert result.summary() == ("best epoch 4; test implicitness accuracy 0.9100, pragmatics accuracy 0.8000 -> m")


def test_evaluate_check_refuses_its_output_first_then_prints_model_and_results(tmp_path):
    from pragmeter.impscore.evaluators import evaluate_check

    output = tmp_path / "ranking.json"
    output.write_text("{}")
    with pytest.raises(PragmeterError, match="ranking.json exists"):
        list(evaluate_check("ranking", never, output, path=DATA_DIR / "check_ranking.json"))
    lines = list(evaluate_check("ranking", LengthScorer, output, overwrite=True, path=DATA_DIR / "check_ranking.json"))
    assert lines[0] == "model: length" and lines[-1] == f"results -> {output}"
    assert json.loads(output.read_text())["model"] == "length"


def test_corpus_file_from_the_official_csv(tmp_path, caplog):
    from pragmeter.impscore.corpus import make_corpus_file

    caplog.set_level(logging.INFO, logger="pragmeter")

    official = tmp_path / "all_data.csv"
    pd.DataFrame([{"pos_implicit": f"implicit {i}", "pos_explicit": f"explicit {i}", "neg_implicit": f"implicit {i}",
                   "neg_explicit": f"explicit {(i + 1) % 30}"} for i in range(30)]).to_csv(official, index=False)
    output = tmp_path / "corpus.csv"
    frame = make_corpus_file(output, official=official, on_report=never)
    assert len(frame) == 30 and len(pd.read_csv(output)) == 30
    assert caplog.messages == [f"30 pairs from {official}", f"wrote 30 pairs -> {output}"]
    with pytest.raises(PragmeterError, match="corpus.csv exists"):
        make_corpus_file(output, official=official)


def test_a_gpu_device_off_the_torch_backend_is_refused_before_loading():
    from pragmeter.impscore.model import ImpScore

    with pytest.raises(PragmeterError, match="precision='fp16': runs through torch on a GPU"):
        ImpScore.load(backend="onnx", precision="fp16")
    with pytest.raises(PragmeterError, match="device='cuda', backend='onnx': needs backend torch"):
        ImpScore.load(backend="onnx", device="cuda")


@pytest.mark.parametrize("texts, input_path, output, message", [
    (["hi"], "in.csv", "out.csv", "give sentences or --input, not both"),
    ([], "in.csv", None, "--input needs --output"),
    ([], None, None, "nothing to score"),
    (["hi"], None, "out.csv", "--output goes with --input FILE"),  # it was ignored: no file, no word
])
def test_score_refuses_what_it_cannot_do_before_loading(texts, input_path, output, message):
    from pragmeter.cli.score import score_texts_or_table

    with pytest.raises(PragmeterError, match=message):
        score_texts_or_table(texts, input_path, output, "text", never)


def test_score_reads_standard_input_line_by_line_in_steps(monkeypatch, capsys):
    """``pragmeter score -``: one output line per input line (nan where a line cannot be scored), printed a step at
    a time while the input is still arriving."""
    import io

    from pragmeter.cli.score import score_texts_or_table

    monkeypatch.setenv("PRAGMETER_CHUNK_SIZE", "2")
    seen = []

    class Arriving(io.RawIOBase):  # a pipe: each line is read only when asked for
        lines = iter([b"It's late.\r\n", b"\n", b"Go.\n", b"   \n", b"Well, well."])

        def readable(self):
            return True

        def __iter__(self):
            for line in self.lines:
                seen.append(capsys.readouterr().out)  # what was printed before this line was read
                yield line

    failed = score_texts_or_table(["-"], None, None, "text", lambda cache: LengthScorer(), stdin=Arriving())
    out = capsys.readouterr()
    printed = "".join(seen) + out.out
    assert printed == "0.1000\tIt's late.\nnan\t\n0.0300\tGo.\nnan\t   \n0.1100\tWell, well.\n"
    assert seen[2] == "0.1000\tIt's late.\nnan\t\n" and seen[4] == "0.0300\tGo.\nnan\t   \n"  # in steps of 2
    assert failed == 2 and "2 of 5 line(s) not scored (printed with nan; first: line 2: empty text)" in out.err


def test_score_refuses_empty_standard_input_before_loading():
    import io

    from pragmeter.cli.score import score_texts_or_table

    with pytest.raises(PragmeterError, match="nothing to score: standard input was empty"):
        score_texts_or_table(["-"], None, None, "text", never, stdin=io.BytesIO(b""))


@pytest.mark.parametrize("data, error", [
    (b"Fine.\nGo.\n\xff\xfe\nlater\n", "standard input: not valid UTF-8 at line 3"),
    (b"Fine.\nGo.\nnul\x00byte\nlater\n", "standard input: NUL byte at line 3"),
])
def test_an_unreadable_line_ends_scoring_after_every_line_before_it(data, error, capsys):
    import io

    from pragmeter.cli.score import score_texts_or_table

    with pytest.raises(PragmeterError, match=error):
        score_texts_or_table(["-"], None, None, "text", lambda cache: LengthScorer(), stdin=io.BytesIO(data))
    assert capsys.readouterr().out == "0.0500\tFine.\n0.0300\tGo.\n"  # the step's lines before it, not after


def test_score_prints_sentences_and_reports_table_rows(tmp_path, capsys, caplog):
    from pragmeter.cli.score import score_texts_or_table

    caplog.set_level(logging.INFO, logger="pragmeter")  # the row report is the library's (main() shows it on stderr)

    assert score_texts_or_table(["It's late.", "Go."], None, None, "text", lambda cache: LengthScorer()) == 0
    assert capsys.readouterr().out == "0.1000\tIt's late.\n0.0300\tGo.\n"
    table = tmp_path / "in.csv"
    table.write_text("text\nIt's late.\n\"\"\n")
    failed = score_texts_or_table([], table, tmp_path / "out.csv", "text", lambda cache: LengthScorer())
    assert failed == 1 and any(message.startswith("scored 1 of 2 rows") for message in caplog.messages)


def test_the_loaders_have_one_shape():
    """ImpScore.load and Interpreter.load: the model's name, then keyword arguments only, the runtime's under the same
    names with the same defaults; the embedding cache is ImpScore.load's own ``cache`` (no second loader)."""
    import inspect

    from pragmeter.impscore import model as module
    from pragmeter.interpreter.model import Interpreter

    for load in (module.ImpScore.load, Interpreter.load):
        first, *rest = inspect.signature(load).parameters.values()
        assert (first.name, first.default, first.kind) == ("name", None, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        assert all(parameter.kind is inspect.Parameter.KEYWORD_ONLY for parameter in rest), load
        assert [p.name for p in rest][:4] == ["backend", "precision", "device", "threads"]
        assert [p.default for p in rest][:4] == ["auto", "auto", None, None]
    assert inspect.signature(module.ImpScore.load).parameters["cache"].default is None
    assert not hasattr(module, "load_impscore")
    with pytest.raises(TypeError):
        module.ImpScore.load(None, "cpu")  # a device given by position
