"""Chat backends by name.

``--model NAME[:TARGET]`` loads the module ``pragmeter.llm.backends.<NAME with - as _>``, which must define
``BACKEND``: a :class:`~pragmeter.llm.backends.base.ChatBackend` subclass whose ``from_args(target, args)``
builds it from the part after the colon and the ``--model-args`` pairs. Adding a backend is one new module; nothing
else changes. A backend that lives in a higher layer (``local:PATH``, a fine-tuned classifier from ``classify/``)
registers its class by name with :func:`register_backend` instead, so that ``llm/`` never imports that layer.
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


_REGISTERED: dict[str, type[ChatBackend]] = {}


def register_backend(name: str, backend: type[ChatBackend]) -> None:
    """Make ``--model NAME:TARGET`` build ``backend`` (its ``from_args``): the hook of backends defined outside llm/."""
    _REGISTERED[name] = backend


def available_backends() -> list[str]:
    """Backend names: one per module of this package (the module defines BACKEND), and the registered ones."""
    import pkgutil

    skip = {"base"}
    modules = {m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__) if m.name not in skip}
    return sorted(modules | set(_REGISTERED))


def load_backend(spec: str, args: dict[str, str]) -> ChatBackend:
    name, _, target = spec.partition(":")
    if name in _REGISTERED:
        return _REGISTERED[name].from_args(target or None, dict(args))
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


__all__ = ["ChatBackend", "Completion", "load_backend", "parse_model_args", "register_backend"]
