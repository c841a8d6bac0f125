"""The parts of the layers below the engine that nav's front ends use, offered by the engine.

The front ends (:mod:`navigator.frontends`) import the engine only: its verbs
(:mod:`navigator.verbs`, :mod:`navigator.api`), result types (:mod:`navigator.results`),
errors (:mod:`navigator.errors`) and, from here, the few things of ``storage``, ``semantic``
and ``lsp`` that a front end needs for itself:

- the language-server pool the daemon and ``nav lsp`` own and share between roots
  (:class:`ServerPool`, :data:`DEFAULT_SERVER_IDLE_S`), and which server a language uses
  (:func:`server_key`);
- what ``nav lsp`` needs for unsaved buffers: the editor's positions (:func:`from_lsp`,
  :func:`to_lsp`), a file's language and parse (:func:`detect_language`, :func:`parse_source`,
  :class:`ParsedFile`), and the index's rows the exact leg reads (:class:`SymbolRow`,
  :class:`RefRow`);
- what languages an index holds, read before the rest of nav is imported (:func:`language_sizes`);
- the model's thread budget (:func:`set_thread_limit`), secret redaction for what is printed
  (:func:`redact`), and nav's own packages (:data:`PACKAGES`: the daemon stamps their code).

A separate module rather than :mod:`navigator` itself, whose import must load nothing (every
``nav`` process imports it first; the CLI's fast path is timed against ``rg``). Names load on
first use (PEP 562): a front end pays only for what it touches, e.g. ``redact`` does not bring
in the language-server client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lsp.launch import SERVER_IDLE_S as DEFAULT_SERVER_IDLE_S
    from lsp.launch import prelaunch
    from lsp.pool import LanguageServers, ServerPool
    from lsp.positions import from_lsp, to_lsp
    from lsp.registry import Availability, server_key
    from semantic.embed import set_thread_limit
    from semantic.languages import detect_language
    from semantic.parse import parse_source
    from storage.db import RefRow, SymbolRow
    from storage.model import ParsedFile
    from storage.peek import language_sizes, target_files
    from storage.redact import redact

__all__ = [
    "DEFAULT_SERVER_IDLE_S",
    "PACKAGES",
    "Availability",
    "LanguageServers",
    "ParsedFile",
    "RefRow",
    "ServerPool",
    "SymbolRow",
    "detect_language",
    "language_sizes",
    "from_lsp",
    "parse_source",
    "prelaunch",
    "redact",
    "server_key",
    "set_thread_limit",
    "target_files",
    "to_lsp",
]

PACKAGES = ("navigator", "semantic", "storage", "lsp")
"""nav's own top-level packages (the engine and the layers below it)."""

_WHERE: dict[str, tuple[str, str]] = {
    "DEFAULT_SERVER_IDLE_S": ("lsp.launch", "SERVER_IDLE_S"),  # not lsp.pool: no multilspy before a launch
    "LanguageServers": ("lsp.pool", "LanguageServers"),
    "ServerPool": ("lsp.pool", "ServerPool"),
    "prelaunch": ("lsp.launch", "prelaunch"),
    "from_lsp": ("lsp.positions", "from_lsp"),
    "to_lsp": ("lsp.positions", "to_lsp"),
    "Availability": ("lsp.registry", "Availability"),
    "server_key": ("lsp.registry", "server_key"),
    "set_thread_limit": ("semantic.embed", "set_thread_limit"),
    "detect_language": ("semantic.languages", "detect_language"),
    "parse_source": ("semantic.parse", "parse_source"),
    "RefRow": ("storage.db", "RefRow"),
    "SymbolRow": ("storage.db", "SymbolRow"),
    "ParsedFile": ("storage.model", "ParsedFile"),
    "language_sizes": ("storage.peek", "language_sizes"),
    "target_files": ("storage.peek", "target_files"),
    "redact": ("storage.redact", "redact"),
}
"""Each name offered here: the module that defines it, and its name there."""


def __getattr__(name: str) -> object:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'navigator.public' has no attribute {name!r}")
    value = getattr(importlib.import_module(where[0]), where[1])
    globals()[name] = value  # loaded once
    return value
