"""Lexical legs of search, over the SQLite index: BM25 over chunks, symbol names, paths.

- :func:`bm25_chunks`: FTS5 BM25 over ``chunks_fts`` (path, enclosing symbol and
  identifier-split text; ``createSalesOrder``, ``create_sales_order`` and "create sales
  order" find each other, and the whole identifier still matches exactly).
- :func:`symbol_chunks`: query words and identifiers matched against symbol names
  (``symbols_fts``), each symbol mapped to the chunk holding its definition.
- :func:`path_files`: files whose path words match the query, weighted by rarity.

The query analysis (:func:`query_terms`) is pure; the legs only run SQL.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from storage.tokens import fts_query, split_identifier

__all__ = [
    "QueryTerms",
    "bm25_chunks",
    "path_files",
    "query_terms",
    "stem",
    "variants",
    "symbol_chunks",
]

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "not",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "without",
        "into",
        "onto",
        "over",
        "under",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "do",
        "does",
        "did",
        "done",
        "doing",
        "have",
        "has",
        "had",
        "how",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "whose",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "there",
        "their",
        "them",
        "they",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "if",
        "then",
        "else",
        "than",
        "so",
        "such",
        "as",
        "about",
        "via",
        "per",
        "each",
        "every",
        "all",
        "any",
        "some",
        "use",
        "used",
        "uses",
        "using",
        "get",
        "gets",
        "make",
        "makes",
        "made",
        "work",
        "works",
        "handle",
        "handles",
        "handled",
        "happen",
        "happens",
        "code",
        "function",
        "functions",
        "method",
        "methods",
        "class",
        "classes",
        "file",
        "files",
        "implement",
        "implemented",
        "implementation",
        "logic",
        "find",
        "where's",
        "whats",
    ]
)

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*|[0-9]+")


def stem(word: str) -> str:
    """A deliberately tiny normalizer: lower case, and regular plurals to the singular."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("sses", "shes", "ches", "xes", "ses")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "as")):
        return w[:-1]
    return w


def variants(word: str) -> set[str]:
    """Spellings a query word may take in a name: itself, its singular and plural forms."""
    w = word.lower()
    out = {w, stem(w), w + "s", w + "es"}
    if w.endswith("y") and len(w) > 2:
        out.add(w[:-1] + "ies")
    if w.endswith("s") and len(w) > 3:
        out.add(w[:-1])
        if w.endswith("es"):
            out.add(w[:-2])
    return out


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What a query says, for matching: content words and code-looking identifiers."""

    words: tuple[str, ...]
    """Lower-cased content words (identifiers split, stopwords dropped), in query order."""
    stems: frozenset[str]
    """Every singular/plural spelling of the words (see :func:`variants`), for matching names."""
    identifiers: tuple[str, ...]
    """Tokens written like code: camelCase, snake_case, dotted, or any single bare token query."""
    text: str


def _looks_like_identifier(token: str) -> bool:
    return (
        "_" in token.strip("_")
        or "." in token
        or bool(re.search(r"[a-z][A-Z]", token))
        or (token[:1].isupper() and any(c.islower() for c in token[1:]) and len(split_identifier(token)) > 1)
    )


def query_terms(text: str) -> QueryTerms:
    tokens = _TOKEN.findall(text)
    words: list[str] = []
    idents: list[str] = []
    for tok in tokens:
        if _looks_like_identifier(tok) or len(tokens) == 1:
            idents.append(tok)
        for piece in tok.split("."):
            for w in split_identifier(piece) or [piece.lower()]:
                if w and w not in STOPWORDS and w not in words and (len(w) > 1 or w.isdigit()):
                    words.append(w)
    return QueryTerms(
        words=tuple(words),
        stems=frozenset(v for w in words for v in variants(w)),
        identifiers=tuple(dict.fromkeys(idents)),
        text=text,
    )


def _content_query(terms: QueryTerms) -> str:
    """The FTS5 MATCH text: identifiers whole (OR their words), then the remaining words."""
    parts = list(terms.identifiers)
    covered = {w for ident in terms.identifiers for p in ident.split(".") for w in split_identifier(p)}
    parts.extend(w for w in terms.words if w not in covered)
    return fts_query(" ".join(parts))


def _filter_sql(paths: Sequence[str] | None, languages: Sequence[str] | None) -> tuple[str, list[object]]:
    """SQL conditions on ``f`` (files) for path prefixes / globs and languages."""
    where: list[str] = []
    params: list[object] = []
    if paths:
        ors = []
        for p in paths:
            if any(ch in p for ch in "*?["):
                ors.append("f.path GLOB ?")
                params.append(p)
            else:
                p = p.strip("/")
                ors.append("(f.path = ? OR f.path LIKE ? ESCAPE '\\')")
                params.extend([p, _like_escape(p) + "/%"])
        where.append("(" + " OR ".join(ors) + ")")
    if languages:
        where.append("f.language IN (" + ",".join("?" * len(languages)) + ")")
        params.extend(languages)
    return (" AND " + " AND ".join(where)) if where else "", params


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


BM25_WEIGHTS = (2.0, 3.0, 1.0)
"""Column weights for (path, symbol, text) in ``chunks_fts``."""


def bm25_chunks(
    conn: sqlite3.Connection,
    terms: QueryTerms,
    *,
    limit: int = 50,
    paths: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> list[tuple[int, float]]:
    """Chunk ids by BM25 (best first) with their positive scores."""
    match = _content_query(terms)
    if not match:
        return []
    cond, params = _filter_sql(paths, languages)
    w = ", ".join(str(x) for x in BM25_WEIGHTS)
    if cond:
        sql = (
            f"SELECT chunks_fts.rowid, bm25(chunks_fts, {w}) AS s FROM chunks_fts "
            "JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id "
            f"WHERE chunks_fts MATCH ? {cond} ORDER BY s LIMIT ?"
        )
    else:
        sql = f"SELECT rowid, bm25(chunks_fts, {w}) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?"
    try:
        rows = conn.execute(sql, (match, *params, limit)).fetchall()
    except sqlite3.OperationalError:
        return []
    return [(int(r[0]), -float(r[1])) for r in rows]


def symbol_chunks(
    conn: sqlite3.Connection,
    terms: QueryTerms,
    *,
    limit: int = 50,
    paths: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
) -> list[tuple[int, float]]:
    """Chunks holding the definitions of symbols whose names match the query, best first.

    Exact name matches of identifiers in the query come first; then symbols ranked by
    BM25 over their split qualified names.
    """
    cond, params = _filter_sql(paths, languages)
    chunk_of = (
        "(SELECT c.id FROM chunks c WHERE c.file_id = s.file_id AND c.start_line <= s.name_line "
        "AND c.end_line >= s.name_line ORDER BY (c.end_line - c.start_line) LIMIT 1)"
    )
    out: dict[int, float] = {}
    names = [i.rsplit(".", 1)[-1] for i in terms.identifiers]
    if names:
        marks = ",".join("?" * len(names))
        sql = (
            f"SELECT {chunk_of}, s.name FROM symbols s JOIN files f ON f.id = s.file_id "
            f"WHERE s.name IN ({marks}) {cond} LIMIT ?"
        )
        for cid, _name in conn.execute(sql, (*names, *params, limit)):
            if cid is not None and int(cid) not in out:
                out[int(cid)] = 1000.0
    match = fts_query(" ".join(terms.words))
    if match and len(out) < limit:
        sql = (
            f"SELECT {chunk_of}, bm25(symbols_fts) AS b FROM symbols_fts "
            "JOIN symbols s ON s.id = symbols_fts.rowid JOIN files f ON f.id = s.file_id "
            f"WHERE symbols_fts MATCH ? {cond} ORDER BY b LIMIT ?"
        )
        try:
            rows = conn.execute(sql, (match, *params, limit * 2)).fetchall()
        except sqlite3.OperationalError:
            rows = []
        for cid, b in rows:
            if cid is not None and int(cid) not in out:
                out[int(cid)] = -float(b)
            if len(out) >= limit:
                break
    return sorted(out.items(), key=lambda kv: -kv[1])[:limit]


def path_words(path: str) -> set[str]:
    """Lower-cased words of a path's folders and file name (extension dropped)."""
    parts = path.split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    return {w for part in parts for w in split_identifier(part) if len(w) > 1}


def path_files(
    file_words: dict[str, set[str]],
    terms: QueryTerms,
    *,
    limit: int = 50,
) -> list[tuple[str, float]]:
    """Files ranked by the rarity-weighted query words found in their path (pure)."""
    if not terms.stems or not file_words:
        return []
    n = len(file_words)
    df: dict[str, int] = {}
    for words in file_words.values():
        for w in terms.stems & words:
            df[w] = df.get(w, 0) + 1
    if not df:
        return []
    idf = {w: math.log(1 + n / c) for w, c in df.items()}
    scored = []
    for path, words in file_words.items():
        hit = terms.stems & words
        if hit:
            scored.append((path, sum(idf[w] for w in hit) / math.sqrt(len(words) + 1)))
    scored.sort(key=lambda kv: (-kv[1], kv[0]))
    return scored[:limit]
