"""The YAML front matter of the model cards pragmeter writes (README.md of every model folder), in the fields the
Hugging Face Hub and its tools read: ``license``, ``base_model``, ``datasets``, ``pipeline_tag``, ``metrics``,
``library_name`` and ``tags``.

Values are written as JSON strings (valid YAML scalars), so a name read from a folder or a data file cannot break the
block. Licences are the Hub's identifiers (:func:`licence_id`); a licence it has none for is ``other``, and several
different ones (a model trained on sources under several licences) are ``other`` too, the card's text naming each.
"""

from __future__ import annotations

import json
import re

# Licence names as the cards and data manifests write them -> the Hub's licence identifiers
LICENCE_IDS = {"apache-2.0": "apache-2.0", "apache 2.0": "apache-2.0", "mit": "mit", "cc by 4.0": "cc-by-4.0",
               "cc by-sa 4.0": "cc-by-sa-4.0", "cc by-nc 4.0": "cc-by-nc-4.0", "cc by-nc-sa 4.0": "cc-by-nc-sa-4.0",
               "cc0 1.0": "cc0-1.0", "cc0": "cc0-1.0", "bsl-1.0": "bsl-1.0", "boost 1.0": "bsl-1.0",
               "gpl-3.0": "gpl-3.0", "gemma terms of use": "gemma"}
# Packaged encoders (pragmeter.encoders.registry's canonical names) -> their Hub names
BASE_MODELS = {"all-MiniLM-L6-v2": "sentence-transformers/all-MiniLM-L6-v2",
               "all-mpnet-base-v2": "sentence-transformers/all-mpnet-base-v2",
               "embeddinggemma-300m": "google/embeddinggemma-300m"}
FIELDS = ("license", "base_model", "datasets", "pipeline_tag", "metrics", "library_name", "tags")


def licence_id(name: str | None) -> str:
    """The Hub's identifier of a licence named as pragmeter's cards name it (``CC BY-SA 4.0``, ``Apache-2.0``…,
    a note in brackets or after a semicolon ignored); ``other`` for one it does not know."""
    if not isinstance(name, str):
        return "other"
    plain = re.split(r"[;(]", name, maxsplit=1)[0].strip().lower()
    plain = re.sub(r"\s+", " ", plain).removeprefix("the ")
    return LICENCE_IDS.get(plain, LICENCE_IDS.get(plain.split(" (")[0], "other"))


def is_non_commercial(name: str) -> bool:
    """Whether a licence, named as the data manifest and the datasets name them (``CC BY-NC-SA 4.0``…), forbids
    commercial use: a model trained on such data inherits that."""
    return isinstance(name, str) and "NC" in name


def combined_licence(names) -> str:
    """One identifier for data under the licences ``names``: theirs when all are the same, else ``other``."""
    ids = {licence_id(name) for name in names}
    return ids.pop() if len(ids) == 1 else "other"


def base_model_id(encoder: str | None) -> str | None:
    """The Hub name of a base encoder: a packaged one's, a name already of the form ``owner/model`` as it is; None
    for a local folder (no Hub name)."""
    if not isinstance(encoder, str) or not encoder:
        return None
    packaged = {**{name.lower(): hub for name, hub in BASE_MODELS.items()},
                **{hub.lower(): hub for hub in BASE_MODELS.values()}}
    if encoder.lower() in packaged:
        return packaged[encoder.lower()]
    return encoder if re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", encoder) else None


def front_matter(license: str, base_model: str | None = None, datasets=(), pipeline_tag: str | None = None,
                 metrics=(), library_name: str | None = None, tags=("pragmeter",)) -> str:
    """The ``---``-fenced YAML block that opens a model card; empty fields are left out."""
    values = {"license": license, "base_model": base_model, "datasets": list(dict.fromkeys(datasets)),
              "pipeline_tag": pipeline_tag, "metrics": list(dict.fromkeys(metrics)), "library_name": library_name,
              "tags": list(dict.fromkeys(tags))}
    lines = ["---"]
    for key in FIELDS:
        value = values[key]
        if isinstance(value, list):
            if value:
                lines += [f"{key}:", *(f"- {json.dumps(str(item))}" for item in value)]
        elif value:
            lines.append(f"{key}: {json.dumps(str(value))}")
    return "\n".join([*lines, "---", ""]) + "\n"


def with_front_matter(card: str, **metadata) -> str:
    """``card`` opened by :func:`front_matter` of ``metadata``."""
    return front_matter(**metadata) + card
