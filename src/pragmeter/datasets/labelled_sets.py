"""The labelled hate-speech and sentiment sets of the data root as text collections, ready to profile
(ImpScore paper §7.1, Figures 5, 6 and 14). Every file is read through :func:`pragmeter.data.root.data_file`
(checksum verified) and its sha256 recorded.

=============  ==========================================================  ==========================
name           texts                                                       groupings
=============  ==========================================================  ==========================
ishate         dev + test messages, cleaned text as in the ISHate tasks     implicit_layer, subtlety_layer
               (train is left out: the shipped ImpScore trains on it)
latent_hatred  stage-1 posts; pairs: stage-3 post vs implied statement     class
sbic           aggregated dev + test posts (train is not in the data root)  offensive, implication
dghsd          filtered DynaHate dev + test                                 type, label
toxigen        the 30 demonstration files (duplicate lines removed)        label, target
davidson       labeled_data.csv tweets                                     class
absa           SemEval-2014 aspect terms (restaurants + laptops, train +   sentiment, domain
               test), one row per aspect term, text = its sentence
=============  ==========================================================  ==========================

Large sets are sampled (seeded) per value of the first grouping, see :func:`load_builtin`.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pragmeter.datasets import ishate as ishate_data
from pragmeter.datasets import latent_hatred as latent
from pragmeter.datasets.collection import TextCollection, sample_per_label
from pragmeter.datasets.common import read_frame
from pragmeter.data.root import data_file, dataset_checksums, manifest
from pragmeter.errors import DataError, PragmeterError

if TYPE_CHECKING:  # pandas is imported where data is read: `pragmeter analyze profile --help` stays fast
    import pandas as pd

Root = str | os.PathLike | None
DEFAULT_CAP = 2000  # texts per value of the first grouping (CPU time; the paper draws 2,000 pairs too)
DEFAULT_SEED = 0


def _clean_texts(frame: pd.DataFrame, column: str, relative: str) -> pd.DataFrame:
    """Rows whose text is a non-empty string (the few empty upstream rows cannot be scored)."""
    keep = frame[column].map(lambda v: isinstance(v, str) and bool(v.strip()))
    return frame[keep].reset_index(drop=True)


def ishate(root: Root = None, splits: tuple[str, ...] = ("dev", "test")) -> TextCollection:
    """ISHate dev + test by default: the shipped ImpScore corpus pairs ISHate *train* messages (source
    ``ishate_train``), so profiles and the validity check use the messages it never saw."""
    import pandas as pd

    files = [ishate_data.messages_file(split) for split in splits]
    frames = []
    for split in splits:
        frame = ishate_data.read_messages(split, root)
        if "aug_method" in frame.columns:
            frame = frame[frame["aug_method"] == "orig"]
        frames.append(frame)
    frame = _clean_texts(pd.concat(frames, ignore_index=True), "cleaned_text", "ishate")
    return TextCollection(
        name="ishate", texts=frame["cleaned_text"].tolist(),
        groupings={"implicit_layer": frame["implicit_layer"].fillna("Non-HS").tolist(),
                   "subtlety_layer": frame["subtlety_layer"].fillna("Non-HS").tolist()},
        comparisons=[("implicit_layer", "Implicit HS", "Explicit HS"), ("subtlety_layer", "Subtle", "Non-Subtle")],
        sources=dataset_checksums(files),
        description=f"ISHate original messages ({'+'.join(splits)}, no augmentations), cleaned text")


def latent_hatred(root: Root = None, pair_cap: int | None = DEFAULT_CAP, seed: int = DEFAULT_SEED) -> TextCollection:
    stage1, stage3 = latent.STAGE1, latent.STAGE3
    posts = _clean_texts(latent.read_stage(1, root), "post", stage1)
    implied = latent.read_stage(3, root)
    implied = implied[implied["post"].map(lambda v: isinstance(v, str) and v.strip() != "")
                      & implied["implied_statement"].map(lambda v: isinstance(v, str) and v.strip() != "")]
    rows = np.arange(len(implied))
    if pair_cap is not None and rows.size > pair_cap:
        rows = np.sort(np.random.default_rng(seed).choice(rows, size=pair_cap, replace=False))
    chosen = implied.iloc[rows]
    return TextCollection(
        name="latent_hatred", texts=[p.strip() for p in posts["post"]], groupings={"class": posts["class"].tolist()},
        comparisons=[("class", "implicit_hate", "explicit_hate"), ("class", "implicit_hate", "not_hate")],
        pairs={"post_vs_implied_statement": ([p.strip() for p in chosen["post"]],
                                             [s.strip() for s in chosen["implied_statement"]])},
        sources=dataset_checksums([stage1, stage3]),
        sampling={"pairs": {"cap": pair_cap, "seed": seed, "size_before": int(len(implied)),
                            "size_after": int(len(chosen))}},
        description="Latent Hatred stage-1 posts by class; stage-3 posts paired with their implied statements")


def sbic(root: Root = None) -> TextCollection:
    import pandas as pd

    files = ["sbic/datasets/sbf/SBIC.v2.agg.dev.csv", "sbic/datasets/sbf/SBIC.v2.agg.tst.csv"]
    frame = _clean_texts(pd.concat([read_frame(f, root) for f in files], ignore_index=True), "post", "sbic")
    offensive = np.where(frame["offensiveYN"] >= 0.5, "offensive", "not offensive")
    # hasBiasedImplication is 1 when the post has NO implied statement (see SOURCES.md).
    implication = np.where(frame["hasBiasedImplication"] == 0, "implied statement", "no implied statement")
    return TextCollection(
        name="sbic", texts=frame["post"].tolist(),
        groupings={"offensive": offensive.tolist(), "implication": implication.tolist()},
        comparisons=[("offensive", "offensive", "not offensive"),
                     ("implication", "implied statement", "no implied statement")],
        sources=dataset_checksums(files),
        description="SBIC v2 aggregated dev+test posts; offensive = mean offensiveYN >= 0.5")


def dghsd(root: Root = None) -> TextCollection:
    import pandas as pd

    files = ["dghsd/datasets/dynabench/db_dev.csv", "dghsd/datasets/dynabench/db_test.csv"]
    frame = _clean_texts(pd.concat([read_frame(f, root) for f in files], ignore_index=True), "text", "dghsd")
    return TextCollection(
        name="dghsd", texts=frame["text"].tolist(),
        groupings={"type": frame["type"].astype(str).tolist(), "label": frame["label"].astype(str).tolist()},
        comparisons=[("type", "animosity", "derogation"), ("label", "hate", "nothate")],
        sources=dataset_checksums(files),
        description="DynaHate filtered dev+test (texts of at most 44 tokens); animosity is the implicit type")


def toxigen(root: Root = None) -> TextCollection:
    files = sorted(f for f in manifest() if f.startswith("toxigen/demonstrations/") and f.endswith(".txt"))
    seen: set[tuple[str, str]] = set()
    texts, labels, targets = [], [], []
    for relative in files:
        stem = Path(relative).stem
        label, _, target = stem.partition("_")
        target = target.removesuffix("_sentences")
        for line in data_file(relative, root).read_text(encoding="utf-8").splitlines():
            text = line.strip()
            if text and (label, text) not in seen:  # neutral_muslim.txt duplicates neutral_muslim_sentences.txt
                seen.add((label, text))
                texts.append(text)
                labels.append(label)
                targets.append(target)
    return TextCollection(
        name="toxigen", texts=texts, groupings={"label": labels, "target": targets},
        comparisons=[("label", "hate", "neutral")], sources=dataset_checksums(files),
        description="ToxiGen seed demonstrations (hate_/neutral_ files), duplicate lines removed")


def davidson(root: Root = None) -> TextCollection:
    relative = "davidson/data/labeled_data.csv"
    frame = _clean_texts(read_frame(relative, root), "tweet", relative)
    names = {0: "hate", 1: "offensive", 2: "neither"}
    return TextCollection(
        name="davidson", texts=frame["tweet"].tolist(), groupings={"class": frame["class"].map(names).tolist()},
        comparisons=[("class", "hate", "neither")], sources=dataset_checksums([relative]),
        description="Davidson et al. 2017 tweets (class 0 hate, 1 offensive, 2 neither)")


def absa(root: Root = None) -> TextCollection:
    files = [f"absa_implicit/data/{domain}/{name}_Implicit_Labeled.xml"
             for domain, prefix in (("restaurants", "Restaurants"), ("laptops", "Laptops"))
             for name in (f"{prefix}_Train_v2", f"{prefix}_Test_Gold")]
    texts, sentiment, domains = [], [], []
    unlabelled = 0
    for relative in files:
        path = data_file(relative, root)
        try:
            tree = ElementTree.parse(path)
        except ElementTree.ParseError as error:
            raise DataError(f"{path}: invalid XML ({error})") from None
        for sentence in tree.getroot().iter("sentence"):
            text = (sentence.findtext("text") or "").strip()
            for term in sentence.iter("aspectTerm"):
                flag = term.get("implicit_sentiment")
                if flag is None:  # 166 terms carry no label upstream (mostly polarity "conflict")
                    unlabelled += 1
                    continue
                if flag not in ("True", "False"):
                    raise DataError(f"{path}: sentence {sentence.get('id')}: aspect term {term.get('term')!r}: "
                                    f"field 'implicit_sentiment' is {flag!r}, expected True or False")
                if text:
                    texts.append(text)
                    sentiment.append("implicit" if flag == "True" else "explicit")
                    domains.append(relative.split("/")[2])
    return TextCollection(
        name="absa", texts=texts, groupings={"sentiment": sentiment, "domain": domains},
        comparisons=[("sentiment", "implicit", "explicit")], sources=dataset_checksums(files),
        sampling={"aspect_terms_without_label_skipped": unlabelled},
        description="SemEval-2014 ABSA aspect terms labelled implicit/explicit sentiment (SCAPT); text = sentence")


BUILTINS: dict[str, Callable[..., TextCollection]] = {
    "ishate": ishate, "latent_hatred": latent_hatred, "sbic": sbic, "dghsd": dghsd, "toxigen": toxigen,
    "davidson": davidson, "absa": absa,
}
# Paper's names in Figures 5, 6 and 14 (for plots).
DISPLAY_NAMES = {"ishate": "ISHate", "latent_hatred": "Latent Hatred", "sbic": "SBIC", "dghsd": "DGHSD",
                 "toxigen": "ToxiGen (demos)", "davidson": "Davidson", "absa": "ABSA"}


def load_builtin(name: str, root: Root = None, cap: int | None = DEFAULT_CAP, seed: int = DEFAULT_SEED) -> TextCollection:
    """A built-in collection, sampled to at most ``cap`` texts per value of its first grouping (seeded)."""
    if name not in BUILTINS:
        raise PragmeterError(f"no built-in dataset {name!r}; choose one of {', '.join(BUILTINS)} (or give a file)")
    loader = BUILTINS[name]
    collection = loader(root, pair_cap=cap, seed=seed) if name == "latent_hatred" else loader(root)
    first = next(iter(collection.groupings), None)
    return sample_per_label(collection, first, cap, seed)


def load_collections(source: str, root: Root = None, column: str = "text", label_columns: list[str] | tuple = (),
                     pair_column: str | None = None, compare: list[str] | tuple = (), max_per_label: int | None = None,
                     seed: int = DEFAULT_SEED) -> list[TextCollection]:
    """What ``analyze profile --input`` names: a built-in set, ``all`` of them, or a user file (with its text,
    label and pair columns); built-in sets are capped at ``DEFAULT_CAP`` per label unless ``max_per_label``."""
    from pragmeter.datasets.collection import collection_from_file

    if source == "all" or source in BUILTINS:
        if label_columns or pair_column or compare:
            raise PragmeterError("label_column/pair_column/comparisons apply to files; built-in sets have their own")
        cap = max_per_label if max_per_label is not None else DEFAULT_CAP
        return [load_builtin(name, root, cap, seed) for name in (list(BUILTINS) if source == "all" else [source])]
    if Path(source).exists():  # the reader names what is wrong with it (a folder, unreadable...)
        return [collection_from_file(source, column, label_columns, pair_column, compare, max_per_label, seed)]
    raise PragmeterError(f"{source!r} is neither a file nor a built-in dataset ({', '.join(BUILTINS)}, all)")
