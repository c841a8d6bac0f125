"""Syntax layer: tree-sitter parsing into definitions, syntax references and cAST chunks.

``parse_source`` is pure: it reads nothing but the grammars and the query files
shipped next to this module, and never raises on odd input (the worst case is
the line-window fallback, with a note saying why).

Positions are 1-based lines and 1-based columns in code points, ``end_col``
exclusive (see ``storage.model``).
"""

from __future__ import annotations

import logging
import re
import time
from operator import attrgetter

from tree_sitter import Node, Parser, QueryCursor, Tree

from semantic.chunking import FALLBACK_WINDOW_LINES, chunk_hash, chunk_tree, fallback
from semantic.definitions import definitions
from semantic.syntax import Grammar, SourceText, grammar_for
from storage.model import ParsedFile, SymbolDef, SyntaxRef

__all__ = [
    "DEFAULT_CHUNK_BUDGET",
    "FALLBACK_WINDOW_LINES",
    "MAX_PARSE_BYTES",
    "UNKNOWN_LANGUAGE",
    "chunk_hash",
    "parse_definitions",
    "parse_source",
]


log = logging.getLogger(__name__)

DEFAULT_CHUNK_BUDGET = 1500
"""Chunk budget in non-whitespace characters."""
MAX_PARSE_BYTES = 4_000_000
"""Files bigger than this are chunked by line windows without parsing (minified or generated)."""
MAX_AVG_LINE_BYTES = 1000
"""Files whose lines average more than this are minified or data; not worth a parse."""
PARSE_CPU_BUDGET_S = 5.0
"""CPU seconds one file's parse may take (a normal file takes milliseconds: ~10 MB/s). Some
grammars are quadratic on some inputs (Python's on a function of 20,000 comment lines took
40 s); past the budget the parse is cut off and the file chunked by line windows, with a note."""
UNKNOWN_LANGUAGE = ""
"""``ParsedFile.language`` / ``Chunk.language`` of a file parsed with ``language=None``."""


# --------------------------------------------------------------------------- public entry point


def parse_source(
    path: str,
    text: str,
    language: str | None = None,
    *,
    chunk_budget: int = DEFAULT_CHUNK_BUDGET,
    max_parse_bytes: int = MAX_PARSE_BYTES,
) -> ParsedFile:
    """Parse one file's text into symbols, syntax references and cAST chunks.

    ``language`` is a name from ``semantic.languages`` (usually ``detect_language(path)``).
    ``None`` — or a language with no grammar, or a file too large to be worth parsing —
    gives line-window chunks only, ``parsed=False`` and a note saying why; with ``None``
    the result's language is ``UNKNOWN_LANGUAGE`` (""). Never raises on bad input.
    """
    budget = max(chunk_budget, 1)
    text = _as_lsp_lines(text)
    if language is None:
        return fallback(path, UNKNOWN_LANGUAGE, text, budget, "no language: line-window chunks only")
    try:
        return _parse(path, text, language, budget, max_parse_bytes)
    except Exception as exc:  # noqa: BLE001 - degrade visibly, never fail the indexer on one file
        log.warning("parsing %s as %s failed; using line windows", path, language, exc_info=True)
        return fallback(path, language, text, budget, f"parse failed: {type(exc).__name__}: {exc}")


def parse_definitions(path: str, text: str, language: str) -> list[SymbolDef] | None:
    """The definitions :func:`parse_source` gives ``text``, without its references and chunks (a
    third of the cost: for reading many versions of many files, e.g. mining history); None where
    parse_source would not parse it (no grammar, too big or minified, over the CPU budget)."""
    parsed = _syntax_tree(_as_lsp_lines(text), language, MAX_PARSE_BYTES)
    if isinstance(parsed, str):
        return None
    grammar, src, tree = parsed
    return definitions(grammar, tree.root_node, src, path, language)


_LONE_CR = re.compile(r"\r(?!\n)")


def _as_lsp_lines(text: str) -> str:
    """``text`` with the lines language servers and editors see (:func:`lsp.positions.split_lines`):
    no leading byte-order mark (not text; its column would shift the first line's names),
    and a lone CR (old Mac line ends) turned into LF, same length, so tree-sitter's rows,
    which count LF only, are the protocol's lines (a CR-only file was one line of syntax
    errors, its functions missing from the index)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return _LONE_CR.sub("\n", text) if "\r" in text else text


def _syntax_tree(text: str, language: str, max_parse_bytes: int) -> tuple[Grammar, SourceText, Tree] | str:
    """The grammar, positions and tree of ``text``, or why it is not parsed (the note its
    line-window chunks carry)."""
    grammar = grammar_for(language)
    if grammar is None:
        return f"no tree-sitter grammar for {language}"
    src = SourceText(text)
    if len(src.src) > max_parse_bytes:
        return f"not parsed: {len(src.src)} bytes is over the limit"
    if len(src.src) > 100_000 and len(src.src) / len(src.lines) > MAX_AVG_LINE_BYTES:
        return "not parsed: looks minified (very long lines)"
    tree = _parse_within(grammar.parser, src.src, PARSE_CPU_BUDGET_S)
    if tree is None:
        return f"not parsed: the {language} parser took over {PARSE_CPU_BUDGET_S:g} s of CPU on it"
    return grammar, src, tree


def _parse(path: str, text: str, language: str, budget: int, max_parse_bytes: int) -> ParsedFile:
    parsed = _syntax_tree(text, language, max_parse_bytes)
    if isinstance(parsed, str):
        return fallback(path, language, text, budget, parsed)
    grammar, src, tree = parsed
    root = tree.root_node
    notes: list[str] = []
    if root.has_error:
        notes.append("syntax errors: results may be partial")
    symbols = definitions(grammar, root, src, path, language)
    refs = references(grammar, root, src)
    chunks = chunk_tree(root, src, path, language, budget, symbols)
    return ParsedFile(
        path=path,
        language=language,
        symbols=tuple(symbols),
        refs=tuple(refs),
        chunks=tuple(chunks),
        parsed=True,
        notes=tuple(notes),
    )


def _parse_within(parser: Parser, data: bytes, budget_s: float) -> Tree | None:
    """The tree of ``data``, or None when parsing it takes more than ``budget_s`` of this
    thread's CPU time (CPU, not wall time: a loaded machine does not cut normal files off)."""
    start = time.thread_time()

    def over_budget(*_: object) -> bool:
        return time.thread_time() - start > budget_s

    try:
        # tree-sitter calls progress callbacks only when it reads through a callable
        tree: Tree = parser.parse(lambda at, _point: data[at : at + 65536], progress_callback=over_budget)
    except ValueError:  # the parse was cancelled (or failed): start the next one afresh
        parser.reset()
        if over_budget():
            return None
        raise
    return tree


# --------------------------------------------------------------------------- references


def references(grammar: Grammar, root: Node, src: SourceText) -> list[SyntaxRef]:
    captures = QueryCursor(grammar.ident_query).captures(root)
    nodes = captures.get("id", [])
    data = src.src
    out: list[SyntaxRef] = []
    append = out.append
    # The query only names leaf kinds (see _identifier_query_source), and identifiers
    # never span lines, so the loop needs no per-node checks: it is the hot path.
    if src.ascii:
        for node in nodes:
            row, col = node.start_point
            sb, eb = node.start_byte, node.end_byte
            append(SyntaxRef(data[sb:eb].decode("ascii"), row + 1, col + 1, col + 1 + eb - sb))
    else:
        for node in nodes:
            row, col = node.start_point
            name = data[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")
            start = src.col(row, col)
            append(SyntaxRef(name, row + 1, start, start + len(name)))
    out.sort(key=_REF_ORDER)
    return out


_REF_ORDER = attrgetter("line", "col", "end_col", "name")
"""A total order: tree-sitter returns the captures of one position (``shop`` and ``shop.orders``
at 1:9 in Kotlin) in no fixed order, and the index must not change between two parses."""
