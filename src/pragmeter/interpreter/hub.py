"""Where an interpreter's folder comes from: a model folder path, the name of one packaged with pragmeter (the
registry :data:`pragmeter.packaged.INTERPRETERS`, default included) or a Hugging Face Hub name (``owner/model``),
downloaded once into the Hugging Face cache with its safetensors weights and tokenizer files only."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pragmeter.errors import PragmeterError
from pragmeter.packaged import INTERPRETERS

# The packaged interpreters, the default and the variable that names another (pragmeter.packaged)
MODELS_DIR, DEFAULT_INTERPRETER, DEFAULT_ENV = INTERPRETERS.folder, INTERPRETERS.default, INTERPRETERS.env
# The packaged MiniLM interpreter beside the (mpnet) default: a fifth of its parameters, faster, less accurate
FAST_INTERPRETER = "interpreter-minilm-choice"
HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")  # owner/model, as the Hub spells repository names
# What an interpreter needs of a Hub repository (weights only as safetensors; never pickles)
HUB_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
             "vocab.txt", "vocab.json", "merges.txt", "spm.model", "spiece.model", "sentencepiece.bpe.model",
             "tokenizer.model", "added_tokens.json")


def shipped_interpreters() -> list[str]:
    """The packaged interpreters' names, sorted."""
    return INTERPRETERS.names()


def resolve_interpreter(name: str | os.PathLike | None) -> Path:
    """The folder of a model folder path, a packaged interpreter's name or a Hub name (``owner/model``); None:
    ``$PRAGMETER_INTERPRETER``, else the packaged default."""
    folder = INTERPRETERS.locate(name)
    if folder is not None:
        return folder
    name = INTERPRETERS.default_name() if name is None else name
    if HUB_NAME.fullmatch(str(name)) and not Path(name).expanduser().exists():
        return hub_folder(str(name))
    names = ", ".join(shipped_interpreters()) or "none ships with this version: train one with `pragmeter " \
                                                   "classifier train inli` and pass its folder"
    raise PragmeterError(f"no interpreter at {str(name)!r}: give a model folder or a packaged name ({names})")


def hub_folder(name: str) -> Path:
    """The local copy of the Hub model ``name`` (``owner/model``): its config, safetensors weights and tokenizer
    files, downloaded once into the Hugging Face cache (``$HF_HOME``); a PragmeterError in one line without a
    connection or for an unknown name."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, allow_patterns=list(HUB_FILES)))
    except Exception as error:  # noqa: BLE001  (huggingface_hub's errors: offline, unknown name, refused)
        from pragmeter.classify.model import first_line

        raise PragmeterError(f"no interpreter at {name!r}: not a local folder or packaged name, and the Hugging Face "
                             f"Hub did not give it ({first_line(error)})") from None
