"""The SQLite index's answers to :class:`storage.query.IndexQueries`: every SQL statement the
search pipeline and the engine need, in one place, behind typed methods.

:class:`IndexReads` is a mixin of :class:`storage.db.Store` (which owns the connection). Every
SQLite error a query meets leaves it classified (:func:`storage.sqlite_errors.classify_query_error`);
a full-text query FTS5 cannot parse matches nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from storage.errors import StorageError
from storage.model import SymbolDef
from storage.query import (
    EVERYTHING,
    ChunkKey,
    ChunkPlace,
    ChunkRecord,
    ChunkRow,
    DefinitionSpan,
    FileContent,
    FileRow,
    IndexSignature,
    KindedDefinition,
    NameMatch,
    RefCount,
    RefRow,
    Scope,
    SymbolRow,
    Vector,
)
from storage.sqlite_errors import classify_query_error
from storage.sqlite_text import BATCH, CHUNK_OF, TextReads, like_escape, remember, scope_sql

__all__ = ["IndexReads", "SYMBOL_COLUMNS", "scope_sql", "symbol_from_row"]

_FILE_SYMBOLS_MEMO = 512  # files whose symbols one connection remembers
_DEFINITIONS_MEMO = 2048  # (file, kinds) whose definitions one connection remembers
_REF_COUNTS_MEMO = 20_000  # names whose use counts one connection remembers

SYMBOL_COLUMNS = (
    "s.id, s.name, s.qualified_name, s.kind, f.path, f.language, "
    "s.start_line, s.start_col, s.end_line, s.end_col, "
    "s.name_line, s.name_col, s.name_end_line, s.name_end_col, "
    "s.signature, s.container, s.docstring"
)


def symbol_from_row(row: Sequence[Any]) -> SymbolRow:
    from storage.model import Span

    (sid, name, qn, kind, path, lang, sl, sc, el, ec, nl, nc, nel, nec, sig, cont, doc) = row
    return SymbolRow(
        id=int(sid),
        definition=SymbolDef(
            name=str(name),
            qualified_name=str(qn),
            kind=str(kind),
            path=str(path),
            language=str(lang or ""),
            span=Span(int(sl), int(sc), int(el), int(ec)),
            name_span=Span(int(nl), int(nc), int(nel), int(nec)),
            signature=str(sig),
            container=None if cont is None else str(cont),
            docstring=None if doc is None else str(doc),
        ),
    )


class IndexReads(TextReads):
    """The read queries of one index database (and its vector cache's writes); the full-text
    ones are :class:`storage.sqlite_text.TextReads`'."""

    # -- history ---------------------------------------------------------------------------

    def history_commits(
        self, match: str, *, limit: int, max_files: int, scope: Scope
    ) -> list[tuple[float, list[str]]]:
        if not match or limit <= 0:
            return []
        cond, params = scope_sql(scope)
        best = self._rows(
            "SELECT h.rowid, -bm25(commits_fts) FROM commits_fts h JOIN commits c ON c.id = h.rowid "
            "WHERE commits_fts MATCH ? AND c.files BETWEEN 1 AND ? ORDER BY bm25(commits_fts), h.rowid LIMIT ?",
            (match, max_files, limit),
        )
        if not best:
            return []
        paths: dict[int, list[str]] = {int(cid): [] for cid, _s in best}
        ids = list(paths)
        for start in range(0, len(ids), BATCH):
            part = ids[start : start + BATCH]
            marks = ",".join("?" * len(part))
            for cid, path in self._rows(
                f"SELECT cf.commit_id, f.path FROM commit_files cf JOIN files f ON f.path = cf.path "
                f"WHERE cf.commit_id IN ({marks}) {cond} ORDER BY cf.rowid",
                (*part, *params),
            ):
                paths[int(cid)].append(str(path))
        return [(float(score), paths[int(cid)]) for cid, score in best if float(score) > 0]

    # -- symbols -----------------------------------------------------------------------------

    def symbols_named(self, names: Sequence[str], *, scope: Scope, limit: int) -> list[NameMatch]:
        if not names:
            return []
        cond, params = scope_sql(scope)
        marks = ",".join("?" * len(names))
        sql = (
            f"SELECT {CHUNK_OF}, s.name, s.qualified_name, f.path FROM symbols s JOIN files f ON f.id = s.file_id "
            f"WHERE s.name IN ({marks}) {cond} LIMIT ?"
        )
        rows = self._rows(sql, (*names, *params, limit))
        return [
            NameMatch(None if cid is None else int(cid), str(n), str(qn), str(p)) for cid, n, qn, p in rows
        ]

    def _symbols(self, where: str, params: Sequence[object], *, limit: int) -> list[SymbolRow]:
        sql = (
            f"SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id "
            f"WHERE {where} ORDER BY f.path, s.start_line LIMIT ?"
        )
        return [symbol_from_row(r) for r in self._iter(sql, (*params, limit))]

    def symbols(
        self,
        *,
        kinds: Sequence[str] | None = None,
        exclude_kinds: Sequence[str] = (),
        language: str | None = None,
        limit: int,
    ) -> list[SymbolRow]:
        where: list[str] = []
        params: list[object] = []
        if kinds is not None:
            where.append("s.kind IN (" + ",".join("?" * len(kinds)) + ")" if kinds else "0")
            params.extend(kinds)
        if exclude_kinds:
            where.append("s.kind NOT IN (" + ",".join("?" * len(exclude_kinds)) + ")")
            params.extend(exclude_kinds)
        if language is not None:
            where.append("f.language = ?")
            params.append(language)
        return self._symbols(" AND ".join(where) or "1=1", params, limit=limit)

    def definitions_in(
        self, path: str, *, kinds: Sequence[str], start_line: int, end_line: int
    ) -> list[DefinitionSpan]:
        marks = ",".join("?" * len(kinds))
        rows = self._rows(
            f"SELECT s.qualified_name, s.start_line, s.end_line, s.signature FROM symbols s "
            f"JOIN files f ON f.id = s.file_id WHERE f.path = ? AND s.kind IN ({marks}) "
            "AND s.end_line >= ? AND s.start_line <= ? ORDER BY s.start_line",
            (path, *kinds, start_line, end_line),
        )
        return [DefinitionSpan(str(qn), int(sl), int(el), sig) for qn, sl, el, sig in rows]

    def definitions_of(
        self, paths: Sequence[str], *, kinds: Sequence[str]
    ) -> dict[str, list[KindedDefinition]]:
        """Remembered per connection, by file and kinds, while the database is unchanged (the
        code view reads every definition of its best files, query after query)."""
        memo = self._memo("_definitions_memo")
        kinds_key = tuple(kinds)
        out: dict[str, list[KindedDefinition]] = {}
        missing: list[str] = []
        for path in dict.fromkeys(paths):
            known = memo.get((path, kinds_key))
            if known is None:
                missing.append(path)
            elif known:
                out[path] = list(known)
        marks = ",".join("?" * len(kinds))
        for start in range(0, len(missing), 500):
            part = missing[start : start + 500]
            rows = self._rows(
                f"SELECT f.path, s.qualified_name, s.start_line, s.end_line, s.signature, s.kind FROM symbols s "
                f"JOIN files f ON f.id = s.file_id WHERE f.path IN ({','.join('?' * len(part))}) "
                f"AND s.kind IN ({marks}) ORDER BY f.path, s.start_line, s.id",
                (*part, *kinds),
            )
            for path, qn, sl, el, sig, kind in rows:
                out.setdefault(str(path), []).append(
                    KindedDefinition(str(qn), int(sl), int(el), sig, str(kind))
                )
            for path in part:
                remember(memo, (path, kinds_key), tuple(out.get(path, ())), _DEFINITIONS_MEMO)
        return out

    def symbols_by_name(self, name: str) -> list[SymbolRow]:
        return self._symbols("s.name = ?", (name,), limit=1000)

    def symbols_by_qualified_suffix(self, dotted: str) -> list[SymbolRow]:
        """Symbols whose qualified name is ``dotted`` or ends with ``.dotted``."""
        last = dotted.rsplit(".", 1)[-1]
        return self._symbols(
            "s.name = ? AND (s.qualified_name = ? OR s.qualified_name LIKE ? ESCAPE '\\')",
            (last, dotted, "%." + like_escape(dotted)),
            limit=1000,
        )

    def symbols_in_file(self, path: str) -> list[SymbolRow]:
        """A file's symbols; remembered per connection while the database is unchanged (an
        exact answer asks for the symbols of every file its hits are in, request after request)."""
        memo = self._file_symbols_memo()
        rows = memo.get(path)
        if rows is None:
            rows = self._symbols("f.path = ?", (path,), limit=100_000)
            remember(memo, path, rows, _FILE_SYMBOLS_MEMO)
        return list(rows)

    def _file_symbols_memo(self) -> dict[str, list[SymbolRow]]:
        """The memo of :meth:`symbols_in_file` (:meth:`_memo`)."""
        return self._memo("_symbols_memo")

    def symbols_fts(self, match: str, *, limit: int = 200) -> list[SymbolRow]:
        if not match:
            return []
        sql = (
            f"SELECT {SYMBOL_COLUMNS} FROM symbols_fts "
            "JOIN symbols s ON s.id = symbols_fts.rowid JOIN files f ON f.id = s.file_id "
            "WHERE symbols_fts MATCH ? ORDER BY bm25(symbols_fts) LIMIT ?"
        )
        return [symbol_from_row(r) for r in self._match_rows(sql, (match, limit))]

    def symbol_names(self) -> list[str]:
        return [str(r[0]) for r in self._rows("SELECT DISTINCT name FROM symbols")]

    def symbols_like(self, pattern: str, *, limit: int = 2000) -> list[SymbolRow]:
        return self._symbols(
            "s.qualified_name LIKE ? ESCAPE '\\'", ("%" + like_escape(pattern) + "%",), limit=limit
        )

    def refs_by_name(self, name: str, *, limit: int = 100_000) -> list[RefRow]:
        sql = (
            "SELECT f.path, r.name, r.line, r.col, r.end_col FROM refs r JOIN files f ON f.id = r.file_id "
            "WHERE r.name = ? ORDER BY f.path, r.line, r.col LIMIT ?"
        )
        return [
            RefRow(str(p), str(n), int(ln), int(c), int(e))
            for p, n, ln, c, e in self._iter(sql, (name, limit))
        ]

    def file_row(self, path: str) -> FileRow | None:
        r = self._one("SELECT path, language, hash, size, mtime_ns FROM files WHERE path=?", (path,))
        return None if r is None else FileRow(r[0], r[1], r[2], int(r[3]), int(r[4]))

    def chunks_by_ids(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        out: dict[int, ChunkRow] = {}
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            sql = (
                "SELECT c.id, f.path, f.language, c.start_line, c.end_line, c.symbol, c.signature,"
                f" c.text, c.hash FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})"
            )
            for r in self._rows(sql, part):
                out[int(r[0])] = ChunkRow(*r)
        return out

    # -- references --------------------------------------------------------------------------

    def names_used_in(self, path: str, start_line: int, end_line: int) -> set[str]:
        rows = self._rows(
            "SELECT DISTINCT r.name FROM refs r JOIN files f ON f.id = r.file_id"
            " WHERE f.path = ? AND r.line BETWEEN ? AND ?",
            (path, start_line, end_line),
        )
        return {str(r[0]) for r in rows}

    def ref_counts(self, names: Sequence[str]) -> dict[str, int]:
        """Remembered per connection by name while the database is unchanged (the code view
        counts the uses of every definition of its best files, query after query)."""
        if not names:
            return {}
        memo = self._memo("_ref_counts_memo")
        counts: dict[str, int] = {}
        missing: list[str] = []
        for name in dict.fromkeys(names):
            if name in memo:
                counts[name] = memo[name]
            else:
                missing.append(name)
        for start in range(0, len(missing), 500):
            part = missing[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self._rows(f"SELECT name, count(*) FROM refs WHERE name IN ({marks}) GROUP BY name", part)
            counted = {str(n): int(c) for n, c in rows}
            for name in part:
                counts[name] = counted.get(name, 0)
                remember(memo, name, counts[name], _REF_COUNTS_MEMO)
        return {name: n for name, n in counts.items() if n}

    def chunks_using(self, names: Sequence[str], *, scope: Scope, limit: int) -> list[int]:
        if not names:
            return []
        cond, params = scope_sql(scope)
        marks = ",".join("?" * len(names))
        sql = (
            "SELECT c.id, count(*) AS n FROM refs r JOIN chunks c ON c.file_id = r.file_id "
            "AND c.start_line <= r.line AND c.end_line >= r.line JOIN files f ON f.id = c.file_id "
            f"WHERE r.name IN ({marks}) {cond} GROUP BY c.id ORDER BY n DESC, c.id LIMIT ?"
        )
        return [int(r[0]) for r in self._rows(sql, (*names, *params, limit))]

    def ref_counts_by_file(self) -> list[RefCount]:
        rows = self._rows(
            "SELECT f.path, r.name, count(*) FROM refs r JOIN files f ON f.id = r.file_id GROUP BY r.file_id, r.name"
        )
        return [RefCount(str(p), str(n), int(c)) for p, n, c in rows]

    # -- files and chunks --------------------------------------------------------------------

    def has_files(self) -> bool:
        return self._one("SELECT 1 FROM files LIMIT 1") is not None

    def files_signature(self) -> tuple[int, float]:
        row = self._one("SELECT count(*), coalesce(max(indexed_at), 0) FROM files")
        return (int(row[0]), float(row[1])) if row else (0, 0.0)

    def index_signature(self) -> IndexSignature:
        chunks = self._one("SELECT count(*), max(id), total(id) FROM chunks")
        files = self._one("SELECT count(*), max(indexed_at) FROM files")
        return IndexSignature(*chunks, *files)

    def file_paths(self, scope: Scope = EVERYTHING) -> list[str]:
        if scope.everything:
            return [str(r[0]) for r in self._rows("SELECT path FROM files")]
        cond, params = scope_sql(scope)
        return [str(r[0]) for r in self._rows("SELECT f.path FROM files f WHERE 1=1 " + cond, params)]

    def chunk_ids(self, scope: Scope) -> list[int]:
        cond, params = scope_sql(scope)
        sql = f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE 1=1 {cond}"
        return [int(r[0]) for r in self._rows(sql, params)]

    def chunk_places(self, ids: Sequence[int]) -> dict[int, ChunkPlace]:
        out: dict[int, ChunkPlace] = {}
        ids = list(ids)
        for start in range(0, len(ids), BATCH):
            part = ids[start : start + BATCH]
            marks = ",".join("?" * len(part))
            for cid, path, sym, sl in self._rows(
                f"SELECT c.id, f.path, c.symbol, c.start_line FROM chunks c JOIN files f ON f.id = c.file_id "
                f"WHERE c.id IN ({marks})",
                part,
            ):
                out[int(cid)] = ChunkPlace(int(cid), str(path), sym, int(sl))
        return out

    def first_chunks(self, paths: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in paths:
            r = self._one(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ? "
                "ORDER BY c.start_line LIMIT 1",
                (p,),
            )
            if r is not None:
                out[p] = int(r[0])
        return out

    def file_chunk_texts(self, paths: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        out: dict[str, list[tuple[int, str]]] = {}
        wanted = list(dict.fromkeys(paths))
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            rows = self._rows(
                "SELECT f.path, c.start_line, c.text FROM chunks c JOIN files f ON f.id = c.file_id"
                f" WHERE f.path IN ({','.join('?' * len(part))}) ORDER BY f.path, c.start_line, c.id",
                part,
            )
            for path, line, text in rows:
                out.setdefault(str(path), []).append((int(line), str(text)))
        return out

    def chunk_keys(self) -> list[ChunkKey]:
        return [
            ChunkKey(int(i), str(h), str(p), s, g)
            for i, h, p, s, g in self._iter(
                "SELECT c.id, c.hash, f.path, c.symbol, c.signature FROM chunks c JOIN files f ON f.id = c.file_id"
            )
        ]

    def file_contents(self) -> list[FileContent]:
        chunks: dict[int, list[ChunkRecord]] = {}
        for fid, sl, el, sym, sig, text, h in self._iter(
            "SELECT c.file_id, c.start_line, c.end_line, c.symbol, c.signature, c.text, c.hash "
            "FROM chunks c ORDER BY c.file_id, c.start_line, c.id"
        ):
            chunks.setdefault(int(fid), []).append(ChunkRecord(int(sl), int(el), sym, sig, str(text), str(h)))
        symbols: dict[str, list[SymbolDef]] = {}
        for row in self._symbols("1=1", (), limit=-1):
            symbols.setdefault(row.definition.path, []).append(row.definition)
        return [
            FileContent(
                path=str(path),
                language=lang,
                hash=str(h),
                size=int(size),
                lines=int(lines),
                chunks=tuple(chunks.get(int(fid), ())),
                symbols=tuple(symbols.get(str(path), ())),
            )
            for fid, path, lang, h, size, lines in self._rows(
                "SELECT id, path, language, hash, size, lines FROM files ORDER BY path"
            )
        ]

    # -- vectors -----------------------------------------------------------------------------

    def vector_dim(self, model: str) -> int | None:
        row = self._one("SELECT dim FROM embeddings WHERE model = ? LIMIT 1", (model,))
        return None if row is None else int(row[0])

    def vector_keys(self, model: str, keys: Sequence[str]) -> set[str]:
        have: set[str] = set()
        for start in range(0, len(keys), BATCH):
            part = list(keys[start : start + BATCH])
            marks = ",".join("?" * len(part))
            have.update(
                str(r[0])
                for r in self._rows(
                    f"SELECT hash FROM embeddings WHERE model = ? AND hash IN ({marks})", (model, *part)
                )
            )
        return have

    def fetch_vectors(self, model: str, keys: Sequence[str]) -> dict[str, Vector]:
        out: dict[str, Vector] = {}
        for start in range(0, len(keys), BATCH):
            part = list(keys[start : start + BATCH])
            marks = ",".join("?" * len(part))
            for h, dim, blob in self._rows(
                f"SELECT hash, dim, vector FROM embeddings WHERE model = ? AND hash IN ({marks})",
                (model, *part),
            ):
                if isinstance(blob, bytes) and len(blob) == 4 * int(dim):
                    out[str(h)] = np.frombuffer(blob, dtype=np.float32)
        return out

    def push_vectors(self, model: str, vectors: Mapping[str, Vector]) -> int:
        if not vectors:
            return 0
        rows = [
            (model, k, int(v.shape[-1]), np.ascontiguousarray(v, dtype=np.float32).tobytes())
            for k, v in vectors.items()
        ]
        with self.transaction():
            try:
                self.conn.executemany(
                    "INSERT OR REPLACE INTO embeddings(model, hash, dim, vector) VALUES (?,?,?,?)", rows
                )
            except StorageError:
                raise
            except sqlite3.Error as exc:
                raise classify_query_error(exc, self.path) from exc
        return len(rows)
