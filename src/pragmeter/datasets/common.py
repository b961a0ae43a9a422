"""Helpers shared by the dataset loaders."""

from __future__ import annotations

from pragmeter.data.root import manifest


def upstream_urls(relatives: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Pinned upstream download URL of each data-root relative path (from the manifest)."""
    return {rel: manifest()[rel]["url"] for rel in relatives}
