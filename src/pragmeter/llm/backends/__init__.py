"""Chat backends by name.

``--model NAME[:TARGET]`` loads the module ``pragmeter.llm.backends.<NAME with - as _>``, which must define
``BACKEND``: a :class:`~pragmeter.llm.backends.base.ChatBackend` subclass whose ``from_args(target, args)``
builds it from the part after the colon and the ``--model-args`` pairs. Adding a backend (e.g. ``local:PATH``)
is one new module; nothing else changes.
"""

from __future__ import annotations

import importlib
import re

from pragmeter.errors import PragmeterError
from pragmeter.llm.backends.base import ChatBackend, Completion


def parse_model_args(text: str | None) -> dict[str, str]:
    """``"a=1,b=x"`` -> {"a": "1", "b": "x"} (values may contain '=' but not ',')."""
    args: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in (text or "").split(","))):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise PragmeterError(f"model argument {pair!r} is not KEY=VALUE (separate pairs with commas)")
        args[key.strip()] = value.strip()
    return args


def available_backends() -> list[str]:
    """Backend names, one per module of this package (the module defines BACKEND)."""
    import pkgutil

    skip = {"base"}
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__) if m.name not in skip)


def load_backend(spec: str, args: dict[str, str]) -> ChatBackend:
    name, _, target = spec.partition(":")
    module_name = name.replace("-", "_")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", module_name):
        raise PragmeterError(f"unknown model backend {spec!r}")
    try:
        module = importlib.import_module(f"pragmeter.llm.backends.{module_name}")
    except ModuleNotFoundError as error:
        if error.name != f"pragmeter.llm.backends.{module_name}":
            raise
        raise PragmeterError(f"unknown model backend {name!r}; available: {', '.join(available_backends())}") from None
    return module.BACKEND.from_args(target or None, dict(args))


__all__ = ["ChatBackend", "Completion", "load_backend", "parse_model_args"]
