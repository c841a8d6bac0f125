"""Managed language servers: registry, sessions on multilspy's client, the pool, and
position conversion. Depends on nothing of nav's but ``storage`` (never ``semantic``)."""

from lsp.pool import Location, LspAnswer, Position, ServerPool
from lsp.positions import from_lsp, to_lsp

__all__ = ["Location", "LspAnswer", "Position", "ServerPool", "from_lsp", "to_lsp"]
