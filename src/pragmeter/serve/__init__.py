"""ImpScore as an HTTP service with a web page (extra ``serve``): ``pragmeter serve`` or ``create_app(model)``."""

from __future__ import annotations

__all__ = ["create_app"]


def __getattr__(name: str):
    if name == "create_app":  # lazy: importing the package must not import FastAPI or torch
        from pragmeter.serve.app import create_app

        return create_app
    raise AttributeError(name)
