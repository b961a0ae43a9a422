"""ISHate recipes (Ocampo et al., EACL 2023): Task A (``implicit``: non-hateful / explicit / implicit) and
Task B (``subtle``: non-hateful / non-subtle / subtle); train on train, select on dev, report on test.

Augmentation (training split only; dev and test are never touched), comma-separated in ``augment``:
- released sets from the data root (``ishate/data/<task>_task/aug_data``): rsa, aav, rne, ri, ra, eda, bt, gm,
  gm_revised, all (ALL = the union the authors recommend);
- pragmeter's offline implementations (local-rsa, local-aav, local-ri, local-rne, local-eda, or local-all for
  all five), grown from the train split's minority class until it balances the explicit / non-subtle class, as
  in the paper.

The released sets hold rewrites of dev and test posts too (in Task B's back-translations, 34 of
179 texts are closer to a dev or test post than to any training post, 3 of them verbatim; Task A's ALL holds 147
such texts), which would let a model see rewritten evaluation posts in training. They are dropped by default: an
added text goes when its word Jaccard with some dev or test post is at least ``HELDOUT_JACCARD`` and higher than
with every training post. ``keep_heldout_rewrites=True`` keeps them (the released files as the paper used them).
"""

from __future__ import annotations

import os


from pragmeter.classify.augment import AUGMENTERS, augment_minority, make_augmenter
from pragmeter.classify.examples import Examples, RecipeData
from pragmeter.data.root import dataset_checksums
from pragmeter.datasets.ishate import LABEL_NAMES, files, load_ishate, read_released, released_file
from pragmeter.errors import PragmeterError

HELDOUT_JACCARD = 0.5
RELEASED = ("rsa", "aav", "rne", "ri", "ra", "eda", "bt", "gm", "gm_revised", "all")
LOCAL_ALL = "local-all"
# Paper Table 3, F1 of the minority class on test: best overall, and DeBERTa without augmentation.
PAPER = {"implicit": {"best (HateBERT+ALL)": 0.529, "DeBERTa, no augmentation": 0.442},
         "subtle": {"best (USE+SVM+BT)": 0.548, "DeBERTa, no augmentation": 0.128}}


def parse_augment(spec: str | None) -> list[str]:
    names = [n.strip().lower() for n in (spec or "").split(",") if n.strip()]
    expanded = []
    for name in names:
        expanded.extend(AUGMENTERS if name == LOCAL_ALL else [name])
    unknown = [n for n in expanded if n not in RELEASED and n not in AUGMENTERS]
    if unknown:
        raise PragmeterError(f"unknown augmentation method(s) {', '.join(unknown)}; choose from "
                             f"{', '.join(RELEASED)}, {', '.join(AUGMENTERS)}, {LOCAL_ALL}")
    return list(dict.fromkeys(expanded))


def split_examples(task: str, split: str, root: str | os.PathLike | None) -> Examples:
    items = load_ishate(task, split, root)
    return Examples(texts=[i.text for i in items], labels=[i.label_name for i in items],
                    groups=[i.source for i in items])


def released_examples(task: str, method: str, root: str | os.PathLike | None) -> Examples:
    path = released_file(task, method)
    frame = read_released(task, method, root)
    names = LABEL_NAMES[task]
    labels = []
    for row, label in enumerate(frame["label"]):
        if int(label) not in (0, 1, 2):
            raise PragmeterError(f"{path}: row {row}: field 'label' is {label!r}, expected 0, 1 or 2")
        labels.append(names[int(label)])
    return Examples(texts=[str(t) for t in frame["text"]], labels=labels, groups=[f"aug:{method}"] * len(frame))


def heldout_rewrites(added: Examples, train: Examples, heldout: list[str],
                     threshold: float = HELDOUT_JACCARD) -> list[int]:
    """Indices of ``added`` texts written from a held-out post: word Jaccard with some ``heldout`` text at least
    ``threshold`` and higher than with every ``train`` text."""
    from pragmeter.metrics.overlap import max_word_jaccard

    nearest_heldout, _ = max_word_jaccard(added.texts, heldout)
    nearest_train, _ = max_word_jaccard(added.texts, train.texts)
    return [i for i, (h, t) in enumerate(zip(nearest_heldout, nearest_train)) if h >= threshold and h > t]


def build(task: str = "implicit", augment: str | None = None, seed: int = 0,
          root: str | os.PathLike | None = None, keep_heldout_rewrites: bool = False) -> RecipeData:
    if task not in LABEL_NAMES:
        raise PragmeterError(f"ISHate has no task {task!r}; choose implicit (Task A) or subtle (Task B)")
    methods = parse_augment(augment)
    original = split_examples(task, "train", root)
    train = original
    minority = LABEL_NAMES[task][2]
    read = [p for split in ("train", "dev", "test") for p in files(task, split)]
    val, test = split_examples(task, "dev", root), split_examples(task, "test", root)
    additions, dropped = {}, {}
    for method in methods:
        if method in RELEASED:
            extra = released_examples(task, method, root)
            read.append(released_file(task, method))
            if not keep_heldout_rewrites:
                leaked = set(heldout_rewrites(extra, original, val.texts + test.texts))
                dropped[method] = len(leaked)
                extra = extra.subset([i for i in range(len(extra)) if i not in leaked])
        else:
            extra = augment_minority(original, make_augmenter(method, root), minority, LABEL_NAMES[task][1], seed)
            extra.groups = [f"aug:{method}"] * len(extra)
        additions[method] = len(extra)
        train = train.extend(extra)
    if any(m in AUGMENTERS for m in methods):
        read += [f"ishate/ISHate/augmentation/words_lists/{n}.json"
                 for n in ("scalarity", "speculative", "special_tokens", "entities_list")]
    return RecipeData(
        name=f"ishate-{'a' if task == 'implicit' else 'b'}", labels=list(LABEL_NAMES[task]), input_kind="single",
        train=train, val=val, test=test,
        arguments={"task": task, "augment": ",".join(methods) or "none", "augmented_examples": additions,
                   **({"heldout_rewrites_dropped": dropped} if dropped else {}),
                   **({"heldout_rewrites_kept": True} if keep_heldout_rewrites and methods else {})},
        answer_words={label: label for label in LABEL_NAMES[task]},
        data_files=dataset_checksums(sorted(set(read))),
        description=f"ISHate Task {'A' if task == 'implicit' else 'B'} ({task}), augmentation: "
                    f"{', '.join(methods) or 'none'}",
        paper={"minority_f1": PAPER[task]},
    )
