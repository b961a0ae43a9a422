"""``--model gguf:…``: registered here; the backend lives in :mod:`pragmeter.llm.backends.gguf`."""

from pragmeter.llm.backends.gguf import BACKEND  # noqa: F401
