"""cAST chunking: a file's syntax tree split into chunks of about a budget of non-blank
characters along its nodes (siblings merged, big nodes split), each named after the symbol it
holds; the line-window fallback for files nav cannot parse. Pure; called by
:func:`semantic.parse.parse_source`.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tree_sitter import Node

from semantic.definitions import elixir_attribute
from semantic.syntax import SourceText, last_row
from storage.model import Chunk, ParsedFile, SymbolDef

log = logging.getLogger(__name__)

FALLBACK_WINDOW_LINES = 40
"""Line-window size used when no grammar handles a file."""
_STICKY_TYPES = frozenset(
    {
        "comment",
        "line_comment",
        "block_comment",
        "decorator",
        "attribute_item",
        "inner_attribute_item",
        "annotation",
        "marker_annotation",
        "attribute_list",
        "doc_comment",
        "haddock",
        "signature",  # Haskell: a type signature belongs with the equations after it
    }
)
_STICKY_ELIXIR_ATTRIBUTES = frozenset({"doc", "spec", "impl", "deprecated"})
"""``@doc "…"``, ``@spec …`` describe the ``def`` that follows them."""


def chunk_hash(text: str) -> str:
    """The content hash of a chunk's text (blake2b, 16 bytes, hex)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# --------------------------------------------------------------------------- chunking (cAST)


@dataclass(slots=True)
class _Unit:
    """Sibling nodes that share lines: the smallest thing the chunker moves around."""

    nodes: list[Node]
    first: int  # first row
    last: int  # last row
    sticky: bool = False  # must join the unit after it (comments, decorators, headers)

    @property
    def divisible(self) -> bool:
        return self.last > self.first and any(n.child_count for n in self.nodes)


def _units(nodes: Iterable[Node], header: bool) -> list[_Unit]:
    units: list[_Unit] = []
    for n in nodes:
        first, last = n.start_point[0], last_row(n)
        if units and first <= units[-1].last:
            u = units[-1]
            u.nodes.append(n)
            u.last = max(u.last, last)
            u.sticky = False
            continue
        units.append(_Unit([n], first, last, sticky=_is_sticky(n)))
    if header and len(units) > 1:
        head = units[0]
        if any(not n.is_named for n in head.nodes) and head.first == head.last:
            head.sticky = True
    return units


def _is_sticky(n: Node) -> bool:
    if n.type in _STICKY_TYPES:
        return True
    attr = elixir_attribute(n)  # Elixir's `@doc "…"`: (unary_operator "@" (call target: (identifier)))
    return attr is not None and attr[0] in _STICKY_ELIXIR_ATTRIBUTES


def _expand(unit: _Unit) -> list[Node]:
    out: list[Node] = []
    for n in unit.nodes:
        if n.child_count and last_row(n) > n.start_point[0]:
            out.extend(n.children)
        else:
            out.append(n)
    return out


_MAX_SPLIT_DEPTH = 150
"""Deeper than this (long call chains in generated code) a subtree is cut into line windows."""


class _Chunker:
    def __init__(self, src: SourceText, budget: int) -> None:
        self.src = src
        self.budget = budget
        self.ranges: list[tuple[int, int]] = []  # (first row, last row), in order

    def emit(self, first: int, last: int, slack: int = 0) -> None:
        """Add a chunk range; ``slack`` is what a closing brace may add over the budget."""
        if self.ranges and first <= self.ranges[-1][1]:
            first = self.ranges[-1][1] + 1
        if first > last:
            return
        if self.src.size(first, last) > self.budget + slack and last > first:
            self._windows(first, last)
            return
        self.ranges.append((first, last))

    def _windows(self, first: int, last: int) -> None:
        """Split an indivisible multi-line range into line windows that fit the budget."""
        start = first
        while start <= last:
            end = start
            while end < last and self.src.size(start, end + 1) <= self.budget:
                end += 1
            self.ranges.append((start, end))
            start = end + 1

    def split(self, units: Sequence[_Unit], prefix: int | None = None, depth: int = 0) -> None:
        """Greedy merge of sibling units; recurse into units that are too big.

        ``prefix`` is the first row of sticky lines (a header, comments) that must join
        the first group produced here.
        """
        size = self.src.size
        budget = self.budget
        cur: tuple[int, int, int] | None = None  # first row, last row, slack
        pending = prefix
        for i, u in enumerate(units):
            if u.sticky and i < len(units) - 1:
                if pending is None:
                    pending = u.first
                continue
            if CLOSERS_JOIN and cur is None and pending is None and _is_closer(u) and self.ranges:
                # the `end` / `}` of a node whose body was split: it joins the last chunk (it
                # was a chunk of its own, labelled with its container: see CLOSERS_JOIN)
                self.ranges[-1] = (self.ranges[-1][0], u.last)
                continue
            start = u.first if pending is None else pending
            if size(start, u.last) > budget and u.divisible and depth < _MAX_SPLIT_DEPTH:
                if cur is not None:
                    self.emit(*cur)
                    cur = None
                sub = _units(_expand(u), header=True)
                self.split(sub, start if start < u.first else None, depth + 1)
                pending = None
                continue
            if cur is not None and size(cur[0], u.last) <= budget + cur[2]:
                cur = (cur[0], u.last, cur[2])  # merge with the previous siblings
            elif cur is not None and pending is None and _is_closer(u):
                # a lone closing brace / `end` stays with what it closes, even over budget
                cur = (cur[0], u.last, cur[2] + size(u.first, u.last))
            else:
                if cur is not None:
                    self.emit(*cur)
                cur = (start, u.last, 0)
            pending = None
        if pending is not None:
            # trailing sticky lines with nothing after them
            last = units[-1].last if units else pending
            if cur is not None and size(cur[0], last) <= budget + cur[2]:
                cur = (cur[0], last, cur[2])
            else:
                if cur is not None:
                    self.emit(*cur)
                cur = (pending, last, 0)
        if cur is not None:
            self.emit(*cur)


CLOSERS_JOIN = True
"""A closing line left over after a split body (``end``, ``}``) joins the chunk before it. It
was a chunk of its own, labelled with its container: 173 of rails' 863 chunks, 107 of zod's
1,749 (bench/README.md, "Issue 9, fifth round")."""
NAMESPACE_SKIP = True
"""A chunk is named by what it defines, not by the namespaces around it: ``module Grape``
around ``module Validations`` around ``class ExactlyOneOfValidator`` names the chunk after the
class (its qualified name keeps the modules). A module holding functions still names it."""
_CONTAINER_KINDS = frozenset({"module", "class", "struct", "interface", "enum", "trait"})


def _is_closer(u: _Unit) -> bool:
    return u.first == u.last and all(not n.is_named for n in u.nodes)


def chunk_tree(
    root: Node, src: SourceText, path: str, language: str, budget: int, symbols: Sequence[SymbolDef]
) -> list[Chunk]:
    chunker = _Chunker(src, budget)
    if root.child_count == 0:
        ranges = _line_ranges(src, budget) if src.text.strip() else []
    else:
        chunker.split(_units(root.children, header=False))
        ranges = _trim(chunker.ranges, src.lines)
    return _make_chunks(ranges, src.lines, path, language, symbols)


def _trim(ranges: Iterable[tuple[int, int]], lines: Sequence[str]) -> list[tuple[int, int]]:
    """Drop blank lines at the edges of each range, and ranges that are all blank."""
    out: list[tuple[int, int]] = []
    for first, last in ranges:
        last = min(last, len(lines) - 1)
        while first <= last and not lines[first].strip():
            first += 1
        while last >= first and not lines[last].strip():
            last -= 1
        if first <= last:
            out.append((first, last))
    return out


def _make_chunks(
    ranges: Iterable[tuple[int, int]],
    lines: Sequence[str],
    path: str,
    language: str,
    symbols: Sequence[SymbolDef],
) -> list[Chunk]:
    starts = [s.span.start_line for s in symbols]  # symbols are in source order
    out: list[Chunk] = []
    for first, last in ranges:
        text = "\n".join(lines[first : last + 1])
        sym = _chunk_symbol(first + 1, last + 1, symbols, starts)
        out.append(
            Chunk(
                path=path,
                language=language,
                start_line=first + 1,
                end_line=last + 1,
                text=text,
                symbol=sym.qualified_name if sym else None,
                signature=sym.signature if sym else None,
                content_hash=chunk_hash(text),
            )
        )
    return out


def _chunk_symbol(
    start: int, end: int, symbols: Sequence[SymbolDef], starts: Sequence[int]
) -> SymbolDef | None:
    """The first symbol defined in the chunk, else the innermost one enclosing it."""
    i = bisect.bisect_left(starts, start)
    while i < len(symbols) and starts[i] <= end:
        sym = symbols[i]
        if sym.name_span.start_line <= end:
            inner = symbols[i + 1] if i + 1 < len(symbols) else None
            wraps = (
                NAMESPACE_SKIP
                and sym.kind == "module"
                and inner is not None
                and inner.kind in _CONTAINER_KINDS
                and inner.name_span.start_line <= end
                and sym.span.start_line <= inner.span.start_line
                and inner.span.end_line <= sym.span.end_line
            )
            if not wraps:
                return sym
        i += 1
    best: SymbolDef | None = None
    for sym in symbols[: bisect.bisect_right(starts, start)]:
        if sym.span.start_line <= start and sym.span.end_line >= end:
            best = sym  # later-starting enclosing symbols are inner ones
    return best


# --------------------------------------------------------------------------- fallback


def _line_ranges(src: SourceText, budget: int) -> list[tuple[int, int]]:
    lines = src.lines
    out: list[tuple[int, int]] = []
    n = len(lines)
    row = 0
    while row < n:
        while row < n and not lines[row].strip():
            row += 1
        if row >= n:
            break
        start = row
        end = row
        while end + 1 < n and end + 1 - start < FALLBACK_WINDOW_LINES and src.size(start, end + 1) <= budget:
            end += 1
        out.append((start, end))
        row = end + 1
    return _trim(out, lines)


def fallback(path: str, language: str, text: str, budget: int, note: str) -> ParsedFile:
    try:
        src = SourceText(text)
        chunks = _make_chunks(_line_ranges(src, budget), src.lines, path, language, ())
    except Exception as exc:  # noqa: BLE001 - last resort: a file nav cannot even split into lines
        log.warning("line-window chunking of %s failed", path, exc_info=True)
        return ParsedFile(path=path, language=language, parsed=False, notes=(note, f"chunking failed: {exc}"))
    return ParsedFile(path=path, language=language, chunks=tuple(chunks), parsed=False, notes=(note,))
