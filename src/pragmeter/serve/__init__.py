"""ImpScore as an HTTP service with a web page (extra ``serve``): ``pragmeter serve`` or ``create_app(model)``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pragmeter.errors import MissingExtra

__all__ = ["create_app", "run_server"]


def __getattr__(name: str):
    if name == "create_app":  # lazy: importing the package must not import FastAPI or torch
        from pragmeter.serve.app import create_app

        return create_app
    raise AttributeError(name)


def run_server(model: str | None, host: str, port: int, limits: Mapping[str, Any], **settings) -> None:
    """``pragmeter serve``: ``server.serve`` with the request limits that ``limits`` holds (keys named as the fields
    of ``limits.Limits``, others ignored) and ``settings`` (backend, precision, device, batching, log level); one
    line naming the 'serve' extra when it is not installed."""
    try:
        from pragmeter.serve.limits import Limits
        from pragmeter.serve.server import serve
    except ImportError as error:
        raise MissingExtra("serve", "pragmeter serve", f"{error.name} is missing") from None
    from dataclasses import fields

    serve(model, host, port, Limits(**{f.name: limits[f.name] for f in fields(Limits) if f.name in limits}),
          **settings)
