"""Helpers shared by the dataset loaders: the one tabular reader of upstream files, and their URLs."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pragmeter.data.root import data_file, manifest
from pragmeter.errors import DataError

if TYPE_CHECKING:  # imported when a file is read: building the CLI parser stays fast
    import pandas as pd


def upstream_urls(relatives: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Pinned upstream download URL of each data-root relative path (from the manifest)."""
    return {rel: manifest()[rel]["url"] for rel in relatives}


def checked_split(dataset: str, split: str, splits: tuple[str, ...]) -> str:
    """``split`` when ``dataset`` has it, else a DataError listing the splits it has."""
    if split not in splits:
        raise DataError(f"{dataset} has no split {split!r}; choose one of {', '.join(splits)}")
    return split


def read_items(relative: str, root: str | os.PathLike | None, key: str) -> tuple[os.PathLike, list]:
    """(path, the non-empty list under ``key``) of a data-root JSON object (checksum verified)."""
    from pragmeter.io import read_json

    path = data_file(relative, root)
    items = read_json(path, dict, f'{{"{key}": [...]}}').get(key)
    if not isinstance(items, list) or not items:
        raise DataError(f'{path}: expected a non-empty "{key}" list')
    return path, items


def read_columns(relative: str, root: str | os.PathLike | None, columns: tuple[str, ...], **options) -> pd.DataFrame:
    """A data-root table as text cells (empty cells are ""), refused in one line when it lacks one of ``columns``."""
    from pragmeter.io import require_column

    frame = read_frame(relative, root, dtype=str, keep_default_na=False, **options)
    for column in columns:
        require_column(frame, column, relative)
    return frame


def read_frame(relative: str, root: str | os.PathLike | None = None, **options) -> pd.DataFrame:
    """A data-root table (checksum verified): parquet by its name, else CSV (``sep="\\t"`` for TSV); ``options``
    go to pandas (``dtype=str, keep_default_na=False`` reads every cell as text, empty cells as "")."""
    import pandas as pd

    path = data_file(relative, root)
    if ".parquet" in relative:
        return pd.read_parquet(path, **options)
    return pd.read_csv(path, **options)
