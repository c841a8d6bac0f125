"""The router: decide which leg answers a query. Pure functions, no I/O.

- ``path:line[:col]``                          -> ``position`` (what is here: definition + references)
- an identifier or qualified name               -> ``exact``    (symbol table + language server)
  (``createSalesOrder``, ``Order.create``, ``orders.create_sales_order``, ``ns::f``, ``MAX_ITEMS``)
- prose                                         -> ``semantic`` (BM25 + vectors + names, fused)
- prose that mentions identifiers               -> ``both``     (fused with reciprocal rank fusion)
  (backticks, camelCase, snake_case, dotted names, PascalCase compounds)
- one plain lower-case word (``retry``)         -> ``both``: it may be a name or a concept
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from storage.errors import UsageError, shorten

_SHOWN = 60
"""How much of one name or path a route's ``why`` quotes (a fuzzed 600-character name made a
note line of 1,043 characters)."""
_NAMES_SHOWN = 5
"""How many of the names prose mentions a route's ``why`` lists."""

RouteKind = Literal["exact", "position", "semantic", "both"]
Intent = Literal["references", "callers", "callees", "implementations", "definition"]

# What the exact leg should ask for, read off the phrasing ("who calls X" wants callers).
_INTENTS: tuple[tuple[re.Pattern[str], Intent], ...] = (
    (
        re.compile(
            r"\b(who|what|which \w+)\s+(calls|invokes)\b|\bcall(er)?s? (of|to)\b|\bcall sites?\b", re.I
        ),
        "callers",
    ),
    (re.compile(r"\bwhat does .+ call\b|\bcallees?\b|\bcalled by\b", re.I), "callees"),
    (re.compile(r"\bimplement(s|ations?|ers?)?\b|\bsubclass(es)?\b|\boverrides?\b", re.I), "implementations"),
    (re.compile(r"\bwhere is .+ (defined|declared)\b|\bdefinition of\b", re.I), "definition"),
    (
        re.compile(
            r"\b(references?|uses|usages?) (to|of)\b|\bwhere is .+ (used|referenced)\b|\b(who|what) (uses|references)\b",
            re.I,
        ),
        "references",
    ),
)

_IDENT = r"[A-Za-z_$][\w$]*"
_QUALIFIED = re.compile(rf"^{_IDENT}(?:(?:\.|::|#){_IDENT})*$")
_POSITION = re.compile(r"^(?P<path>[^\s:]*[^\s:/]):(?P<line>\d+)(?::(?P<col>\d+))?$")
_BACKTICK = re.compile(r"`([^`\s]+)`")
_WORDISH = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_PASCAL_COMPOUND = re.compile(r"^[A-Z][a-z0-9]+[A-Z]")
_SCREAMING = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")
# Dotted words that are prose, not names.
_PROSE_DOTTED = {"e.g", "i.e", "etc", "vs", "a.k.a"}


@dataclass(frozen=True, slots=True)
class Route:
    kind: RouteKind
    text: str
    identifiers: tuple[str, ...] = ()
    """Names the exact leg should look up, in the order they appear."""
    path: str | None = None
    line: int | None = None
    col: int | None = None
    why: str = ""
    intent: Intent = "references"
    """What the exact leg asks the language server: references unless the phrasing says otherwise."""
    asks: bool = False
    """The phrasing asks an exact question about the names ("who calls `f`", "where is `X`
    defined", "references to `Y`"), not only mentions them: the exact answer leads."""

    def describe(self) -> str:
        return f"{self.kind}: {self.why}" if self.why else self.kind


def looks_like_identifier(word: str) -> bool:
    """A token that reads as code rather than English."""
    if word.lower() in _PROSE_DOTTED:
        return False
    if any(sep in word for sep in (".", "::", "#")):
        return True
    if "_" in word.strip("_") or word.startswith("__"):
        return True
    if _CAMEL.search(word) or _PASCAL_COMPOUND.match(word) or _SCREAMING.match(word):
        return True
    return "$" in word


def classify(query: str) -> Route:
    """Route a query. Raises UsageError for an empty one."""
    if not isinstance(query, str) or not query.strip():
        raise UsageError(
            f"a query is required, got {query!r}; e.g. `createSalesOrder` or `where do we retry`"
        )
    text = " ".join(query.split())
    pos = _POSITION.match(text)
    if pos and ("/" in pos["path"] or "." in pos["path"]):
        return Route(
            kind="position",
            text=text,
            path=pos["path"],
            line=int(pos["line"]),
            col=int(pos["col"]) if pos["col"] else None,
            why=f"a position in {shorten(pos['path'], _SHOWN)}",
        )
    bare = text.strip("`")
    if " " not in text and _QUALIFIED.match(bare):
        if looks_like_identifier(bare) or bare[0].isupper() or text.startswith("`"):
            return Route(
                kind="exact", text=text, identifiers=(bare,), why=f"identifier `{shorten(bare, _SHOWN)}`"
            )
        return Route(
            kind="both",
            text=text,
            identifiers=(bare,),
            why=f"`{shorten(bare, _SHOWN)}` may be a name or a word: names and meaning, fused",
        )
    found: list[str] = []
    for m in _BACKTICK.finditer(text):
        name = m.group(1).strip("()")
        if _QUALIFIED.match(name) and name not in found:
            found.append(name)
    rest = _BACKTICK.sub(" ", text)
    for m in _WORDISH.finditer(rest):
        word = m.group(0).rstrip(".")
        if looks_like_identifier(word) and _QUALIFIED.match(word) and word not in found:
            found.append(word)
    if found:
        names = ", ".join(f"`{shorten(n, _SHOWN)}`" for n in found[:_NAMES_SHOWN])
        if len(found) > _NAMES_SHOWN:
            names += f" and {len(found) - _NAMES_SHOWN} more"
        asked: Intent | None = next((i for pattern, i in _INTENTS if pattern.search(text)), None)
        intent: Intent = asked or "references"
        why = f"prose naming {names}: fused" + ("" if asked is None else f", asking for {intent}")
        return Route(
            kind="both", text=text, identifiers=tuple(found), why=why, intent=intent, asks=asked is not None
        )
    return Route(kind="semantic", text=text, why="prose: search by meaning")
