"""Helpers shared by the dataset loaders: the one tabular reader of upstream files, and their URLs."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pragmeter.data.root import data_file, manifest

if TYPE_CHECKING:  # imported when a file is read: building the CLI parser stays fast
    import pandas as pd


def upstream_urls(relatives: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Pinned upstream download URL of each data-root relative path (from the manifest)."""
    return {rel: manifest()[rel]["url"] for rel in relatives}


def read_frame(relative: str, root: str | os.PathLike | None = None, **options) -> pd.DataFrame:
    """A data-root table (checksum verified): parquet by its name, else CSV (``sep="\\t"`` for TSV); ``options``
    go to pandas (``dtype=str, keep_default_na=False`` reads every cell as text, empty cells as "")."""
    import pandas as pd

    path = data_file(relative, root)
    if ".parquet" in relative:
        return pd.read_parquet(path, **options)
    return pd.read_csv(path, **options)
