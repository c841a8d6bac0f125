"""Identifier-aware tokenization for the lexical (FTS5/BM25) tables.

Code names are written many ways: ``createSalesOrder``, ``create_sales_order``,
``CreateSalesOrder``, ``CREATE_SALES_ORDER``. The index stores every identifier
twice: whole (lower-cased, so an exact name still matches exactly) and split into
its words, emitted next to each other so a phrase query on the words matches any
spelling. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from functools import lru_cache

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# Split camelCase, PascalCase, acronyms (HTTPServer -> HTTP Server) and digits.
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def split_identifier(name: str) -> list[str]:
    """Return the lower-cased words of an identifier: ``getHTTPResponse2`` -> get, http, response, 2."""
    words: list[str] = []
    for piece in name.split("_"):
        if piece:
            words.extend(p.lower() for p in _PARTS.findall(piece))
    return words


@lru_cache(maxsize=262_144)
def split_words(name: str) -> tuple[str, ...]:
    """:func:`split_identifier`, remembered (a ranking splits the same names query after query)."""
    return tuple(split_identifier(name))


@lru_cache(maxsize=262_144)
def _expand(token: str) -> str:
    whole = token.lower().strip("_")
    if not whole:
        return ""
    parts = split_identifier(token)
    return whole if len(parts) <= 1 else whole + " " + " ".join(parts)


def index_text(text: str) -> str:
    """Text as stored in an FTS5 column: each identifier whole, then its words if it has several."""
    return " ".join(e for e in map(_expand, _IDENT.findall(text)) if e)


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_clauses(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The terms :func:`fts_query` builds from ``text``, once each: (whole lower-cased
    identifier, its words when it has several, else ``()``)."""
    clauses: list[tuple[str, tuple[str, ...]]] = []
    seen: set[str] = set()
    for match in _IDENT.finditer(text):
        token = match.group(0)
        whole = token.lower().strip("_")
        if not whole or whole in seen:
            continue
        seen.add(whole)
        parts = split_identifier(token)
        clauses.append((whole, tuple(parts) if len(parts) > 1 else ()))
    return clauses


def fts_clause(whole: str, parts: tuple[str, ...] = ()) -> str:
    """One MATCH clause: the whole identifier, OR the phrase of its words when given."""
    return f"({_quote(whole)} OR {_quote(' '.join(parts))})" if parts else _quote(whole)


def fts_query(text: str, *, mode: str = "OR") -> str:
    """Build an FTS5 MATCH expression for free text or identifiers.

    Every identifier contributes its whole lower-cased form OR the phrase of its
    words, so ``createSalesOrder``, ``create_sales_order`` and ``create sales
    order`` find each other. Terms are joined with ``mode`` (``OR`` ranks by
    BM25, ``AND`` requires all). Returns "" when the text has no usable term.
    """
    return f" {mode} ".join(fts_clause(whole, parts) for whole, parts in fts_clauses(text))
