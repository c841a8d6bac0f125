"""Definitions (symbols with kind, qualified name, signature, docstring) read from a tree-sitter
tree with the language's query file (``queries/<language>.scm``). Pure; called by
:func:`semantic.parse.parse_source`.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from tree_sitter import Node, QueryCursor

from semantic.syntax import Grammar, SourceText, last_row
from storage.model import Span, SymbolDef

_CLASS_LIKE = frozenset({"class", "struct", "interface", "enum", "trait"})
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


def definitions(grammar: Grammar, root: Node, src: SourceText, path: str, language: str) -> list[SymbolDef]:
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
                (raw[i].kind == "class" and d.kind != "class")
                or (raw[i].kind == "function" and d.kind == "method")
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


def _name_span(src: SourceText, node: Node) -> Span:
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


def _join_span(src: SourceText, first: Node, last: Node) -> Span:
    a = src.span(first)
    b = src.span(last)
    return Span(a.start_line, a.start_col, b.end_line, b.end_col)


def _make_def(caps: dict[str, list[Node]], src: SourceText) -> _Def | None:
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


def _split_qualified(node: Node, src: SourceText) -> tuple[list[str], Node]:
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


def _signature(node: Node, src: SourceText, kind: str, language: str) -> str:
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


def _docstring(d: _Def, src: SourceText, language: str) -> str | None:
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


def elixir_attribute(node: Node | None) -> tuple[str, Node | None] | None:
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


def _elixir_doc(node: Node, src: SourceText) -> str | None:
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
        while (attr := elixir_attribute(prev)) is not None and prev is not None:
            candidates.append(prev)
            if attr[0] == "doc":
                break
            prev = prev.prev_named_sibling
        wanted = "doc"
    for c in candidates:
        attr = elixir_attribute(c)
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


def _leading_comment(node: Node, src: SourceText) -> str | None:
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
        and last_row(prev) >= expect_row - 1
        and last_row(prev) < expect_row + (1 if not comments else 0)
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
