"""The answers ``nav lsp`` computes itself, from the index and the open buffers.

Owns the position conversion between the editor (0-based, UTF-16) and nav (1-based, code
points) checked against the document, the outline (``documentSymbol``), ``workspace/symbol``
(names from the symbol table and the buffers, then meaning from search), and the definition
fallback when no language server answers. Plain functions over a :class:`RootEngine`, run
off the protocol's loop by the handlers in :mod:`navigator.frontends.editor`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from navigator.confine import read_text_inside
from navigator.errors import NavError, UsageError
from navigator.frontends.editor_buffers import LineMap
from navigator.frontends.editor_engine import RootEngine
from navigator.frontends.editor_rpc import shorten
from navigator.public import detect_language, from_lsp, to_lsp
from navigator.results import Hit, Symbol

if TYPE_CHECKING:
    from navigator.frontends.editor_server import NavLanguageServer


log = logging.getLogger("nav.editor")

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


def nav_position(engine: RootEngine, rel: str, pos: types.Position) -> tuple[int, int]:
    """The editor's position (0-based, UTF-16) in nav's terms (1-based, code points),
    checked against the buffer (or the disk) it points into."""
    lines = engine.lines(rel)
    if pos.line > len(lines) or (pos.line == len(lines) and pos.character > 0):
        raise UsageError(
            f"line {pos.line} is outside `{shorten(rel)}`, which has {len(lines)} lines (0-based)"
        )
    text = lines[pos.line] if pos.line < len(lines) else ""
    return from_lsp(text, pos.line, pos.character)


def lsp_range(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> types.Range:
    def at(ln: int, c: int) -> types.Position:
        text = lines[ln - 1] if 1 <= ln <= len(lines) else ""
        return types.Position(*to_lsp(text, max(ln, 1), max(c, 1)))

    return types.Range(start=at(line, col), end=at(end_line, end_col))


class Lines:
    """Per-answer cache of each file's lines (buffer first)."""

    def __init__(self, engine: RootEngine) -> None:
        self.engine = engine
        self._cache: dict[str, list[str]] = {}

    def __call__(self, rel: str) -> list[str]:
        if rel not in self._cache:
            self._cache[rel] = self.engine.lines(rel)
        return self._cache[rel]


def hit_location(engine: RootEngine, lines: Lines, hit: Hit) -> types.Location:
    end_line = hit.end_line if hit.end_line is not None else hit.line
    end_col = hit.end_col if hit.end_col is not None else hit.col
    return types.Location(
        uri=(engine.root / hit.path).as_uri(),
        range=lsp_range(lines(hit.path), hit.line, hit.col, end_line, end_col),
    )


def file_language(engine: RootEngine, rel: str) -> str:
    return engine.table.file_language(rel) or detect_language(rel) or ""


def is_possible(hit: Hit) -> bool:
    return "possible" in (hit.kind or "") or "possible" in hit.provenance


def document_symbols(engine: RootEngine, rel: str) -> list[types.DocumentSymbol]:
    """The outline of ``rel``, nested by span: from its buffer when open, else the index
    (else a parse of the disk's text, for a file the index does not hold yet)."""
    rows = engine.table.symbols_in_file(rel)
    if not rows and engine.buffers.text_of(rel) is None:
        from navigator.public import parse_source

        text = engine.text(rel)
        defs = list(parse_source(rel, text, detect_language(rel, text)).symbols) if text else []
    else:
        defs = [r.definition for r in rows]
    lines = engine.lines(rel)
    defs.sort(key=lambda d: (d.span.start_line, d.span.start_col, -d.span.end_line, -d.span.end_col))
    roots: list[types.DocumentSymbol] = []
    stack: list[tuple[Any, types.DocumentSymbol]] = []
    for d in defs:
        sym = types.DocumentSymbol(
            name=d.name,
            detail=d.signature or None,
            kind=_KINDS.get(d.kind, types.SymbolKind.Variable),
            range=lsp_range(lines, d.span.start_line, d.span.start_col, d.span.end_line, d.span.end_col),
            selection_range=lsp_range(
                lines,
                d.name_span.start_line,
                d.name_span.start_col,
                d.name_span.end_line,
                d.name_span.end_col,
            ),
            children=[],
        )
        while stack and not _contains(stack[-1][0].span, d.span):
            stack.pop()
        if stack:
            assert stack[-1][1].children is not None
            stack[-1][1].children.append(sym)
        else:
            roots.append(sym)
        stack.append((d, sym))
    return roots


def _contains(outer: Any, inner: Any) -> bool:
    return (outer.start_line, outer.start_col) <= (inner.start_line, inner.start_col) and (
        inner.end_line,
        inner.end_col,
    ) <= (outer.end_line, outer.end_col)


def _matches(query: str, name: str) -> bool:
    q, n = query.lower(), name.lower()
    return q in n or (len(q) >= 3 and _subsequence(q, n))


def _subsequence(needle: str, hay: str) -> bool:
    it = iter(hay)
    return all(ch in it for ch in needle)


def workspace_symbols(ls: NavLanguageServer, query: str) -> list[types.SymbolInformation]:
    """Names first (the symbol table; open buffers' own symbols), then meaning (search)."""
    out: list[types.SymbolInformation] = []
    for root in ls.folders():
        engine = ls.engine_for_root(root)
        dirty = {rel for rel in engine.buffers.paths() if engine.buffers.dirty(rel)}
        seen: set[tuple[str, int]] = set()
        names: list[tuple[Any, str, int, int, int, str | None]] = []
        try:
            found: tuple[Symbol, ...] = engine.local.symbols(query, limit=50).items
        except NavError as err:
            log.warning("workspace/symbol name leg failed for %s: %s", root, err)
            found = ()
        for sym in found:
            if sym.path not in dirty:
                names.append((sym.kind, sym.qualified_name, 0, 0, 0, None))
                seen.add((sym.path, sym.line))
                out.append(
                    types.SymbolInformation(
                        name=sym.qualified_name,
                        kind=_KINDS.get(sym.kind, types.SymbolKind.Variable),
                        location=types.Location(
                            uri=(root / sym.path).as_uri(),
                            range=lsp_range(
                                engine.lines(sym.path), sym.line, sym.col, sym.line, sym.col + len(sym.name)
                            ),
                        ),
                        container_name=sym.container,
                    )
                )
        for rel in sorted(dirty):  # the buffer's symbols stand in for the index's
            lines = engine.lines(rel)
            for row in engine.table.symbols_in_file(rel):
                d = row.definition
                if _matches(query, d.name):
                    seen.add((rel, d.name_span.start_line))
                    out.append(
                        types.SymbolInformation(
                            name=d.qualified_name,
                            kind=_KINDS.get(d.kind, types.SymbolKind.Variable),
                            location=types.Location(
                                uri=(root / rel).as_uri(),
                                range=lsp_range(
                                    lines,
                                    d.name_span.start_line,
                                    d.name_span.start_col,
                                    d.name_span.start_line,
                                    d.name_span.end_col,
                                ),  # fmt: skip
                            ),
                            container_name=d.container,
                        )
                    )
        if " " in query or len(out) < 5:  # then meaning: a phrase finds code by what it does
            out += _search_symbols(engine, query, seen, dirty)
    return out


def _search_symbols(
    engine: RootEngine, query: str, seen: set[tuple[str, int]], dirty: set[str]
) -> list[types.SymbolInformation]:
    try:
        hits = engine.engine.search(query, k=20).items
    except NavError as err:
        log.warning("workspace/symbol search leg failed: %s", err)
        return []
    maps: dict[str, LineMap] = {}
    out: list[types.SymbolInformation] = []
    for h in hits:
        start, end = h.start_line, h.end_line
        if h.path in dirty:  # the index holds the disk's lines: move them to the buffer's
            if h.path not in maps:
                disk = read_text_inside(engine.root, h.path) or ""
                maps[h.path] = LineMap(disk, engine.text(h.path))
            s, e = maps[h.path].line(start), maps[h.path].line(end)
            if s is None:
                continue  # its first line was edited: the chunk is not there as indexed
            start, end = s, e if e is not None else s
        if (h.path, start) in seen:
            continue
        seen.add((h.path, start))
        lines = engine.lines(h.path)
        out.append(
            types.SymbolInformation(
                name=h.symbol or f"{h.path}:{start}",
                kind=types.SymbolKind.Function if h.symbol else types.SymbolKind.Namespace,
                location=types.Location(
                    uri=(engine.root / h.path).as_uri(), range=lsp_range(lines, start, 1, end, 1)
                ),
                container_name=f"search: {shorten(query, 60)}",
            )
        )
    return out


def definition_fallback(engine: RootEngine, rel: str, pos: types.Position) -> list[types.Location]:
    """No server answered: the symbol table's definitions of the name under the cursor."""
    line, col = nav_position(engine, rel, pos)
    lines = Lines(engine)
    text = lines(rel)[line - 1] if line - 1 < len(lines(rel)) else ""
    import re

    name = ""
    for m in re.finditer(r"[A-Za-z_$][\w$]*", text):
        if m.start() < col <= m.end() + 1:
            name = m.group()
            break
    if not name:
        return []
    out = []
    for row in engine.table.resolve(name):
        d = row.definition
        out.append(
            types.Location(
                uri=(engine.root / d.path).as_uri(),
                range=lsp_range(
                    lines(d.path),
                    d.name_span.start_line,
                    d.name_span.start_col,
                    d.name_span.end_line,
                    d.name_span.end_col,
                ),  # fmt: skip
            )
        )
    return out
