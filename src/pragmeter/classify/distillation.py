"""Distillation: a teacher classifier's probabilities on a recipe's training examples, the soft targets a student
trains on (``FineTuneConfig.soft_weight``: each pair's target is (1 - w) × its label + w × the teacher's
probabilities). The use it is made for: a small, fast interpreter (MiniLM) taught by a larger one (mpnet), which
knows more than INLI's hard labels say (how likely each wrong reading is). The teacher can also label the readings
of a recipe's choice items, an anchor that keeps each reading's own probabilities near the teacher's while the loss
over the readings' scores teaches their order (``FineTuneConfig.choice_anchor``).

The teacher is any classifier folder or packaged interpreter with the student's labels (in any order), opened as
every command opens one (:func:`pragmeter.classify.opening.open_classifier`), in fp32, so its probabilities do not
depend on the CPU. Labelling tens of thousands of pairs with a base-size teacher takes a while on a CPU: the
probabilities are kept in the work folder, chunk by chunk as they are made, under a name that holds the teacher's
content, the columns' order and the examples' inputs (not their labels), so an interrupted labelling continues where
it stopped and a rerun, or a run that labels the same pairs otherwise, reuses them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from pragmeter.classify.examples import Examples, RecipeData, run_fingerprint
from pragmeter.errors import PragmeterError

CHUNK = 2048  # examples labelled between two saves
DEFAULT_SOFT_WEIGHT = 0.5  # the teacher's share of each target where a teacher is given and no weight


def soft_weight(teacher, given: float | None) -> float:
    """The soft weight a run trains with: ``given``, else DEFAULT_SOFT_WEIGHT with a teacher and 0 without."""
    if given is not None:
        return given
    return DEFAULT_SOFT_WEIGHT if teacher else 0.0
FILE_PATTERN = "teacher-{key}.npy"


def teacher_key(folder: Path, examples: Examples, labels: list[str]) -> str:
    """What the kept probabilities are of: the teacher folder's content, the columns' order (``labels``) and every
    example's input (text and pair; its label is not read by the teacher, so runs that label the same pairs
    differently share one labelling)."""
    from pragmeter.encoders.fingerprint import folder_fingerprint

    inputs = run_fingerprint({"columns": list(labels)}, Examples(examples.texts, [""] * len(examples), examples.pairs))
    return hashlib.sha256(f"{folder_fingerprint(folder)}\n{inputs}".encode()).hexdigest()[:16]


def teacher_probabilities(teacher: str | os.PathLike, examples: Examples, labels: list[str], work_dir: Path,
                          batch_size: int = 64, progress: bool = True) -> np.ndarray:
    """The teacher's probabilities for ``examples`` (rows in their order, columns in ``labels`` order), made in
    chunks kept in ``work_dir`` (module notes); a PragmeterError when the teacher's labels are not ``labels``, it
    reads other inputs (pairs or single texts), or it answers with something that is not a probability."""
    from tqdm import tqdm

    from pragmeter.classify.opening import classifier_folder, open_classifier
    from pragmeter.io.atomic import atomic_path

    folder = classifier_folder(teacher)
    classifier, _ = open_classifier(folder, precision="fp32", progress=progress)
    if sorted(classifier.labels) != sorted(labels):
        raise PragmeterError(f"teacher {teacher}: its labels {list(classifier.labels)} are not the student's {labels}")
    if (classifier.settings.input_kind == "pair") != (examples.pairs is not None):
        raise PragmeterError(f"teacher {teacher}: it reads {classifier.settings.input_kind} inputs, the examples are "
                             f"{'pairs' if examples.pairs is not None else 'single texts'}")
    order = [list(classifier.labels).index(label) for label in labels]
    work_dir.mkdir(parents=True, exist_ok=True)
    path = work_dir / FILE_PATTERN.format(key=teacher_key(folder, examples, labels))
    done = _kept(path, len(labels))
    with tqdm(total=len(examples), initial=len(done), desc=f"teacher {folder.name}", unit="example",
              disable=not progress, dynamic_ncols=True) as bar:
        while len(done) < len(examples):
            rows = range(len(done), min(len(done) + CHUNK, len(examples)))
            chunk = classifier.probabilities([examples.texts[i] for i in rows],
                                             None if examples.pairs is None else [examples.pairs[i] for i in rows],
                                             batch_size)
            done = np.concatenate([done, np.asarray(chunk, dtype=np.float32)[:, order]])
            with atomic_path(path) as staging:
                with open(staging, "wb") as handle:
                    np.lib.format.write_array(handle, done, allow_pickle=False)
            bar.update(len(rows))
    if not (np.isfinite(done).all() and (done >= 0).all() and np.allclose(done.sum(axis=1), 1, atol=1e-3)):
        path.replace(path.with_suffix(".damaged"))
        raise PragmeterError(f"teacher {teacher}: its answers are not probabilities (rows of non-negative numbers "
                             f"summing to 1); {path} is set aside")
    return done


def _kept(path: Path, width: int) -> np.ndarray:
    """The probabilities kept at ``path`` so far: none where there is no such file or it is not one this module
    writes (read without pickles; a damaged one is set aside and made again)."""
    empty = np.zeros((0, width), dtype=np.float32)
    if not path.is_file():
        return empty
    try:
        kept = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        kept = None
    if kept is None or kept.dtype != np.float32 or kept.ndim != 2 or kept.shape[1] != width \
            or not np.isfinite(kept).all():
        path.replace(path.with_suffix(".damaged"))
        return empty
    return kept


def with_teacher(data: RecipeData, teacher: str | os.PathLike, work_dir: Path, batch_size: int = 64,
                 progress: bool = True, choice: bool = False) -> RecipeData:
    """``data`` with its training examples' soft targets from ``teacher`` (:func:`teacher_probabilities`), and the
    teacher named in its arguments, so the model's settings, card and resume digest record it; with ``choice``, its
    choice items' readings labelled too (``ChoiceExamples.soft``, the anchor of ``FineTuneConfig.choice_anchor``)."""
    from pragmeter.classify.opening import classifier_folder
    from pragmeter.encoders.fingerprint import folder_fingerprint

    folder = classifier_folder(teacher)
    rows = teacher_probabilities(folder, data.train, list(data.labels), work_dir, batch_size, progress)
    data.train.soft = [tuple(float(v) for v in row) for row in rows]
    if choice and data.choice is not None and len(data.choice):
        flat = iter(teacher_probabilities(folder, data.choice.reading_pairs(), list(data.labels), work_dir,
                                          batch_size, progress))
        data.choice.soft = [tuple(tuple(float(v) for v in next(flat)) for _ in options)
                            for options in data.choice.readings]
    data.arguments["teacher"] = {"model": str(teacher), "folder": folder.name,
                                 "content_sha256": folder_fingerprint(folder)}
    return data
