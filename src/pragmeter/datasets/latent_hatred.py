"""Latent Hatred (ElSherief et al., EMNLP 2021): stage-1 posts with their class, stage-3 implicit posts with the
implied statement annotators wrote."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pragmeter.datasets.common import read_frame

if TYPE_CHECKING:  # pandas is imported where files are read: `pragmeter --help` stays fast
    import pandas as pd

FOLDER = "implicit_hate/data/implicit-hate-corpus/"
STAGE1 = FOLDER + "implicit_hate_v1_stg1_posts.tsv"  # post, class
STAGE3 = FOLDER + "implicit_hate_v1_stg3_posts.tsv"  # post, implied_statement (target, …)


def read_stage(stage: int, root: str | os.PathLike | None = None, **options) -> pd.DataFrame:
    """The stage-1 or stage-3 file as a table (``options`` as for :func:`read_frame`)."""
    return read_frame({1: STAGE1, 3: STAGE3}[stage], root, sep="\t", **options)
