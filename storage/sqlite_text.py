"""The SQLite index's full-text reads (FTS5 BM25 over chunks and symbol names, document
frequencies) and the one way every read runs SQL (:class:`SqlSeam`): the base of
:class:`storage.sqlite_queries.IndexReads`. Every SQLite error a query meets leaves it classified
(:func:`storage.sqlite_errors.classify_query_error`); a full-text query FTS5 cannot parse matches
nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage.errors import StorageError
from storage.query import ChunkWords, FtsTable, NameScore, Scope, ScoredChunk
from storage.sqlite_errors import classify_query_error, is_fts_query_error

__all__ = ["SqlSeam", "TextReads", "scope_sql"]

_FTS_TABLE: dict[str, str] = {"chunks": "chunks_fts", "symbols": "symbols_fts"}
BATCH = 500
_NAMES_FIRST = 4  # a short query's symbol match reads this many times the names it returns
_DOC_FREQ_MEMO = 50_000  # (table, word) document frequencies one connection remembers (~5 MB)

# The chunk holding a symbol's name: the smallest that spans its line.
CHUNK_OF = (
    "(SELECT c.id FROM chunks c WHERE c.file_id = s.file_id AND c.start_line <= s.name_line "
    "AND c.end_line >= s.name_line ORDER BY (c.end_line - c.start_line) LIMIT 1)"
)


def like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def scope_sql(scope: Scope) -> tuple[str, list[object]]:
    """SQL conditions on ``f`` (files) for a scope's path prefixes / globs and languages,
    each after `` AND `` ("" for the whole index)."""
    where: list[str] = []
    params: list[object] = []
    if scope.paths:
        ors = []
        for p in scope.paths:
            if any(ch in p for ch in "*?["):
                ors.append("f.path GLOB ?")
                params.append(p)
            else:
                p = p.strip("/")
                ors.append("(f.path = ? OR f.path LIKE ? ESCAPE '\\')")
                params.extend([p, like_escape(p) + "/%"])
        where.append("(" + " OR ".join(ors) + ")")
    if scope.languages:
        where.append("f.language IN (" + ",".join("?" * len(scope.languages)) + ")")
        params.extend(scope.languages)
    return (" AND " + " AND ".join(where)) if where else "", params


def kinds_literal(kinds: Sequence[str]) -> str:
    """``'a', 'b'`` for kinds that are plain identifiers (the only ones a kind can be)."""
    return ", ".join(repr(k) for k in kinds if k.isidentifier())


class SqlSeam:
    """How a read runs SQL on :class:`storage.db.Store`'s connection (the store owns it)."""

    if TYPE_CHECKING:
        path: Path

        @property
        def conn(self) -> sqlite3.Connection: ...

        def transaction(self) -> AbstractContextManager[None]: ...

    # -- the seam's one way to run SQL -------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except StorageError:
            raise
        except sqlite3.Error as exc:
            raise classify_query_error(exc, self.path) from exc

    def _iter(self, sql: str, params: Sequence[object] = ()) -> Iterator[Any]:
        """Rows one by one (a table too large to hold twice); errors classified as in :meth:`_rows`."""
        try:
            yield from self.conn.execute(sql, params)
        except StorageError:
            raise
        except sqlite3.Error as exc:
            raise classify_query_error(exc, self.path) from exc

    def _match_rows(self, sql: str, params: Sequence[object]) -> list[Any]:
        """Rows of a full-text query: one FTS5 cannot parse matches nothing."""
        try:
            return self.conn.execute(sql, params).fetchall()
        except StorageError:
            raise
        except sqlite3.Error as exc:
            if is_fts_query_error(exc, sql):
                return []
            raise classify_query_error(exc, self.path) from exc

    def _one(self, sql: str, params: Sequence[object] = ()) -> Any:
        rows = self._rows(sql, params)
        return rows[0] if rows else None


def remember(memo: dict[Any, Any], key: Any, value: Any, cap: int) -> None:
    """Put ``key`` in a connection's memo of at most ``cap`` entries, the oldest dropped first."""
    if key not in memo and len(memo) >= cap:
        del memo[next(iter(memo))]
    memo[key] = value


class TextReads(SqlSeam):
    """Full-text reads; a connection remembers the document frequencies it counted."""

    def doc_freqs(self, words: Sequence[str], *, cap: int) -> dict[str, int]:
        return self.table_doc_freqs(words, cap=cap, table="chunks")

    def table_doc_freqs(self, words: Sequence[str], *, cap: int, table: FtsTable) -> dict[str, int]:
        name = _FTS_TABLE.get(table)
        if name is None:
            raise ValueError(f"table must be one of {sorted(_FTS_TABLE)}, got {table!r}")
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {name} WHERE {name} MATCH ? LIMIT ?)"
        out: dict[str, int] = {}
        memo = self._doc_freq_memo()
        for w in words:
            if w in out or not w:
                continue
            known = memo.get((table, w))
            # (count, counted up to): exact below its cap, else a lower bound good up to that cap
            if known is not None and (known[0] <= known[1] or cap <= known[1]):
                out[w] = min(known[0], cap + 1)
                continue
            rows = self._match_rows(sql, ('"' + w.replace('"', '""') + '"', cap + 1))
            out[w] = int(rows[0][0]) if rows else 0
            remember(memo, (table, w), (out[w], cap), _DOC_FREQ_MEMO)
        return out

    def _doc_freq_memo(self) -> dict[tuple[str, str], tuple[int, int]]:
        """Words' document frequencies as counted so far (pasted issues on one checkout share
        most of their words): :meth:`_memo`."""
        return self._memo("_df_memo")

    def _memo(self, name: str) -> dict[Any, Any]:
        """The connection's memo held in attribute ``name``, emptied when anything was committed
        since: by another connection (``PRAGMA data_version`` moves) or by this one
        (``total_changes``)."""
        state = (self._rows("PRAGMA data_version")[0][0], self.conn.total_changes)
        held = getattr(self, name, None)
        if held is None or held[0] != state:
            held = (state, {})
            setattr(self, name, held)
        memo: dict[Any, Any] = held[1]
        return memo

    def vocab_doc_freqs(self, words: Sequence[str]) -> dict[str, int]:
        """Each indexed term's document count (terms the index lacks are left out); remembered
        per connection (:meth:`_memo`: the code view counts a query's words on every question)."""
        memo = self._memo("_vocab_memo")
        counts = {w: memo[w] for w in dict.fromkeys(words) if w in memo}
        lookups = [w for w in dict.fromkeys(words) if w not in counts]
        if lookups:
            self._rows(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.nav_chunks_vocab USING fts5vocab(main, 'chunks_fts', 'row')"
            )
        found: dict[str, int] = {}
        for start in range(0, len(lookups), BATCH):
            part = lookups[start : start + BATCH]
            marks = ",".join("?" * len(part))
            for term, doc in self._rows(
                f"SELECT term, doc FROM temp.nav_chunks_vocab WHERE term IN ({marks})", part
            ):
                found[str(term)] = int(doc)
        for w in lookups:  # a term the index lacks is remembered as 0, and left out
            counts[w] = found.get(w, 0)
            remember(memo, w, counts[w], _DOC_FREQ_MEMO)
        return {w: n for w, n in counts.items() if n}

    def chunk_count(self) -> int:
        row = self._one("SELECT count(*) FROM chunks")
        return int(row[0] or 0) if row else 0

    def chunk_id_high(self) -> int:
        row = self._one("SELECT max(rowid) FROM chunks_fts")
        return int(row[0] or 0) if row else 0

    def symbol_count(self) -> int:
        row = self._one("SELECT count(*) FROM symbols")
        return int(row[0] or 0) if row else 0

    def bm25_chunks(
        self, match: str, *, weights: tuple[float, float, float], scope: Scope, limit: int
    ) -> list[ScoredChunk]:
        if not match:
            return []
        cond, params = scope_sql(scope)
        w = ", ".join(str(x) for x in weights)
        if cond:
            sql = (
                f"SELECT chunks_fts.rowid, bm25(chunks_fts, {w}) AS s FROM chunks_fts "
                "JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id "
                f"WHERE chunks_fts MATCH ? {cond} ORDER BY s LIMIT ?"
            )
        else:
            sql = f"SELECT rowid, bm25(chunks_fts, {w}) AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?"
        rows = self._match_rows(sql, (match, *params, limit))
        return [ScoredChunk(int(r[0]), -float(r[1])) for r in rows]

    def chunk_words(self, ids: Sequence[int]) -> list[ChunkWords]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._rows(f"SELECT symbol, text FROM chunks_fts WHERE rowid IN ({marks})", list(ids))
        return [ChunkWords(sym, str(text)) for sym, text in rows]

    def symbol_bm25_chunks(
        self,
        match: str,
        *,
        scope: Scope,
        skip_kinds: Sequence[str],
        limit: int,
        rank_first: bool = False,
    ) -> list[NameScore]:
        if not match:
            return []
        cond, params = scope_sql(scope)
        kinds = kinds_literal(skip_kinds)
        kind_sql = f"AND s.kind NOT IN ({kinds})" if kinds else ""
        if rank_first and not cond:
            # Each matched name's chunk is found for the best only (SQLite ran the chunk look-up
            # for every matched row before sorting).
            sql = (
                f"SELECT {CHUNK_OF}, t.b FROM (SELECT rowid AS id, bm25(symbols_fts) AS b FROM symbols_fts "
                f"WHERE symbols_fts MATCH ? ORDER BY b LIMIT ?) t JOIN symbols s ON s.id = t.id "
                f"WHERE 1 {kind_sql} ORDER BY t.b"
            )
        else:
            found = None if cond else self._best_names_first(match, kind_sql, limit)
            if found is not None:
                return found
            sql = (
                f"SELECT {CHUNK_OF}, bm25(symbols_fts) AS b FROM symbols_fts "
                "JOIN symbols s ON s.id = symbols_fts.rowid JOIN files f ON f.id = s.file_id "
                f"WHERE symbols_fts MATCH ? {cond} {kind_sql} ORDER BY b LIMIT ?"
            )
        rows = self._match_rows(sql, (match, *params, limit))
        return [NameScore(None if cid is None else int(cid), -float(b)) for cid, b in rows]

    def _best_names_first(self, match: str, kind_sql: str, limit: int) -> list[NameScore] | None:
        """The answer of the whole query (every matched name joined with its symbol and chunk,
        then sorted) from the best ``_NAMES_FIRST * limit`` names alone: the same names (ties
        aside) whenever ``limit`` of those are of the kinds wanted or fewer names matched; None
        when it cannot tell. A common word matches thousands of names (5,077 of Django's 34,229
        for a one-line issue), and the chunk look-up ran for each before sorting: 26 -> 12 ms."""
        depth = _NAMES_FIRST * limit
        best = self._match_rows(
            "SELECT rowid, bm25(symbols_fts) AS b FROM symbols_fts WHERE symbols_fts MATCH ? ORDER BY b LIMIT ?",
            (match, depth),
        )
        if not best:
            return []
        score = {int(r[0]): float(r[1]) for r in best}
        marks = ",".join("?" * len(score))
        wanted = [
            int(r[0])
            for r in self._rows(f"SELECT s.id FROM symbols s WHERE s.id IN ({marks}) {kind_sql}", list(score))
        ]
        if len(wanted) < limit and len(best) == depth:
            return None  # more names matched than were read, and too few of these are wanted
        top = sorted(wanted, key=lambda i: score[i])[:limit]
        marks = ",".join("?" * len(top))
        chunk = dict(self._rows(f"SELECT s.id, {CHUNK_OF} FROM symbols s WHERE s.id IN ({marks})", top))
        return [NameScore(None if chunk.get(i) is None else int(chunk[i]), -score[i]) for i in top]
