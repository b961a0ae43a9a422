"""Chat backends by name.

``--model NAME[:TARGET]`` loads the module ``pragmeter.llm.backends.<NAME with - as _>``, which must define
``BACKEND``: a :class:`~pragmeter.llm.backends.base.ChatBackend` subclass whose ``from_args(target, args)``
builds it from the part after the colon and the ``--model-args`` pairs. Adding a backend is one new module; nothing
else changes. A backend that lives in a higher layer (``local:PATH``, a fine-tuned classifier from ``classify/``) is
named in :data:`MODULES` (backend name -> the module that defines its ``BACKEND``), imported only when that backend is
asked for: ``load_backend("local:…")`` works from any code, and ``llm/`` imports nothing of that layer.
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


# Backends defined outside this package: name -> the module that defines its BACKEND (imported when first asked for).
MODULES: dict[str, str] = {"local": "pragmeter.classify.backend"}


def available_backends() -> list[str]:
    """Backend names: one per module of this package (the module defines BACKEND), and those of :data:`MODULES`."""
    import pkgutil

    skip = {"base"}
    modules = {m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__) if m.name not in skip}
    return sorted(modules | set(MODULES))


def backend_class(name: str) -> type[ChatBackend]:
    """The ChatBackend class of backend ``name``; a PragmeterError naming the available ones for an unknown name."""
    module_name = name.replace("-", "_")
    if name in MODULES:
        return importlib.import_module(MODULES[name]).BACKEND
    if not re.fullmatch(r"[a-z][a-z0-9_]*", module_name):
        raise PragmeterError(f"unknown model backend {name!r}")
    try:
        module = importlib.import_module(f"pragmeter.llm.backends.{module_name}")
    except ModuleNotFoundError as error:
        if error.name != f"pragmeter.llm.backends.{module_name}":
            raise
        raise PragmeterError(f"unknown model backend {name!r}; available: {', '.join(available_backends())}") from None
    return module.BACKEND


def load_backend(spec: str, args: dict[str, str]) -> ChatBackend:
    """The backend ``NAME[:TARGET]`` names, built from ``TARGET`` and the model arguments ``args``."""
    name, _, target = spec.partition(":")
    return backend_class(name).from_args(target or None, dict(args))


__all__ = ["MODULES", "ChatBackend", "Completion", "available_backends", "backend_class", "load_backend",
           "parse_model_args"]
