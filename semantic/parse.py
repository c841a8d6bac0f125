"""Syntax layer: tree-sitter parsing into definitions, syntax references and cAST chunks.

``parse_source`` is pure: it reads nothing but the grammars and the query files
shipped next to this module, and never raises on odd input (the worst case is
the line-window fallback, with a note saying why).

Positions are 1-based lines and 1-based columns in code points, ``end_col``
exclusive (see ``storage.model``).
"""

from __future__ import annotations

import bisect
import hashlib
import inspect
import logging
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import accumulate
from operator import attrgetter

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from storage.model import Chunk, ParsedFile, Span, SymbolDef, SyntaxRef

__all__ = [
    "DEFAULT_CHUNK_BUDGET",
    "FALLBACK_WINDOW_LINES",
    "MAX_PARSE_BYTES",
    "UNKNOWN_LANGUAGE",
    "chunk_hash",
    "parse_source",
]

log = logging.getLogger(__name__)

DEFAULT_CHUNK_BUDGET = 1500
"""Chunk budget in non-whitespace characters."""

FALLBACK_WINDOW_LINES = 40
"""Line-window size used when no grammar handles a file."""

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
_WS_DELETE = str.maketrans("", "", " \t\r\n\f\v")

_CLASS_LIKE = frozenset({"class", "struct", "interface", "enum", "trait"})
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
_COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment", "doc_comment", "haddock"})
_DECORATION_TYPES = frozenset(
    {"decorator", "attribute_item", "annotation", "marker_annotation", "attribute_list"}
)
_QUALIFIED_NAME_TYPES = frozenset(
    {"qualified_identifier", "nested_namespace_specifier", "scoped_identifier", "scope_resolution"}
)
# Ruby's `attr_reader :items`: a name written as a symbol literal, its colon not part of the name
_SYMBOL_LITERAL = "simple_symbol"
_MAX_SIGNATURE = 300


def chunk_hash(text: str) -> str:
    """The content hash of a chunk's text (blake2b, 16 bytes, hex)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


# --------------------------------------------------------------------------- grammars


@dataclass(frozen=True, slots=True)
class _Grammar:
    language: Language
    parser: Parser
    ident_query: Query
    defs_query: Query | None


@cache
def _grammar(language: str) -> _Grammar | None:
    """Load (once) the parser and queries for ``language``; None when there is no grammar."""
    try:
        from tree_sitter_language_pack import get_language, get_parser

        lang = get_language(language)  # type: ignore[arg-type]
        parser = get_parser(language)  # type: ignore[arg-type]
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
    return _Grammar(lang, parser, ident_query, defs_query)


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


class _Text:
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


def _last_row(node: Node) -> int:
    """The last row that holds part of ``node`` (a node ending at column 0 ends on the row before)."""
    er, ec = node.end_point
    sr = node.start_point[0]
    if ec == 0 and er > sr:
        return er - 1
    return er


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
        return _fallback(path, UNKNOWN_LANGUAGE, text, budget, "no language: line-window chunks only")
    try:
        return _parse(path, text, language, budget, max_parse_bytes)
    except Exception as exc:  # noqa: BLE001 - degrade visibly, never fail the indexer on one file
        log.warning("parsing %s as %s failed; using line windows", path, language, exc_info=True)
        return _fallback(path, language, text, budget, f"parse failed: {type(exc).__name__}: {exc}")


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


def _parse(path: str, text: str, language: str, budget: int, max_parse_bytes: int) -> ParsedFile:
    grammar = _grammar(language)
    if grammar is None:
        return _fallback(path, language, text, budget, f"no tree-sitter grammar for {language}")
    src = _Text(text)
    if len(src.src) > max_parse_bytes:
        return _fallback(path, language, text, budget, f"not parsed: {len(src.src)} bytes is over the limit")
    if len(src.src) > 100_000 and len(src.src) / len(src.lines) > MAX_AVG_LINE_BYTES:
        return _fallback(path, language, text, budget, "not parsed: looks minified (very long lines)")
    tree = _parse_within(grammar.parser, src.src, PARSE_CPU_BUDGET_S)
    if tree is None:
        return _fallback(
            path, language, text, budget,
            f"not parsed: the {language} parser took over {PARSE_CPU_BUDGET_S:g} s of CPU on it",
        )  # fmt: skip
    root = tree.root_node
    notes: list[str] = []
    if root.has_error:
        notes.append("syntax errors: results may be partial")
    symbols = _definitions(grammar, root, src, path, language)
    refs = _references(grammar, root, src)
    chunks = _chunks(root, src, path, language, budget, symbols)
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


def _references(grammar: _Grammar, root: Node, src: _Text) -> list[SyntaxRef]:
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


_REF_ORDER = attrgetter("line", "col")


# --------------------------------------------------------------------------- definitions


@dataclass(slots=True)
class _Def:
    node: Node  # the definition node as captured
    first: Node  # where the span starts: the first decorator / attribute, else the definition
    last: Node  # where the span ends (a Python decorated_definition, else the definition)
    name_node: Node
    name: str
    kind: str
    prefix: tuple[str, ...]  # extra containers from a receiver, impl block or qualified name
    is_scope: bool = False  # an impl block: a container that is not a symbol

    @property
    def start(self) -> int:
        return self.first.start_byte

    @property
    def end(self) -> int:
        return self.last.end_byte


def _definitions(grammar: _Grammar, root: Node, src: _Text, path: str, language: str) -> list[SymbolDef]:
    if grammar.defs_query is None:
        return []
    raw: list[_Def] = []
    seen: dict[tuple[int, int], int] = {}
    for _, caps in QueryCursor(grammar.defs_query).matches(root):
        d = _make_def(caps, src)
        if d is None:
            continue
        key = (d.node.start_byte, d.name_node.start_byte)
        if key in seen:
            # a node that several patterns match (Kotlin's `enum class` is a class too): the
            # specific kind wins over the generic "class"; a method over a function (a Kotlin
            # `fun` in a class body matches both patterns, in an order not to rely on)
            i = seen[key]
            if not d.is_scope and (
                (raw[i].kind == "class" and d.kind != "class") or (raw[i].kind == "function" and d.kind == "method")
            ):
                raw[i] = d
            continue
        seen[key] = len(raw)
        raw.append(d)
    raw.sort(key=lambda d: (d.start, -d.end, d.is_scope is False))
    # Drop a typedef that merely renames a struct/enum defined inside it.
    raw = _drop_shadowing_typedefs(raw)
    if language in _CLAUSE_LANGUAGES:
        raw = _merge_clauses(raw)

    class_names = {d.name for d in raw if d.kind in _CLASS_LIKE}
    out: list[SymbolDef] = []
    stack: list[tuple[_Def, str, str]] = []  # (def, qualified name, effective kind)
    for d in raw:
        while stack and stack[-1][0].end <= d.start:
            stack.pop()
        # An enclosing def whose span does not contain this one is not its container.
        while stack and not (stack[-1][0].start <= d.start and d.end <= stack[-1][0].end):
            stack.pop()
        # several names of one node (`attr_reader :items, :owner`, `const int A = 1, B = 2;`) are
        # siblings, not nested; a scope's names (Swift's `extension Outer.Inner`) do nest
        while stack and not d.is_scope and stack[-1][0].node == d.node:
            stack.pop()
        parent_q = stack[-1][1] if stack else None
        parent_kind = stack[-1][2] if stack else None
        parts: list[str] = [parent_q] if parent_q else []
        parts.extend(d.prefix)
        qualified = ".".join([*parts, d.name])
        if d.is_scope:
            stack.append((d, qualified, "struct"))
            continue
        kind = d.kind
        if (
            kind == "function"
            and (
                parent_kind in _CLASS_LIKE
                # C++ `Order::create`: a method if the qualifier is a class (known here, or
                # capitalised); `ns::free_fn` stays a function
                or (d.prefix and (d.prefix[-1] in class_names or d.prefix[-1][:1].isupper()))
            )
        ):
            kind = "method"
        container = ".".join(parts) if parts else None
        out.append(
            SymbolDef(
                name=d.name,
                qualified_name=qualified,
                kind=kind,
                path=path,
                language=language,
                span=_join_span(src, d.first, d.last),
                name_span=_name_span(src, d.name_node),
                signature=_signature(d.node, src, kind, language),
                container=container,
                docstring=_docstring(d, src, language),
            )
        )
        stack.append((d, qualified, kind))
    return out


def _name_span(src: _Text, node: Node) -> Span:
    """The span of the name itself (see :func:`_bare_name`): without a symbol colon, backticks
    or ``r#``."""
    span = src.span(node)
    text = src.node_text(node)
    skip = len(text) - len(_bare_name(text, node))
    if not skip or span.start_line != span.end_line:
        return span
    lead = 2 if text.startswith("r#") else 1  # r#, a colon or an opening backtick
    tail = skip - lead  # a closing backtick
    return Span(span.start_line, span.start_col + lead, span.end_line, span.end_col - tail)


def _join_span(src: _Text, first: Node, last: Node) -> Span:
    a = src.span(first)
    b = src.span(last)
    return Span(a.start_line, a.start_col, b.end_line, b.end_col)


def _make_def(caps: dict[str, list[Node]], src: _Text) -> _Def | None:
    if "scope" in caps:
        scope_names = caps.get("scope.name")
        if not scope_names:
            return None
        scope = caps["scope"][0]
        name = src.node_text(scope_names[0])
        return _Def(scope, scope, scope, scope_names[0], name, "struct", (), is_scope=True)
    names = caps.get("name")
    if not names:
        return None
    kind = ""
    node: Node | None = None
    for cap, nodes in caps.items():
        if cap.startswith("definition."):
            kind = cap.removeprefix("definition.")
            node = nodes[0]
            break
    if node is None:
        return None
    name_node = names[0]
    prefix: tuple[str, ...] = ()
    if name_node.type in _QUALIFIED_NAME_TYPES:
        parts, name_node = _split_qualified(name_node, src)
        prefix = tuple(parts)
    receiver = caps.get("receiver")
    if receiver:
        prefix = (src.node_text(receiver[0]), *prefix)
    outer = node
    if outer.parent is not None and outer.parent.type == "decorated_definition":
        outer = outer.parent
    prev = outer.prev_named_sibling
    first = outer
    while prev is not None and (prev.type in _DECORATION_TYPES or prev.type in _COMMENT_TYPES):
        if prev.type in _DECORATION_TYPES:
            first = prev  # comments between attributes and the item stay inside the span
        prev = prev.prev_named_sibling
    # `first` may be a decorator that is a sibling of the definition (TS, Rust attributes)
    name = _bare_name(src.node_text(name_node), name_node)
    return _Def(node, first, outer, name_node, name, kind, prefix)


def _bare_name(text: str, node: Node) -> str:
    """A name as code refers to it: without Ruby's symbol colon (``:items``), Scala's and
    Kotlin's backticks (`` `max-age` ``) or Rust's raw-identifier prefix (``r#type``)."""
    if node.type == _SYMBOL_LITERAL:
        return text.removeprefix(":")
    if len(text) > 2 and text[0] == "`" and text[-1] == "`":
        return text[1:-1]
    if text.startswith("r#") and len(text) > 2:
        return text[2:]
    return text


def _split_qualified(node: Node, src: _Text) -> tuple[list[str], Node]:
    """``ns::Class::m`` → (["ns", "Class"], node of ``m``)."""
    parts: list[str] = []
    current = node
    while current.type in _QUALIFIED_NAME_TYPES:
        if current.type == "nested_namespace_specifier":
            named = current.named_children
            if not named:
                break
            parts.extend(src.node_text(n) for n in named[:-1])
            current = named[-1]
            continue
        scope = current.child_by_field_name("scope") or current.child_by_field_name("path")
        name = current.child_by_field_name("name")
        if name is None:
            break
        if scope is not None:
            parts.extend(p for p in re.split(r"::", src.node_text(scope)) if p)
        current = name
    return parts, current


def _drop_shadowing_typedefs(defs: list[_Def]) -> list[_Def]:
    out: list[_Def] = []
    for i, d in enumerate(defs):
        if d.kind == "type" and d.node.type == "type_definition":
            inner = defs[i + 1] if i + 1 < len(defs) else None
            if (
                inner is not None
                and inner.name == d.name
                and d.node.start_byte <= inner.node.start_byte
                and inner.node.end_byte <= d.node.end_byte
            ):
                continue
        out.append(d)
    return out


_CLAUSE_LANGUAGES = frozenset({"haskell", "elixir"})
"""Languages where one function is written as several clauses (and, in Haskell, a type
signature before them): consecutive clauses of one name are one symbol."""


def _merge_clauses(defs: list[_Def]) -> list[_Def]:
    """Merge each run of sibling clauses with the same name and kind into its first one,
    whose span then reaches the end of the last (its signature is the first clause's)."""
    out: list[_Def] = []
    for d in defs:
        prev = out[-1] if out else None
        if (
            prev is not None
            and not (prev.is_scope or d.is_scope)
            and (prev.name, prev.kind, prev.prefix) == (d.name, d.kind, d.prefix)
            and prev.end <= d.start
            and _same_parent(prev.node, d.node)
        ):
            prev.last = d.last
            continue
        out.append(d)
    return out


def _same_parent(a: Node, b: Node) -> bool:
    pa, pb = a.parent, b.parent
    if pa is None or pb is None:
        return pa is pb
    return (pa.start_byte, pa.end_byte, pa.type) == (pb.start_byte, pb.end_byte, pb.type)


_GO_SPEC_KEYWORD = {"type_spec": "type", "type_alias": "type", "const_spec": "const"}
_WS_RUN = re.compile(r"\s+")


_BODY_TYPES = frozenset({"do_block", "Block"})
"""Body node kinds that are not in a ``body`` field (Elixir's ``do … end``, a Zig ``Block``)."""


def _find_body(node: Node, depth: int = 0) -> Node | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for named in node.named_children:
        if named.type in _BODY_TYPES:
            return named
    if depth >= 3:
        return None
    for field in ("declarator", "value", "type"):
        child = node.child_by_field_name(field)
        if child is not None:
            found = _find_body(child, depth + 1)
            if found is not None:
                return found
    if node.type in {"lexical_declaration", "variable_declaration", "type_declaration", "export_statement"}:
        for child in node.named_children:
            found = _find_body(child, depth + 1)
            if found is not None:
                return found
    return None


_MAX_CONSTANT_SIGNATURE = 120


def _signature(node: Node, src: _Text, kind: str, language: str) -> str:
    body = None if kind == "constant" else _find_body(node)
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else node.end_byte
    if kind == "constant":  # an enum constant with a body (`PAID("p") { … }`): its header
        end = next((c.start_byte for c in node.named_children if c.type.endswith("class_body")), end)
    end = min(end, node.start_byte + 4 * _MAX_SIGNATURE)
    # Leave out comments that sit between the header and the body.
    pieces: list[bytes] = []
    pos = node.start_byte
    for child in node.children:
        if child.start_byte >= end:
            break
        if child.type in _COMMENT_TYPES:
            pieces.append(src.src[pos : child.start_byte])
            pos = child.end_byte
    pieces.append(src.src[pos:end])
    raw = b" ".join(pieces).decode("utf-8", "replace")
    if body is None and kind not in ("constant", "type") and "{" in raw:
        # no body field (Go `type X struct {...}`, Kotlin classes): the part before the brace
        raw = raw.split("{", 1)[0]
    elif body is None:
        raw = raw.split("\n", 1)[0]  # a constant's first line is its signature, not its whole value
    sig = _WS_RUN.sub(" ", raw).strip()
    for suffix in ("=>", "{", ":", "=", " do"):
        if body is not None and sig.endswith(suffix):
            sig = sig[: -len(suffix)].rstrip()
            break
    sig = sig.rstrip(";").rstrip()
    if language == "go" and node.type in _GO_SPEC_KEYWORD:
        sig = f"{_GO_SPEC_KEYWORD[node.type]} {sig}"
    limit = _MAX_CONSTANT_SIGNATURE if kind == "constant" else _MAX_SIGNATURE
    if len(sig) > limit:
        sig = sig[: limit - 1] + "…"
    return sig


def _docstring(d: _Def, src: _Text, language: str) -> str | None:
    if language == "python":
        body = d.node.child_by_field_name("body")
        if body is not None and body.named_child_count:
            first = body.named_children[0]
            if first.type == "expression_statement" and first.named_child_count == 1:
                first = first.named_children[0]  # older grammars wrap the string
            if first.type == "string":
                return _python_string_value(src.node_text(first))
        return None
    if language == "elixir":
        return _elixir_doc(d.node, src)
    return _leading_comment(d.first, src)


def _elixir_attribute(node: Node | None) -> tuple[str, Node | None] | None:
    """(name, first argument) of an Elixir module attribute ``@name arg``, else None."""
    if node is None or node.type != "unary_operator" or node.child_count != 2 or node.children[0].type != "@":
        return None
    call = node.children[1]
    target = call.child_by_field_name("target") if call.type == "call" else None
    if target is None or target.text is None:
        return None
    args = next((c for c in call.named_children if c.type == "arguments"), None)
    first = args.named_children[0] if args is not None and args.named_child_count else None
    return target.text.decode(), first


def _elixir_doc(node: Node, src: _Text) -> str | None:
    """``@doc "…"`` above a function (over ``@spec``/``@impl``), ``@moduledoc`` first in a module."""
    if src.node_text(node).startswith(("defmodule", "defprotocol")):
        body = next((c for c in node.named_children if c.type == "do_block"), None)
        first = (
            next((c for c in body.named_children if c.type != "comment"), None) if body is not None else None
        )
        candidates = [first] if first is not None else []
        wanted = "moduledoc"
    else:
        candidates = []
        prev = node.prev_named_sibling
        while (attr := _elixir_attribute(prev)) is not None and prev is not None:
            candidates.append(prev)
            if attr[0] == "doc":
                break
            prev = prev.prev_named_sibling
        wanted = "doc"
    for c in candidates:
        attr = _elixir_attribute(c)
        if (
            attr is not None
            and attr[0] == wanted
            and attr[1] is not None
            and attr[1].type in ("string", "sigil")
        ):
            parts = [src.node_text(q) for q in attr[1].named_children if q.type == "quoted_content"]
            text = inspect.cleandoc("".join(parts))
            return text or None
    return None


_STRING_PREFIX = re.compile(r"^[rRbBuUfF]*")


def _python_string_value(literal: str) -> str | None:
    body = _STRING_PREFIX.sub("", literal)
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
            value = inspect.cleandoc(body[len(quote) : -len(quote)])
            return value or None
    return None


_COMMENT_MARKERS = re.compile(r"^\s*(?:///?!?|/\*+!?|\*+/?|#+|--+(?:\s?[|^](?=\s))?|\{-\s?\|?)\s?")


def _prev_over_modifiers(node: Node) -> Node | None:
    """The previous sibling, stepping over keywords on the node's own line (Zig's ``pub``
    is a sibling of the declaration it modifies)."""
    prev = node.prev_sibling
    row = node.start_point[0]
    while prev is not None and not prev.is_named and prev.start_point[0] == row:
        prev = prev.prev_sibling
    return prev


def _leading_comment(node: Node, src: _Text) -> str | None:
    """The block of whole-line comments right above ``node`` (or above an ancestor that
    starts on the same line, e.g. ``export class``)."""
    row = node.start_point[0]
    while (before := _prev_over_modifiers(node)) is None or before.type not in _COMMENT_TYPES:
        parent = node.parent
        if parent is None or parent.parent is None or parent.start_point[0] != row:
            break
        node = parent
    comments: list[Node] = []
    expect_row = row
    prev = _prev_over_modifiers(node)
    if prev is not None and prev.type not in _COMMENT_TYPES and prev.child_count:
        last = prev.children[-1]
        if last.type in _COMMENT_TYPES:
            prev = last  # a grammar that files the comment under the node before (Haskell's imports)
    while (
        prev is not None
        and prev.type in _COMMENT_TYPES
        and _last_row(prev) >= expect_row - 1
        and _last_row(prev) < expect_row + (1 if not comments else 0)
        and not src.lines[prev.start_point[0]][: prev.start_point[1]].strip()
    ):
        comments.append(prev)
        expect_row = prev.start_point[0]
        prev = prev.prev_sibling
    if not comments:
        return None
    lines: list[str] = []
    for c in reversed(comments):
        for line in src.node_text(c).split("\n"):
            line = line.rstrip()
            if line.endswith("*/"):
                line = line[:-2].rstrip()
            lines.append(_COMMENT_MARKERS.sub("", line, count=1).rstrip())
    text = "\n".join(lines).strip()
    return text or None


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
        first, last = n.start_point[0], _last_row(n)
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
    attr = _elixir_attribute(n)  # Elixir's `@doc "…"`: (unary_operator "@" (call target: (identifier)))
    return attr is not None and attr[0] in _STICKY_ELIXIR_ATTRIBUTES


def _expand(unit: _Unit) -> list[Node]:
    out: list[Node] = []
    for n in unit.nodes:
        if n.child_count and _last_row(n) > n.start_point[0]:
            out.extend(n.children)
        else:
            out.append(n)
    return out


_MAX_SPLIT_DEPTH = 150
"""Deeper than this (long call chains in generated code) a subtree is cut into line windows."""


class _Chunker:
    def __init__(self, src: _Text, budget: int) -> None:
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


def _chunks(
    root: Node, src: _Text, path: str, language: str, budget: int, symbols: Sequence[SymbolDef]
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


def _line_ranges(src: _Text, budget: int) -> list[tuple[int, int]]:
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


def _fallback(path: str, language: str, text: str, budget: int, note: str) -> ParsedFile:
    try:
        src = _Text(text)
        chunks = _make_chunks(_line_ranges(src, budget), src.lines, path, language, ())
    except Exception as exc:  # noqa: BLE001 - last resort: a file nav cannot even split into lines
        log.warning("line-window chunking of %s failed", path, exc_info=True)
        return ParsedFile(path=path, language=language, parsed=False, notes=(note, f"chunking failed: {exc}"))
    return ParsedFile(path=path, language=language, chunks=tuple(chunks), parsed=False, notes=(note,))
