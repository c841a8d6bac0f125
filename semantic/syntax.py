"""The syntax layer's shared parts: the tree-sitter grammars with their queries, and the
positions of a parsed text (1-based lines, 1-based code-point columns, as in ``storage.model``).
:mod:`semantic.parse` is the entry point; :mod:`semantic.definitions` and :mod:`semantic.chunking`
read trees through these.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import accumulate

from tree_sitter import Language, Node, Parser, Query

from storage.model import Span

log = logging.getLogger(__name__)


_WS_DELETE = str.maketrans("", "", " \t\r\n\f\v")


# --------------------------------------------------------------------------- grammars


_THREAD = threading.local()
"""Per thread: its tree-sitter parser of each grammar."""


@dataclass(frozen=True, slots=True)
class Grammar:
    language: Language
    ident_query: Query
    defs_query: Query | None

    @property
    def parser(self) -> Parser:
        """This thread's parser of the grammar: a tree-sitter Parser holds the state of the parse
        under way, and two threads parsing with one crashed the process (the editor server
        parses open buffers on a thread pool). The queries are read-only and shared."""
        parsers: dict[int, Parser] | None = getattr(_THREAD, "parsers", None)
        if parsers is None:
            parsers = _THREAD.parsers = {}
        parser = parsers.get(id(self.language))
        if parser is None:
            parser = parsers[id(self.language)] = Parser(self.language)
        return parser


@cache
def grammar_for(language: str) -> Grammar | None:
    """Load (once) the parser and queries for ``language``; None when there is no grammar."""
    try:
        from tree_sitter_language_pack import get_language

        lang = get_language(language)  # type: ignore[arg-type]
    except (LookupError, ValueError, OSError, ImportError) as exc:
        log.info("no tree-sitter grammar for %r: %s", language, exc)
        return None
    ident_query = Query(
        lang,
        _identifier_query_source(lang, _EXTRA_IDENTIFIER_KINDS.get(language, frozenset()))
        + _EXTRA_REFERENCE_PATTERNS.get(language, ""),
    )
    defs_query: Query | None = None
    source = _query_source(language)
    if source is not None:
        defs_query = Query(lang, source)
    return Grammar(lang, ident_query, defs_query)


def _query_source(language: str) -> str | None:
    try:
        return resources.files("semantic").joinpath("queries", f"{language}.scm").read_text("utf-8")
    except (FileNotFoundError, OSError):
        return None


_EXTRA_IDENTIFIER_KINDS: dict[str, frozenset[str]] = {
    # leaf kinds that name things but do not end in "identifier"
    "ruby": frozenset({"constant"}),
    "php": frozenset({"name"}),  # `$x` is (variable_name "$" (name)): capture the name only
    "bash": frozenset({"variable_name"}),
    "kotlin": frozenset({"simple_identifier"}),
    "swift": frozenset({"simple_identifier"}),
    "elixir": frozenset({"alias"}),  # module names: `Plug.Conn`
    "haskell": frozenset({"variable", "name", "constructor"}),
    "zig": frozenset({"IDENTIFIER"}),
    # `const {createFatalError} = require('../errors')`: the binding names what it destructures
    "javascript": frozenset({"shorthand_property_identifier_pattern"}),
    "typescript": frozenset({"shorthand_property_identifier_pattern"}),
    "tsx": frozenset({"shorthand_property_identifier_pattern"}),
}
_EXTRA_REFERENCE_PATTERNS: dict[str, str] = {
    # a command's name is a plain `word`: the call of a shell function is a reference to it
    "bash": "\n(command_name (word) @id)",
}
_COMPOSITE_PREFIXES = ("qualified_", "scoped_", "nested_", "generic_", "template_")


def _identifier_query_source(lang: Language, extra: frozenset[str] = frozenset()) -> str:
    """A query capturing every identifier-like leaf kind the grammar has."""
    kinds: set[str] = set()
    for kind_id in range(lang.node_kind_count):
        if not (lang.node_kind_is_named(kind_id) and lang.node_kind_is_visible(kind_id)):
            continue
        kind = lang.node_kind_for_id(kind_id)
        if kind is None or kind.startswith(_COMPOSITE_PREFIXES) or kind.startswith("operator"):
            continue
        if kind.endswith("identifier") or kind in extra:
            kinds.add(kind)
    good: list[str] = []
    for kind in sorted(kinds):
        try:
            Query(lang, f"({kind}) @id")
        except Exception:  # noqa: BLE001 - a kind the query language rejects is just skipped
            continue
        good.append(f"({kind})")
    if not good:
        return "(ERROR) @id"
    return "[" + " ".join(good) + "] @id"


# --------------------------------------------------------------------------- positions


class SourceText:
    """The source as lines, with byte-column → code-point-column conversion."""

    __slots__ = ("text", "src", "lines", "ascii", "_prefix")

    def __init__(self, text: str) -> None:
        self.text = text
        self.src = text.encode("utf-8", "surrogatepass")
        self.lines = text.split("\n")
        self.ascii = len(self.src) == len(text)
        self._prefix: list[int] | None = None

    def col(self, row: int, byte_col: int) -> int:
        """1-based code-point column of a tree-sitter (row, byte column)."""
        if self.ascii or row >= len(self.lines):
            return byte_col + 1
        line = self.lines[row]
        if line.isascii():
            return byte_col + 1
        return len(line.encode("utf-8", "surrogatepass")[:byte_col].decode("utf-8", "ignore")) + 1

    def span(self, node: Node) -> Span:
        sr, sc = node.start_point
        er, ec = node.end_point
        return Span(sr + 1, self.col(sr, sc), er + 1, self.col(er, ec))

    def node_text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    @property
    def prefix(self) -> list[int]:
        """prefix[i] = non-whitespace characters in lines[0:i]."""
        if self._prefix is None:
            text = self.text
            if "\t" in text or "\r" in text or "\f" in text or "\v" in text:
                counts = [len(line.translate(_WS_DELETE)) for line in self.lines]
            else:  # the common case, several times faster
                counts = [len(line) - line.count(" ") for line in self.lines]
            self._prefix = [0, *accumulate(counts)]
        return self._prefix

    def size(self, first_row: int, last_row: int) -> int:
        p = self.prefix
        return p[last_row + 1] - p[first_row]


def last_row(node: Node) -> int:
    """The last row that holds part of ``node`` (a node ending at column 0 ends on the row before)."""
    er, ec = node.end_point
    sr = node.start_point[0]
    if ec == 0 and er > sr:
        return er - 1
    return er
