"""INLI recipes (Havaldar et al., ACL 2025): train on train, select on val, report on test.

Label schemes: ``4way`` (implied / explicit / neutral / contradiction), ``3way`` (implied and explicit collapse
into ``entailed``, as in the paper's Table 7) and ``implied-vs-explicit`` (the detector of §3, trained on the
implied and explicit hypotheses only; paper 97.3% with T5-XXL).

Split schemes (Table 8): the model is trained and selected on the sources in ``train`` only and the test
split is reported separately on those sources ("training subset") and on the held-out ones ("generalisation
subset").
"""

from __future__ import annotations

import os

from pragmeter.classify.examples import Examples, RecipeData
from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.inli import FILES, LABELS, SOURCES, load_inli
from pragmeter.errors import PragmeterError

LABEL_SCHEMES = ("4way", "3way", "implied-vs-explicit")
CONVERSATIONAL = ("circa", "ludwig")
SITUATIONAL = ("normbank", "socialchem")
# name -> (training sources, held-out sources, paper accuracy on (training subset, generalisation subset)).
SPLIT_SCHEMES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[float, float] | None]] = {
    "standard": (SOURCES, (), None),
    "normbank-to-socialchem": (("normbank",), ("socialchem",), (0.917, 0.795)),
    "socialchem-to-normbank": (("socialchem",), ("normbank",), (0.913, 0.850)),
    "conversational-to-situational": (CONVERSATIONAL, SITUATIONAL, (0.965, 0.695)),
    "situational-to-conversational": (SITUATIONAL, CONVERSATIONAL, (0.913, 0.796)),
    "leave-out-socialchem": (("normbank", "circa", "ludwig"), ("socialchem",), (0.945, 0.804)),
    "leave-out-normbank": (("socialchem", "circa", "ludwig"), ("normbank",), (0.942, 0.851)),
}
# Paper Table 6 (4-way accuracy, implied accuracy) and §3 (detector), for the report.
PAPER = {
    "4way": {"T5-Small": (0.813, 0.731), "T5-Base": (0.871, 0.817), "T5-Large": (0.913, 0.870),
             "T5-XXL": (0.924, 0.885), "GPT-4 8-shot": (0.753, 0.645)},
    "3way": {"T5-XXL (3-way INLI, Table 7)": (0.909, None)},
    "implied-vs-explicit": {"T5-XXL": (0.973, None)},
}
# The words the harness's INLI task parses, per label (4-way only; other schemes have no harness task).
ANSWER_WORDS = {"implied": "Implicature", "explicit": "Explicature", "neutral": "Neutral",
                "contradiction": "Contradiction"}


def relabel(label: str, scheme: str) -> str | None:
    """The label under ``scheme``, or None when the item is not part of it."""
    if scheme == "3way":
        return "entailed" if label in ("implied", "explicit") else label
    if scheme == "implied-vs-explicit":
        return label if label in ("implied", "explicit") else None
    return label


def scheme_labels(scheme: str) -> list[str]:
    if scheme not in LABEL_SCHEMES:
        raise PragmeterError(f"unknown INLI label scheme {scheme!r}; choose one of {', '.join(LABEL_SCHEMES)}")
    return list(dict.fromkeys(relabel(label, scheme) for label in LABELS if relabel(label, scheme)))


def split_examples(split: str, scheme: str, sources: tuple[str, ...] | None,
                   root: str | os.PathLike | None) -> Examples:
    rows = [(item, relabel(item.label, scheme)) for item in load_inli(split, root)]
    rows = [(item, label) for item, label in rows if label and (sources is None or item.source in sources)]
    return Examples(texts=[i.premise for i, _ in rows], pairs=[i.hypothesis for i, _ in rows],
                    labels=[label for _, label in rows], groups=[i.source for i, _ in rows])


EXTRA_SOURCES = ("flute",)  # human-edited figurative material that can join the training split (``extra``)


def flute_examples(root: str | os.PathLike | None = None) -> Examples:
    """FLUTE's training files (figurative language NLI) as interpreter pairs: premise = the figurative sentence
    alone, quoted (an utterance without context), hypothesis = its literal meaning (``implied``) or, where FLUTE
    gives one, the opposite literal reading (``contradiction``). FLUTE's gold test files are left out."""
    from pragmeter.datasets.pairs.flute import flute
    from pragmeter.interpreter.model import premise

    source = flute(root, cap=None)
    texts, pairs, labels = [], [], []
    for (figure, literal), where, negative in zip(source.pairs, source.origins, source.hard_negatives):
        if "testgolddata/" in where:
            continue
        texts.append(premise("", figure)), pairs.append(literal), labels.append("implied")
        if negative:
            texts.append(premise("", figure)), pairs.append(negative), labels.append("contradiction")
    return Examples(texts=texts, pairs=pairs, labels=labels, groups=["flute"] * len(texts))


EXTRA_READERS = {"flute": flute_examples}


def build(labels: str = "4way", split_scheme: str = "standard",
          root: str | os.PathLike | None = None, extra: tuple[str, ...] = ()) -> RecipeData:
    """``extra``: names from EXTRA_SOURCES whose examples join the training split only (4-way labels)."""
    unknown = sorted(set(extra) - set(EXTRA_SOURCES))
    if unknown or (extra and labels != "4way"):
        raise PragmeterError(f"extra training sources must be among {', '.join(EXTRA_SOURCES)} with 4-way labels, "
                             f"got {', '.join(extra)} with {labels}")
    if split_scheme not in SPLIT_SCHEMES:
        raise PragmeterError(f"unknown INLI split scheme {split_scheme!r}; choose one of {', '.join(SPLIT_SCHEMES)}")
    names = scheme_labels(labels)
    train_sources, held_out, paper_split = SPLIT_SCHEMES[split_scheme]
    groups = {}
    if held_out:
        groups = {"training_subset": list(train_sources), "generalisation_subset": list(held_out)}
    paper = {"label_scheme": {k: list(v) for k, v in PAPER[labels].items()}}
    if paper_split:
        paper["split_scheme"] = {"training_subset": paper_split[0], "generalisation_subset": paper_split[1],
                                 "model": "T5-XXL (Table 8)"}
    train = split_examples("train", labels, train_sources, root)
    for name in extra:
        train = train.extend(EXTRA_READERS[name](root))
    return RecipeData(
        name="inli", labels=names, input_kind="pair",
        train=train,
        val=split_examples("val", labels, train_sources, root),
        test=split_examples("test", labels, None, root),
        arguments={"labels": labels, "split_scheme": split_scheme, **({"extra": list(extra)} if extra else {})},
        answer_words=ANSWER_WORDS if labels == "4way" else {},
        data_files=dataset_checksums(list(FILES)),
        description=f"INLI {labels}, split scheme {split_scheme} (train sources: {', '.join(train_sources)})",
        report_groups=groups, paper=paper,
    )
