"""A fine-tuned classifier (:mod:`pragmeter.classify.model`) run as an OpenVINO graph on the CPU: the interpreter's
fast path, in fp32 or in bf16 where the CPU has it, as ImpScore's encoder runs (:mod:`pragmeter.encoders.openvino`).

The graph is the very transformers classification model that torch runs (encoder, pooler and classification layer,
the labels' logits out), opened from the model folder (whole weights or the shipped form) and converted with
``openvino.convert_model`` in a child process, so the classifying process never imports torch. It is saved as
OpenVINO IR (fp32 weights) with the tokenizer under ``$PRAGMETER_CACHE/openvino/classifiers/<folder>-<content
hash>/``: once per model content (the folder's files and, for the shipped form, its base encoder's), built once
however many processes want it, sealed when built and checked on each load (a damaged or foreign folder is set aside
and converted again). The conversion shows a bar of its steps.

Inputs are tokenized as the torch path tokenizes them (the same tokenizer, truncation and token types), batched by
token length under a token budget and run on all of the compiled graph's infer requests at once; probabilities are the
softmax of the logits in fp32, as the torch path takes them. Precision is chosen when the graph is compiled
(``INFERENCE_PRECISION_HINT``): one export serves fp32 and bf16.

bf16 may keep some encoder layers in fp32 (``fp32_layers``; an interpreter's folder records them in its bf16 check,
:func:`pragmeter.interpreter.runtime.recorded_fp32_layers`): bf16's rounding through every layer moves a probability
further than through most of them, and OpenVINO's CPU plugin has no per-node precision under a bf16 hint. The graph
is then cut at the layers' outputs into runs of consecutive layers of one precision (:func:`split_by_precision`),
each compiled in its own precision, the hidden states passed from one to the next in fp32.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pragmeter.encoders.graph import DEFAULT_MAX_BATCH, INPUT_NAMES, token_batches
from pragmeter.encoders.openvino import OV_PRECISION, TOKENS_PER_BATCH
from pragmeter.encoders.runtime import Runtime
from pragmeter.errors import PragmeterError

GRAPH_FILE = "model.xml"
STEPS = ("loaded", "converted", "saved")  # what the converting child says, one line each, as it goes
SAMPLE_TEXTS = (["A premise to trace the graph with.", "Short one."], ["A hypothesis.", "Another hypothesis here."])
# The ops of encoder layer N's output LayerNorm as torch's tracing names them in the graph (BERT, MPNet, RoBERTa…):
# the last of them (MVN, then its scale and shift where they are not folded away) is the layer's output, where a
# graph is cut between layers of two precisions.
LAYER_OUTPUT = re.compile(r"encoder\.layer\.(\d+)\.output\.LayerNorm/aten::layer_norm/")
HIDDEN = "hidden_states"  # the input of a part of a cut graph: the hidden states of the layer before it


def layer_outputs(graph) -> list:
    """The output node of each encoder layer of an OpenVINO ``graph``, in layer order (empty where its layers are not
    named as LAYER_OUTPUT reads them)."""
    found = {}
    for op in graph.get_ordered_ops():  # in an order where each op comes after its inputs: the last one wins
        match = LAYER_OUTPUT.search(op.get_friendly_name())
        if match and op.get_type_name() != "Constant":
            found[int(match.group(1))] = op
    return [found[at] for at in range(len(found))] if sorted(found) == list(range(len(found))) else []


def split_by_precision(graph, precision: str, fp32_layers: Sequence[int]) -> list[tuple]:
    """``graph`` cut into runs of consecutive encoder layers of one precision: [(part, precision)], the layers in
    ``fp32_layers`` fp32 and the others ``precision``; the embeddings run with the first layer, the classification
    layer with the last. Each part after the first reads HIDDEN (the previous part's output) beside the graph's own
    inputs. A PragmeterError where the graph's layers cannot be found or a layer number is outside them."""
    import openvino as ov

    layers = len(layer_outputs(graph))
    if not layers:
        raise PragmeterError("cannot keep layers in fp32: the graph's encoder layers are not named as expected")
    outside = sorted({at for at in fp32_layers if not 0 <= at < layers})
    if outside:
        raise PragmeterError(f"cannot keep layers {outside} in fp32: the encoder has layers 0 to {layers - 1}")
    kept = set(fp32_layers)
    kinds = ["fp32" if at in kept else precision for at in range(layers)]
    bounds = [at for at in range(1, layers) if kinds[at] != kinds[at - 1]]
    parts = []
    for start, end in zip([0] + bounds, bounds + [layers]):
        part = graph.clone()
        cuts = layer_outputs(part)
        inputs = list(part.get_parameters())
        if start:
            hidden = ov.opset13.parameter(ov.PartialShape([-1, -1, cuts[start - 1].get_output_partial_shape(0)[2]]),
                                          ov.Type.f32, name=HIDDEN)
            hidden.output(0).get_tensor().set_names({HIDDEN})
            for target in list(cuts[start - 1].output(0).get_target_inputs()):
                target.replace_source_output(hidden.output(0))
            inputs.append(hidden)
        outputs = [result.input_value(0) for result in part.get_results()] if end == layers \
            else [cuts[end - 1].output(0)]
        parts.append((ov.Model(outputs, inputs, f"layers {start}-{end - 1}"), kinds[start]))
    return parts


def export_folder(folder: str | os.PathLike) -> Path:
    """Where the OpenVINO graph of the classifier folder ``folder`` is cached, keyed by what decides its numbers: the
    folder's files and, for the shipped and peft forms, their base encoder's."""
    from pragmeter.classify.model import base_encoder, read_settings
    from pragmeter.encoders import cache_dir
    from pragmeter.encoders.fingerprint import encoder_fingerprint, folder_fingerprint
    from pragmeter.interpreter.adapter import is_adapter
    from pragmeter.interpreter.shipped import is_shipped
    from pragmeter.io.untrusted import safe_name

    folder = Path(folder).resolve()
    content = [folder_fingerprint(folder)]
    if is_shipped(folder) or is_adapter(folder):
        content.append(encoder_fingerprint(base_encoder(folder, read_settings(folder)[2])))
    digest = hashlib.sha256("\n".join(content).encode()).hexdigest()[:16]
    return cache_dir() / "openvino" / "classifiers" / f"{safe_name(folder.name)}-{digest}"


class OpenVinoClassifier:
    """A classifier folder's model as an OpenVINO graph, in the runtime's precision (fp32 or bf16). Answers
    ``labels``, ``settings``, ``probabilities``, ``decide`` and ``predict`` as :class:`TextClassifier` does;
    ``probabilities`` batches by a token budget rather than by ``batch_size``. In bf16, ``fp32_layers`` (encoder
    layer numbers; None: those the folder's bf16 check records) run in fp32 (module notes). One caller at a time per
    instance (its infer requests are shared)."""

    backend = "openvino"
    device = "cpu"

    def __init__(self, folder: str | os.PathLike, runtime: Runtime | None = None, progress: bool = True,
                 tokens_per_batch: int = TOKENS_PER_BATCH, max_batch: int = DEFAULT_MAX_BATCH,
                 fp32_layers: Sequence[int] | None = None) -> None:
        from pragmeter.classify.model import read_settings

        runtime = runtime or Runtime("openvino", "fp32")
        if runtime.backend != self.backend or runtime.precision not in OV_PRECISION:
            raise PragmeterError(f"the openvino classifier runs backend='openvino' in fp32 or bf16, not "
                                 f"backend={runtime.backend!r} with precision={runtime.precision!r}")
        self.folder, self.runtime = Path(folder), runtime
        self.settings = read_settings(self.folder)[2]
        self.tokens_per_batch, self.max_batch = tokens_per_batch, max_batch
        self.truncated = 0  # inputs longer than settings.max_length seen by probabilities() (truncated to it)
        self.path = self._ensure_exported(progress)
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        alternatives = "try precision='fp32' or backend='torch'" if self.precision != "fp32" else "try backend='torch'"
        self._layers_source = ""  # where the layers kept in fp32 were read, for an error about them
        if self.precision == "fp32":
            fp32_layers = ()
        elif fp32_layers is None:
            from pragmeter.interpreter.runtime import BF16_KEY, FP32_LAYERS_KEY, recorded_fp32_layers

            fp32_layers = recorded_fp32_layers(self.folder)
            self._layers_source = f" ({self.folder / 'config.json'}: field {BF16_KEY}.{FP32_LAYERS_KEY})"
        self.fp32_layers = tuple(sorted(set(fp32_layers)))
        self._parts = self._compile(runtime.threads, f"classifier {self.folder.name!r}", alternatives)
        self._compiled, self._requests = self._parts[0][:2]
        self._alternatives = alternatives
        self._inputs = [name for port in self._compiled.inputs for name in port.get_names() if name in INPUT_NAMES]
        self._in_flight: list = []  # _requests infer requests, made on first use
        self._part_requests: list = []  # per part of a cut graph, its infer requests, made on first use
        self._lock = threading.Lock()

    @property
    def precision(self) -> str:
        return self.runtime.precision

    @property
    def labels(self) -> list[str]:
        return self.settings.labels

    # -- the graph ---------------------------------------------------------------------------------
    def _ensure_exported(self, progress: bool) -> Path:
        from pragmeter.encoders.openvino import sealed_export
        from pragmeter.encoders.paths import mark_used, prune_built

        target = export_folder(self.folder)
        if sealed_export(target):
            mark_used(target)
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        _convert(self.folder, target, progress)
        prune_built(keep=target)
        return target

    def _compile(self, threads: int | None, what: str, alternatives: str) -> list[tuple]:
        """[(compiled graph, infer requests it wants, its input names)]: the whole graph, or with ``fp32_layers``
        its parts in order (:func:`split_by_precision`)."""
        from pragmeter.encoders.openvino import compile_graph

        if not self.fp32_layers:
            compiled, requests = compile_graph(self.path / GRAPH_FILE, self.precision, threads, what, alternatives)
            return [(compiled, requests, None)]
        import openvino as ov

        try:
            parts = split_by_precision(ov.Core().read_model(str(self.path / GRAPH_FILE)), self.precision,
                                       self.fp32_layers)
        except PragmeterError as error:
            raise PragmeterError(f"{what}: {error}{self._layers_source}") from None
        compiled = []
        for part, precision in parts:
            graph, requests = compile_graph(part, precision, threads, what, alternatives)
            compiled.append((graph, requests, [name for port in graph.inputs for name in port.get_names()]))
        return compiled

    @property
    def layers(self) -> int:
        """How many encoder layers the graph has (0 where they are not named as LAYER_OUTPUT reads them)."""
        import openvino as ov

        return len(layer_outputs(ov.Core().read_model(str(self.path / GRAPH_FILE))))

    # -- inference ---------------------------------------------------------------------------------
    def _check_kind(self, pairs: Sequence[str] | None) -> None:
        if (pairs is None) != (self.settings.input_kind == "single"):
            wanted = "(premise, hypothesis) pairs" if self.settings.input_kind == "pair" else "single texts"
            raise PragmeterError(f"this model classifies {wanted}")

    def features(self, encoded: dict, rows: list[int]) -> dict[str, np.ndarray]:
        """The graph's inputs for ``rows`` of the tokenizer's output, right-padded to the longest (as the tokenizer
        pads): token ids, attention mask and token types."""
        width = max(len(encoded["input_ids"][row]) for row in rows)
        pads = {"input_ids": self.tokenizer.pad_token_id, "attention_mask": 0,
                "token_type_ids": self.tokenizer.pad_token_type_id}
        out = {}
        for name in self._inputs:
            array = np.full((len(rows), width), pads[name], dtype=np.int64)
            for at, row in enumerate(rows):
                values = encoded[name][row] if name in encoded else [0] * len(encoded["input_ids"][row])
                array[at, : len(values)] = values
            out[name] = array
        return out

    def probabilities(self, texts: Sequence[str], pairs: Sequence[str] | None = None, batch_size: int = 64,
                      progress: bool = False) -> np.ndarray:
        """Class probabilities, rows in input order, columns in ``labels`` order. ``batch_size`` is accepted as
        :class:`TextClassifier` takes it; batches follow the token budget instead."""
        from tqdm import tqdm

        from pragmeter.classify.model import check_probabilities, cut_long_inputs
        from pragmeter.encoders.openvino import last_line, run_in_flight

        self._check_kind(pairs)
        texts, pairs = list(texts), None if pairs is None else list(pairs)
        out = np.zeros((len(texts), len(self.labels)), dtype=np.float32)
        if not texts:
            return out
        texts, pairs = cut_long_inputs(self.tokenizer, self.settings.max_length, texts, pairs)
        encoded = self.tokenizer(texts, pairs, truncation=True, max_length=self.settings.max_length, verbose=False)
        full = self.tokenizer(texts, pairs, truncation=False, verbose=False)["input_ids"]
        self.truncated += sum(len(ids) > self.settings.max_length for ids in full)
        batches = token_batches([len(ids) for ids in encoded["input_ids"]], self.tokens_per_batch, self.max_batch)
        step = 8 * self._requests  # batches in flight between two moves of the bar
        with self._lock, tqdm(total=len(texts), desc="predict", unit="input", disable=not progress,
                              dynamic_ncols=True) as bar:
            try:
                for start in range(0, len(batches), step):
                    chunk = batches[start:start + step]
                    if len(self._parts) > 1:
                        self._run_parts(encoded, chunk, out)
                    elif len(chunk) == 1 or self._requests == 1:
                        for batch in chunk:
                            out[batch] = self._compiled(self.features(encoded, batch), share_inputs=False)[0]
                    else:
                        if not self._in_flight:
                            self._in_flight = [self._compiled.create_infer_request() for _ in range(self._requests)]
                        run_in_flight(self._in_flight, chunk, lambda batch: self.features(encoded, batch), out)
                    bar.update(sum(map(len, chunk)))
            except RuntimeError as error:  # a kernel this CPU (or its ISA cap) lacks: OpenVINO's words, last line
                raise PragmeterError(f"OpenVINO could not run classifier {self.folder.name!r} in {self.precision} on "
                                     f"this CPU ({last_line(error)}); {self._alternatives}") from None
        out -= out.max(axis=1, keepdims=True)  # softmax of the logits, in fp32
        np.exp(out, out=out)
        out /= out.sum(axis=1, keepdims=True)
        return check_probabilities(out, self.folder)

    def _run_parts(self, encoded: dict, chunk: list[list[int]], out: np.ndarray) -> None:
        """``out[batch]`` = the logits of each batch of ``chunk`` through the parts of a cut graph in turn, each part
        on all of its infer requests at once, its hidden states handed on to the next."""
        hidden: list | None = None
        for at in range(len(self._parts)):
            hidden = self._run_part(at, encoded, chunk, hidden)
        for batch, logits in zip(chunk, hidden):
            out[batch] = logits

    def _run_part(self, at: int, encoded: dict, chunk: list[list[int]], hidden: list | None) -> list:
        """Part ``at``'s output for each batch of ``chunk`` (``hidden``: the previous part's, batch by batch)."""
        from pragmeter.encoders.openvino import run_in_flight

        compiled, requests, names = self._parts[at]
        if len(self._part_requests) <= at:
            self._part_requests.append([compiled.create_infer_request() for _ in range(requests)])

        def inputs(item: list[int]) -> dict:
            features = {name: value for name, value in self.features(encoded, chunk[item[0]]).items()
                        if name in names}
            return {**features, HIDDEN: hidden[item[0]]} if hidden is not None else features

        outputs: list = [None] * len(chunk)

        def keep(item: list[int], data) -> None:
            outputs[item[0]] = np.array(data, dtype=np.float32)  # the request's memory is reused: copied

        run_in_flight(self._part_requests[at], [[number] for number in range(len(chunk))], inputs, keep)
        return outputs

    def predict(self, texts: Sequence[str], pairs: Sequence[str] | None = None, batch_size: int = 64,
                progress: bool = False) -> list[str]:
        return self.decide(self.probabilities(texts, pairs, batch_size, progress))

    def decide(self, probabilities: np.ndarray) -> list[str]:
        """Labels of rows of class probabilities, with the folder's decision bias (classify.model.decide)."""
        from pragmeter.classify.model import decide

        return decide(probabilities, self.labels, self.settings.decision_bias)


def _convert(folder: Path, target: Path, progress: bool) -> None:
    """Convert the classifier of ``folder`` to ``target`` in a child process (torch stays out of this one, and its
    memory is returned when it ends), a bar following its steps."""
    from tqdm import tqdm

    from pragmeter.encoders.openvino import child_env

    with tempfile.TemporaryFile(mode="w+") as errors, tqdm(
            total=len(STEPS), desc=f"preparing {folder.name} for OpenVINO (once)", unit="step", disable=not progress,
            dynamic_ncols=True) as bar:
        child = subprocess.Popen([sys.executable, "-m", "pragmeter.classify.openvino", str(folder), str(target)],
                                 env=child_env(), stdout=subprocess.PIPE, stderr=errors, text=True)
        with child:
            for line in child.stdout:
                if line.strip() in STEPS:
                    bar.set_postfix_str(line.strip())
                    bar.update(1)
        if child.returncode != 0 or not (target / GRAPH_FILE).is_file():
            errors.seek(0)
            lines = [line.strip() for line in errors.read().splitlines() if line.strip()]
            raise PragmeterError(f"could not convert classifier {str(folder)!r} for OpenVINO "
                                 f"({lines[-1] if lines else f'exit {child.returncode}'}); run it with the torch backend")


def export(folder: Path, target: Path) -> None:
    """Convert the classifier of ``folder`` (as classify.loading opens it, in fp32 on the CPU) to OpenVINO IR with its
    tokenizer in the folder ``target``, sealed; built once however many processes convert at once. Says each step
    (STEPS) on standard output as it is done."""
    import openvino as ov
    import torch

    from pragmeter.classify.loading import load_classifier
    from pragmeter.classify.model import TextClassifier
    from pragmeter.encoders.fingerprint import seal, seal_problem
    from pragmeter.io.atomic import build_folder

    classifier = load_classifier(folder, "cpu", "fp32")
    if not isinstance(classifier, TextClassifier):
        raise PragmeterError(f"{folder}: not a fine-tuned encoder classifier (an svm folder runs its own encoder)")
    _step(STEPS[0])
    single = classifier.settings.input_kind == "single"
    encoded = classifier.tokenize(SAMPLE_TEXTS[0], None if single else SAMPLE_TEXTS[1])
    names = [name for name in INPUT_NAMES if name in encoded]
    model = classifier.model.eval()

    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *tensors):
            return self.model(**dict(zip(names, tensors))).logits

    with torch.inference_mode(False), torch.no_grad():
        graph = ov.convert_model(Logits().eval(), example_input=tuple(encoded[name] for name in names))
    for port, name in zip(graph.inputs, names):
        port.get_tensor().set_names({name})
    graph.outputs[0].get_tensor().set_names({"logits"})
    _step(STEPS[1])

    def write(staging: Path) -> None:
        ov.save_model(graph, str(staging / GRAPH_FILE), compress_to_fp16=False)
        classifier.tokenizer.save_pretrained(staging)
        seal(staging, target.name)

    build_folder(target, write, ready=lambda built: seal_problem(built, built.name) is None)
    _step(STEPS[2])


def _step(name: str) -> None:
    sys.stdout.write(name + "\n")  # the parent's bar reads it
    sys.stdout.flush()


if __name__ == "__main__":  # the child process of OpenVinoClassifier._ensure_exported
    export(Path(sys.argv[1]), Path(sys.argv[2]))
