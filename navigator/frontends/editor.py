"""``nav lsp``: a pygls language server over stdio that an editor adds like any other.

Standard requests are answered by nav's engine, which routes them to the managed
language servers, so one server gives an editor navigation in every language nav
supports:

- ``workspace/symbol``: names first (the symbol table), then meaning (search), so
  "retry the ERP call" finds code too;
- ``textDocument/definition``, ``textDocument/references``, ``textDocument/hover``.

Custom requests: ``nav/find`` ``{query, limit?}``, ``nav/search`` ``{text, k?}``,
``nav/refs`` ``{name}``, ``nav/status`` ``{}``; they return nav's result objects as JSON.

A nav error becomes a JSON-RPC error with nav's code and message; a file outside the
workspace is refused with invalid-params; a malformed request costs that request only.
Answers come from the files on disk (unsaved editor buffers are not seen).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.server import LanguageServer

from navigator.confine import confine, read_text_inside
from navigator.results import Hit, Symbol, to_data
from storage.errors import NavError, UsageError

log = logging.getLogger("nav.editor")

INVALID_PARAMS = -32602

_KINDS: dict[str, types.SymbolKind] = {
    "function": types.SymbolKind.Function,
    "method": types.SymbolKind.Method,
    "class": types.SymbolKind.Class,
    "struct": types.SymbolKind.Struct,
    "interface": types.SymbolKind.Interface,
    "enum": types.SymbolKind.Enum,
    "trait": types.SymbolKind.Interface,
    "type": types.SymbolKind.TypeParameter,
    "constant": types.SymbolKind.Constant,
    "module": types.SymbolKind.Module,
    "field": types.SymbolKind.Field,
}


class NavRpcError(JsonRpcException):
    CODE = -32000
    MESSAGE = "nav error"


def _rpc_error(err: NavError) -> NavRpcError:
    return NavRpcError(message=str(err), code=err.rpc_code, data={"type": type(err).__name__})  # type: ignore[no-untyped-call]


class NavLanguageServer(LanguageServer):
    """Holds one Navigator for the workspace root, made on first use."""

    def __init__(self, nav_factory: Any = None) -> None:
        super().__init__("nav", "0.1.0")
        self._nav: Any = None
        self._nav_factory = nav_factory

    @property
    def root(self) -> Path:
        root = self.workspace.root_path if self.workspace else None
        if not root:
            raise UsageError("the client sent no workspace root (rootUri); open a folder")
        return Path(root).resolve()

    @property
    def nav(self) -> Any:
        if self._nav is None:
            if self._nav_factory is not None:
                self._nav = self._nav_factory(self.root)
            else:
                from navigator.api import Navigator

                self._nav = Navigator(self.root)
        return self._nav

    def rel(self, uri: str) -> str:
        """Root-relative path of a ``file://`` URI; refuses anything outside the workspace."""
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            raise UsageError(f"only file:// URIs are supported, got `{uri}`")
        return confine(self.root, unquote(parsed.path))  # the one check every front end uses

    def uri(self, rel: str) -> str:
        return (self.root / rel).as_uri()

    def line_text(self, rel: str, line: int) -> str:
        text = read_text_inside(self.root, rel)  # never outside the workspace
        lines = text.splitlines() if text is not None else []
        return lines[line - 1] if 1 <= line <= len(lines) else ""

    def position_query(self, uri: str, pos: types.Position) -> str:
        from lsp.positions import from_lsp

        rel = self.rel(uri)
        line, col = from_lsp(self.line_text(rel, pos.line + 1), pos.line, pos.character)
        return f"{rel}:{line}:{col}"

    def location(
        self, path: str, line: int, col: int, end_line: int | None = None, end_col: int | None = None
    ) -> types.Location:
        from lsp.positions import to_lsp

        start = to_lsp(self.line_text(path, line), line, col)
        el = end_line if end_line is not None else line
        ec = end_col if end_col is not None else col
        end = to_lsp(self.line_text(path, el), el, ec) if (el, ec) != (line, col) else start
        return types.Location(
            uri=self.uri(path),
            range=types.Range(start=types.Position(*start), end=types.Position(*end)),
        )


def _guard(fn: Any) -> Any:
    """Run a handler; nav errors and bad params become JSON-RPC errors, never a dead server."""

    def wrapper(ls: NavLanguageServer, params: Any) -> Any:
        try:
            return fn(ls, params)
        except NavError as err:
            raise _rpc_error(err) from None
        except (AttributeError, TypeError, KeyError, ValueError) as err:
            raise NavRpcError(message=f"invalid params: {err}", code=INVALID_PARAMS) from None  # type: ignore[no-untyped-call]

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _param(params: Any, name: str, default: Any = None) -> Any:
    if isinstance(params, dict):
        return params.get(name, default)
    return getattr(params, name, default)


def _string_param(params: Any, method: str, name: str) -> str:
    value = _param(params, name)
    if not isinstance(value, str):
        raise UsageError(f"{method} needs a string `{name}`, got {value!r}")
    return value


def build_server(nav_factory: Any = None) -> NavLanguageServer:
    server = NavLanguageServer(nav_factory)

    @server.feature(types.WORKSPACE_SYMBOL)
    @_guard
    def workspace_symbol(
        ls: NavLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation]:
        query = (params.query or "").strip()
        if not query:
            return []
        out: list[types.SymbolInformation] = []
        seen: set[tuple[str, int]] = set()
        for s in ls.nav.symbols(query, limit=50).items:
            sym: Symbol = s
            seen.add((sym.path, sym.line))
            out.append(
                types.SymbolInformation(
                    name=sym.qualified_name,
                    kind=_KINDS.get(sym.kind, types.SymbolKind.Variable),
                    location=ls.location(sym.path, sym.line, sym.col, sym.line, sym.col + len(sym.name)),
                    container_name=sym.container,
                )
            )
        if " " in query or len(out) < 5:  # then meaning: a phrase finds code by what it does
            try:
                hits = ls.nav.search(query, k=20).items
            except NavError as err:
                log.warning("workspace/symbol search leg failed: %s", err)
                hits = ()
            for h in hits:
                if (h.path, h.start_line) in seen:
                    continue
                seen.add((h.path, h.start_line))
                out.append(
                    types.SymbolInformation(
                        name=h.symbol or f"{h.path}:{h.start_line}",
                        kind=types.SymbolKind.Namespace if not h.symbol else types.SymbolKind.Function,
                        location=ls.location(h.path, h.start_line, 1, h.end_line, 1),
                        container_name=f"search: {query}",
                    )
                )
        return out

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @_guard
    def definition(ls: NavLanguageServer, params: types.DefinitionParams) -> list[types.Location]:
        query = ls.position_query(params.text_document.uri, params.position)
        hits: tuple[Hit, ...] = ls.nav.definition(query).items
        return [ls.location(h.path, h.line, h.col, h.end_line, h.end_col) for h in hits]

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    @_guard
    def references(ls: NavLanguageServer, params: types.ReferenceParams) -> list[types.Location]:
        query = ls.position_query(params.text_document.uri, params.position)
        include_decl = bool(params.context and params.context.include_declaration)
        hits: tuple[Hit, ...] = ls.nav.references(query).items
        return [
            ls.location(h.path, h.line, h.col, h.end_line, h.end_col)
            for h in hits
            if include_decl or not h.is_definition
        ]

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @_guard
    def hover(ls: NavLanguageServer, params: types.HoverParams) -> types.Hover | None:
        query = ls.position_query(params.text_document.uri, params.position)
        items = ls.nav.hover(query).items
        if not items:
            return None
        text = "\n\n---\n\n".join(str(getattr(i, "text", i)) for i in items)
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature("nav/find")
    @_guard
    def nav_find(ls: NavLanguageServer, params: Any) -> Any:
        query = _string_param(params, "nav/find", "query")
        return to_data(ls.nav.query(query, limit=int(_param(params, "limit", 20))))

    @server.feature("nav/search")
    @_guard
    def nav_search(ls: NavLanguageServer, params: Any) -> Any:
        text = _string_param(params, "nav/search", "text")
        return to_data(ls.nav.search(text, k=int(_param(params, "k", 10))))

    @server.feature("nav/refs")
    @_guard
    def nav_refs(ls: NavLanguageServer, params: Any) -> Any:
        return to_data(ls.nav.references(_string_param(params, "nav/refs", "name")))

    @server.feature("nav/status")
    @_guard
    def nav_status(ls: NavLanguageServer, params: Any) -> Any:
        return to_data(ls.nav.status())

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: NavLanguageServer, params: Any) -> None:
        if ls._nav is not None:
            closer = getattr(ls._nav, "shutdown", None) or getattr(ls._nav, "close", None)
            if callable(closer):
                closer()

    return server


def serve_stdio(nav_factory: Any = None) -> None:
    """Serve over stdio; ``nav_factory(root)`` makes the engine (default: an in-process Navigator)."""
    build_server(nav_factory).start_io()
