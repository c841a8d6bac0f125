"""Managed language servers: registry, sessions on multilspy's client, the pool, and
position conversion. Depends on nothing of nav's but ``storage`` (never ``semantic``).

The names below load on first use: importing :mod:`lsp.registry` or :mod:`lsp.launch` must not
import multilspy (:mod:`lsp.pool` does), so that a daemon can launch its servers first."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp.pool import Location, LspAnswer, Position, ServerPool
    from lsp.positions import from_lsp, to_lsp

__all__ = ["Location", "LspAnswer", "Position", "ServerPool", "from_lsp", "to_lsp"]

_WHERE = {
    "Location": "lsp.pool",
    "LspAnswer": "lsp.pool",
    "Position": "lsp.pool",
    "ServerPool": "lsp.pool",
    "from_lsp": "lsp.positions",
    "to_lsp": "lsp.positions",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'lsp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
