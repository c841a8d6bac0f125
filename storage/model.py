"""Plain, frozen value types shared by every layer of nav.

Positions are 1-based lines and 1-based columns counted in Unicode code points,
which is what a person reads in an editor's status bar. Conversion to the
language-server protocol's 0-based UTF-16 positions happens at the ``lsp`` edge.
Paths are POSIX-style and relative to the indexed root.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SymbolKind = Literal[
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "enum",
    "trait",
    "type",
    "constant",
    "module",
    "field",
]

SYMBOL_KINDS: tuple[str, ...] = (
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "enum",
    "trait",
    "type",
    "constant",
    "module",
    "field",
)


@dataclass(frozen=True, slots=True)
class Span:
    """A source range: lines and columns are 1-based; ``end_col`` is exclusive."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True, slots=True)
class SymbolDef:
    """A definition found by the syntax parser."""

    name: str
    qualified_name: str
    kind: str
    path: str
    language: str
    span: Span
    name_span: Span
    signature: str
    container: str | None = None
    docstring: str | None = None


@dataclass(frozen=True, slots=True)
class SyntaxRef:
    """An identifier occurrence outside comments and strings (a syntax-level reference)."""

    name: str
    line: int
    col: int
    end_col: int


@dataclass(frozen=True, slots=True)
class Chunk:
    """A syntax-aware slice of a file, the unit of semantic and lexical search."""

    path: str
    language: str
    start_line: int
    end_line: int
    text: str
    symbol: str | None = None
    signature: str | None = None
    content_hash: str = ""


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """Everything the parser extracts from one file."""

    path: str
    language: str
    symbols: tuple[SymbolDef, ...] = ()
    refs: tuple[SyntaxRef, ...] = ()
    chunks: tuple[Chunk, ...] = ()
    parsed: bool = True
    """False when no grammar handled the file and the line-window fallback was used."""
    notes: tuple[str, ...] = field(default_factory=tuple)
