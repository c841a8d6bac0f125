"""The index database: one SQLite file per indexed root, managed with sqlite-utils.

Layout (schema version in ``meta``):

- ``files``: one row per indexed file (path, language, content hash, size, mtime).
- ``symbols``: definitions (name, qualified name, kind, ranges, signature, container, docstring).
- ``chunks``: syntax-aware chunks (line range, enclosing symbol, signature, text, content hash).
- ``refs``: identifier occurrences outside comments and strings (the syntax-level fallback).
- ``symbols_fts`` / ``chunks_fts``: FTS5 tables over identifier-split text, for BM25.
- ``embeddings``: vectors cached by (model id, chunk content hash).

Writes go through :meth:`Store.transaction`; every file's rows are replaced in the
same transaction as its ``files`` row, so a killed process leaves each file either
fully old or fully new and the database always answers. WAL mode lets readers go on
while an index run writes.

The file is only ever opened through SQLite: its POSIX locks belong to the process, and closing
any other descriptor of the file would drop them all (see :func:`storage.sqlite_files.make_private`). An index that
looks damaged is rebuilt only when ``integrity_check`` says so, keeping what reads cleanly
(:func:`rebuild_database`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import sqlite_utils

from storage.errors import (
    IndexDamagedError,
    IndexReadOnlyError,
    StorageError,
)
from storage.model import ParsedFile
from storage.query import ChunkRow as ChunkRow  # re-exported: where the engine imports them from
from storage.query import FileRow as FileRow
from storage.query import HistoryCommit, IndexQueries
from storage.query import RefRow as RefRow
from storage.query import SymbolRow as SymbolRow
from storage.sqlite_errors import _SQLITE_CORRUPT, _SQLITE_NOTADB, classify_error
from storage.sqlite_files import (
    GuardedConnection,
    check_index_files,
    discard_database,
    make_private,
    sidecars,
)
from storage.sqlite_queries import IndexReads
from storage.sqlite_schema import MIGRATIONS, SCHEMA_V1, SCHEMA_VERSION, fill_fts, split_sql
from storage.tokens import index_text

log = logging.getLogger("storage.db")

_KEPT_TABLES = ("files", "symbols", "chunks", "refs", "skipped")
"""The index proper, kept from a damaged file only all together (its ids tie them to each other
and to the vectors file); the full-text tables are rebuilt from them."""
_FTS_TABLES = ("chunks_fts", "symbols_fts")
UPKEEP_MIN_FILES = 50
"""Fewer files changed than this since the last merge never make a full-text merge due."""
MERGE_PAGES = 500
"""Pages one merge step writes at most (~0.2 s on a 2-core machine)."""


@dataclass(frozen=True, slots=True)
class Salvage:
    """What :func:`rebuild_database` carried from a damaged index into the new one."""

    vectors: int
    """Cached embedding vectors kept (the expensive part: each cost a model run)."""
    files: int
    """Files whose rows (symbols, chunks, references) were kept; 0 when they are rebuilt."""
    unread: tuple[str, ...]
    """Tables that did not read cleanly (what was lost)."""

    def describe(self) -> str:
        kept = []
        if self.vectors:
            kept.append(f"{self.vectors:,} cached vectors")
        if self.files:
            kept.append(f"the symbols, chunks and references of {self.files:,} files (each re-checked)")
        out = ("kept " + " and ".join(kept)) if kept else "nothing could be kept"
        if not self.files:
            out += "; symbols and chunks are rebuilt from the working tree"
        if self.unread:
            out += f" (unreadable: {', '.join(self.unread)})"
        return out


def integrity(path: Path, *, timeout_s: float = 10.0) -> str | None:
    """SQLite's full ``integrity_check`` of the file, on a connection of its own: None when it
    passes, else what it found (or the error it stopped on). The one test of damage that may
    lead to rebuilding an index."""
    check_index_files(path)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout_s)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(5)")]
    except sqlite3.DatabaseError as exc:
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
            return str(exc)
        raise classify_error(exc, path) or StorageError(f"cannot check the index at {path}: {exc}") from exc
    finally:
        conn.close()
    return None if rows == ["ok"] else "; ".join(rows)[:300]


def rebuild_database(path: Path, *, chunk_ok: Callable[[str, str], bool] | None = None) -> Salvage:
    """Replace the damaged index at ``path`` with a new one holding what still reads cleanly:
    the embedding cache (row by row, up to the first unreadable page), and the index proper when
    every one of its tables reads cleanly and agrees with itself. Bytes can be wrong and still
    read cleanly, so what is kept is re-checked: a chunk whose text fails ``chunk_ok(text, hash)``
    is dropped, and the next index run re-parses every file (rows that match are updated in place,
    keeping their ids). The caller holds the index lock
    and has closed its own connections to the file; other processes notice the new file by its
    inode (:meth:`Store.replaced`)."""
    fresh = path.with_name(path.name + ".rebuild")
    discard_database(fresh)
    unread: list[str] = []
    vectors = files = 0
    try:
        old: sqlite3.Connection | None = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10
        )
    except sqlite3.Error:
        old = None
    try:
        with Store(fresh) as new:
            if old is not None:
                vectors = _copy_vectors(old, new, unread)
                files = _copy_index(old, new, unread, chunk_ok)
            new.conn.execute("PRAGMA journal_mode=DELETE")  # one file to move into place
    finally:
        if old is not None:
            old.close()
    # The damaged file's WAL goes first (stale frames must never meet the new file), then the
    # new file takes its name in one step: there is never a moment without an index.db, in which
    # another process would create an empty one (and a WAL of its own) beside ours.
    for p in (*sidecars(path), *sidecars(fresh)):
        with suppress(FileNotFoundError):
            p.unlink()
    os.replace(fresh, path)
    return Salvage(vectors=vectors, files=files, unread=tuple(unread))


def _copy_vectors(old: sqlite3.Connection, new: Store, unread: list[str]) -> int:
    kept = 0
    try:
        cur = old.execute("SELECT model, hash, dim, vector FROM embeddings")
        while rows := cur.fetchmany(1000):
            good = [
                r for r in rows if isinstance(r[3], bytes) and isinstance(r[2], int) and len(r[3]) == 4 * r[2]
            ]
            with new.transaction():
                new.conn.executemany(
                    "INSERT OR IGNORE INTO embeddings(model, hash, dim, vector) VALUES (?,?,?,?)", good
                )
            kept += len(good)
    except sqlite3.DatabaseError:
        unread.append("embeddings")
    return kept


def _copy_index(
    old: sqlite3.Connection, new: Store, unread: list[str], chunk_ok: Callable[[str, str], bool] | None
) -> int:
    """The index proper, all or nothing; returns the files kept (0: none)."""
    try:
        row = old.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or int(row[0]) != SCHEMA_VERSION:
            return 0
    except (sqlite3.DatabaseError, ValueError):
        unread.append("meta")
        return 0
    c = new.conn
    table = "meta"
    try:
        with new.transaction():
            for table in _KEPT_TABLES:
                cols = ", ".join(str(r[1]) for r in c.execute(f"PRAGMA table_info({table})"))
                marks = ", ".join("?" * len(cols.split(", ")))
                cur = old.execute(f"SELECT {cols} FROM {table}")
                while rows := cur.fetchmany(2000):
                    c.executemany(f"INSERT INTO {table}({cols}) VALUES ({marks})", rows)
            table = "meta"
            c.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                old.execute(  # the history tables are not kept: read again by the next run
                    "SELECT key, value FROM meta WHERE key != 'schema_version' AND key NOT LIKE 'history%'"
                ).fetchall(),
            )
            new.set_meta("parser_fingerprint", "salvaged")  # the next run re-parses every file
            if chunk_ok is not None:
                bad = [
                    (cid,)
                    for cid, text, h in c.execute("SELECT id, text, hash FROM chunks")
                    if not chunk_ok(text, h)
                ]
                c.executemany("DELETE FROM chunks WHERE id = ?", bad)
            table = "the index tables (rows of no file)"
            if c.execute("PRAGMA foreign_key_check").fetchone() is not None:
                raise _Inconsistent(table)
            table = "the full-text tables"
            fill_fts(c)
    except (sqlite3.DatabaseError, StorageError, _Inconsistent):
        unread.append(table)
        return 0
    return int(c.execute("SELECT count(*) FROM files").fetchone()[0])


class _Inconsistent(Exception):
    """Rows that read cleanly but do not agree with each other (a symbol of no file)."""


@dataclass(frozen=True, slots=True)
class StoreStats:
    files: int
    symbols: int
    chunks: int
    refs: int
    languages: dict[str, int]
    last_run: str | None
    last_run_complete: bool
    last_run_finished_at: float | None
    history_commits: int = 0
    history_head: str | None = None


class Store(IndexReads):
    """Owns one SQLite connection to an index database. Use as a context manager.

    Its reads for the layers above are :class:`storage.query.IndexQueries` (implemented by
    :class:`storage.sqlite_queries.IndexReads`): no SQL crosses into them."""

    def __init__(
        self,
        path: Path,
        *,
        create: bool = True,
        timeout_s: float = 10.0,
        read_only: bool | None = None,
    ) -> None:
        """Open (or create) the index at ``path``.

        ``read_only``: None decides from the file system (a folder or file nav cannot write is
        opened read-only, so queries still work). Raises :class:`IndexDamagedError` when the file
        is not a database or fails SQLite's check of its structure on opening.
        """
        self.path = Path(path)
        check_index_files(self.path)
        if read_only is None:
            read_only = not _writable(self.path)
        self.read_only = read_only
        if (not create or read_only) and not self.path.exists():
            raise StorageError(f"no index database at {self.path}; run `nav index`")
        try:
            if not read_only:
                self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create {self.path.parent}: {exc.strerror or exc}") from exc
        try:
            self._ino = os.stat(self.path).st_ino if self.path.exists() else 0
            conn = self._connect(timeout_s)
            self.db = sqlite_utils.Database(conn)
            if not read_only:
                make_private(self.path)  # before the WAL files exist: they take its mode
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
            if read_only:
                self._check_version()
            else:
                self._migrate()
            self._ino = os.stat(self.path).st_ino
        except StorageError:
            self._close_quietly()
            raise
        except sqlite3.DatabaseError as exc:
            self._close_quietly()
            raise classify_error(exc, self.path) or StorageError(
                f"cannot open the index at {self.path}: {exc}; run `nav index` to rebuild it"
            ) from exc
        except OSError as exc:
            self._close_quietly()
            raise StorageError(f"cannot open the index at {self.path}: {exc.strerror or exc}") from exc
        self._in_tx = False

    def _connect(self, timeout_s: float) -> GuardedConnection:
        if not self.read_only:
            conn = sqlite3.connect(
                str(self.path),
                timeout=timeout_s,
                isolation_level=None,
                check_same_thread=False,
                factory=GuardedConnection,
            )
        else:
            # A read-only folder cannot hold the WAL's shared-memory file, so the database is read
            # as immutable: fine for a folder nothing can write into.
            uri = f"{self.path.resolve().as_uri()}?mode=ro&immutable=1"
            conn = sqlite3.connect(
                uri,
                uri=True,
                timeout=timeout_s,
                isolation_level=None,
                check_same_thread=False,
                factory=GuardedConnection,
            )
        conn.db_path = self.path
        return conn

    def _close_quietly(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            with suppress(sqlite3.Error):
                db.conn.close()

    def replaced(self) -> bool:
        """True when the file at :attr:`path` is no longer the one this store opened (another
        process rebuilt a damaged index): reopen to see it."""
        try:
            return os.stat(self.path).st_ino != self._ino
        except OSError:
            return True

    def integrity_problem(self) -> str | None:
        """None when SQLite's quick check of the whole file passes, else what it found."""
        try:
            rows = [str(r[0]) for r in self.conn.execute("PRAGMA quick_check(5)")]
        except IndexDamagedError as exc:
            return str(exc.__cause__ or exc)
        if rows == ["ok"]:
            return None
        return "; ".join(rows)[:300]

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    def close(self) -> None:
        self.db.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_version(self) -> None:
        """A read-only index is used as it is: only at this nav's schema version."""
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row[0]) if row else 0
        if version != SCHEMA_VERSION:
            raise IndexReadOnlyError(
                f"the index at {self.path} is read-only and at schema version {version}, not this nav's "
                f"{SCHEMA_VERSION}; make {self.path.parent} writable and run `nav index`"
            )

    def _migrate(self) -> None:
        conn = self.conn
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise StorageError(
                f"the index at {self.path} has schema version {version}, newer than this nav "
                f"({SCHEMA_VERSION}); upgrade nav or delete {self.path.parent} and re-index"
            )
        if version == SCHEMA_VERSION:
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            # another process may have migrated while we waited for the write lock
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            version = int(row[0]) if row else 0
            if version == 0:
                for stmt in split_sql(SCHEMA_V1):
                    conn.execute(stmt)
                version = 1
            while version < SCHEMA_VERSION:
                MIGRATIONS[version - 1](conn)
                version += 1
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version),)
            )
            conn.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        """Roll back, unless SQLite already did (it does on a full disk); never mask the first error."""
        if self.conn.in_transaction:
            with suppress(sqlite3.Error, StorageError):
                self.conn.execute("ROLLBACK")

    # -- meta ------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # -- writes ----------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One atomic write: everything inside commits together or not at all."""
        if self._in_tx:
            yield
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._in_tx = True
        try:
            yield
        except BaseException:
            self._rollback()
            raise
        else:
            self.conn.execute("COMMIT")
        finally:
            self._in_tx = False

    def add_history(self, commits: Iterable[HistoryCommit], *, head: str, reset: bool = False) -> int:
        """Record past commits (:mod:`navigator.history`), and ``head``, the commit the history was
        read to; ``reset``: forget every commit recorded before (a rewritten history). Returns the
        commits added (one already recorded is skipped)."""
        c = self.conn
        added = 0
        with self.transaction():
            if reset:
                c.execute("DELETE FROM commits_fts")
                c.execute("DELETE FROM commit_files")
                c.execute("DELETE FROM commits")
            for commit in commits:
                cur = c.execute(
                    "INSERT OR IGNORE INTO commits(sha, files) VALUES (?, ?)", (commit.sha, len(commit.paths))
                )
                if not cur.rowcount:
                    continue
                cid = cur.lastrowid
                c.executemany(
                    "INSERT INTO commit_files(commit_id, path) VALUES (?, ?)",
                    ((cid, p) for p in commit.paths),
                )
                c.execute(
                    "INSERT INTO commits_fts(rowid, message) VALUES (?, ?)", (cid, index_text(commit.message))
                )
                added += 1
            self.set_meta("history_head", head)
        return added

    def file_rows(self) -> dict[str, FileRow]:
        rows = self.conn.execute("SELECT path, language, hash, size, mtime_ns FROM files")
        return {r[0]: FileRow(r[0], r[1], r[2], int(r[3]), int(r[4])) for r in rows}

    def unparsed_files(self, prefixes: tuple[str, ...]) -> list[tuple[str, str]]:
        """(path, note) of files indexed without a parse whose note starts with one of ``prefixes``."""
        rows = self.conn.execute(
            "SELECT path, notes FROM files WHERE parsed = 0 AND notes IS NOT NULL ORDER BY path"
        )
        out = []
        for path, notes in rows:
            why = next((n for n in str(notes).split("; ") if n.startswith(prefixes)), None)
            if why is not None:
                out.append((str(path), why))
        return out

    def skipped_rows(self) -> dict[str, tuple[int, int]]:
        """Files left out on purpose (binary, unreadable) -> the (size, mtime_ns) they had."""
        rows = self.conn.execute("SELECT path, size, mtime_ns FROM skipped")
        return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}

    def set_skipped(self, path: str, *, size: int, mtime_ns: int, reason: str) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO skipped(path, size, mtime_ns, reason) VALUES (?,?,?,?)",
            (path, size, mtime_ns, reason),
        )

    def forget_skipped(self, paths: Iterable[str]) -> None:
        self.conn.executemany("DELETE FROM skipped WHERE path=?", ((p,) for p in paths))

    def touch_file(self, path: str, *, size: int, mtime_ns: int) -> None:
        """Record a new stat for a file whose content hash did not change."""
        self.conn.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", (size, mtime_ns, path))

    def delete_files(self, paths: Iterable[str]) -> int:
        n = 0
        with self.transaction():
            for path in paths:
                row = self.conn.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()
                if row is None:
                    continue
                self._delete_file_rows(int(row[0]))
                self.conn.execute("DELETE FROM files WHERE id=?", (row[0],))
                n += 1
        return n

    def _delete_file_rows(self, file_id: int) -> None:
        c = self.conn
        c.execute(
            "DELETE FROM symbols_fts WHERE rowid IN (SELECT id FROM symbols WHERE file_id=?)",
            (file_id,),
        )
        c.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id=?)",
            (file_id,),
        )
        c.execute("DELETE FROM symbols WHERE file_id=?", (file_id,))
        c.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))
        c.execute("DELETE FROM refs WHERE file_id=?", (file_id,))

    def replace_file(
        self,
        parsed: ParsedFile,
        *,
        content_hash: str,
        size: int,
        mtime_ns: int,
        lines: int,
    ) -> None:
        """Replace every row of one file with what the parser found (atomic).

        A changed file mostly keeps its chunks and symbols (a branch switch or an edit moves some
        lines); a row whose full-text entry would be the same (a chunk with the same text and
        symbol, a symbol with the same qualified name) is updated in place, keeping its id and its
        FTS row: deleting an FTS5 row costs as much as inserting one, so this halves the full-text
        work of an update, and chunk ids (which key the vectors) stay stable.
        """
        c = self.conn
        with self.transaction():
            notes = "; ".join(parsed.notes) or None
            file_id = int(
                c.execute(
                    "INSERT INTO files(path, language, hash, size, mtime_ns, lines, parsed, notes, indexed_at)"
                    " VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET language=excluded.language,"
                    " hash=excluded.hash, size=excluded.size, mtime_ns=excluded.mtime_ns, lines=excluded.lines,"
                    " parsed=excluded.parsed, notes=excluded.notes, indexed_at=excluded.indexed_at RETURNING id",
                    (
                        parsed.path,
                        parsed.language or None,
                        content_hash,
                        size,
                        mtime_ns,
                        lines,
                        int(parsed.parsed),
                        notes,
                        time.time(),
                    ),
                ).fetchone()[0]
            )
            old_symbols: dict[str, list[int]] = {}
            for sid, qn in c.execute("SELECT id, qualified_name FROM symbols WHERE file_id=?", (file_id,)):
                old_symbols.setdefault(str(qn), []).append(int(sid))
            old_chunks: dict[tuple[str, str | None], list[int]] = {}
            for cid, h, sym in c.execute("SELECT id, hash, symbol FROM chunks WHERE file_id=?", (file_id,)):
                old_chunks.setdefault((str(h), sym), []).append(int(cid))
            c.execute("DELETE FROM refs WHERE file_id=?", (file_id,))

            for sym in parsed.symbols:
                values = (
                    sym.name,
                    sym.kind,
                    sym.span.start_line,
                    sym.span.start_col,
                    sym.span.end_line,
                    sym.span.end_col,
                    sym.name_span.start_line,
                    sym.name_span.start_col,
                    sym.name_span.end_line,
                    sym.name_span.end_col,
                    sym.signature,
                    sym.container,
                    sym.docstring,
                )
                reuse = old_symbols.get(sym.qualified_name)
                if reuse:
                    c.execute(
                        "UPDATE symbols SET name=?, kind=?, start_line=?, start_col=?, end_line=?, end_col=?,"
                        " name_line=?, name_col=?, name_end_line=?, name_end_col=?, signature=?, container=?,"
                        " docstring=? WHERE id=?",
                        (*values, reuse.pop()),
                    )
                    continue
                cur = c.execute(
                    "INSERT INTO symbols(file_id, qualified_name, name, kind, start_line, start_col,"
                    " end_line, end_col, name_line, name_col, name_end_line, name_end_col,"
                    " signature, container, docstring) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (file_id, sym.qualified_name, *values),
                )
                tokens = index_text(sym.qualified_name.replace(".", " "))
                c.execute("INSERT INTO symbols_fts(rowid, tokens) VALUES (?, ?)", (cur.lastrowid, tokens))
            gone_symbols = [(sid,) for ids in old_symbols.values() for sid in ids]
            c.executemany("DELETE FROM symbols_fts WHERE rowid=?", gone_symbols)
            c.executemany("DELETE FROM symbols WHERE id=?", gone_symbols)

            path_tokens: str | None = None
            for ch in parsed.chunks:
                reuse = old_chunks.get((ch.content_hash, ch.symbol))
                if reuse:
                    c.execute(
                        "UPDATE chunks SET start_line=?, end_line=?, signature=? WHERE id=?",
                        (ch.start_line, ch.end_line, ch.signature, reuse.pop()),
                    )
                    continue
                cur = c.execute(
                    "INSERT INTO chunks(file_id, start_line, end_line, symbol, signature, text, hash)"
                    " VALUES (?,?,?,?,?,?,?)",
                    (
                        file_id,
                        ch.start_line,
                        ch.end_line,
                        ch.symbol,
                        ch.signature,
                        ch.text,
                        ch.content_hash,
                    ),
                )
                if path_tokens is None:
                    path_tokens = index_text(parsed.path.replace("/", " ").replace(".", " "))
                c.execute(
                    "INSERT INTO chunks_fts(rowid, path, symbol, text) VALUES (?,?,?,?)",
                    (
                        cur.lastrowid,
                        path_tokens,
                        index_text((ch.symbol or "").replace(".", " ")),
                        index_text(ch.text),
                    ),
                )
            gone_chunks = [(cid,) for ids in old_chunks.values() for cid in ids]
            c.executemany("DELETE FROM chunks_fts WHERE rowid=?", gone_chunks)
            c.executemany("DELETE FROM chunks WHERE id=?", gone_chunks)
            c.executemany(
                "INSERT INTO refs(file_id, name, line, col, end_col) VALUES (?,?,?,?,?)",
                ((file_id, r.name, r.line, r.col, r.end_col) for r in parsed.refs),
            )

    # -- upkeep ----------------------------------------------------------------------------

    def text_index_upkeep(self, files_changed: int, *, budget_s: float = 1.0) -> bool:
        """Merge the full-text indexes' segments once enough has changed since they were last
        merged. Every commit adds FTS5 segments and every replaced row leaves a delete marker
        that stays until its segment merges into the oldest; FTS5's own automerge bounds the
        levels, not the waste: Django indexed across 46 commits held 17 segments and 38 MB
        where 1 segment of 15 MB holds the same rows, and a one-line search took 1.3-1.7x
        as long. Due when the files changed since the last merge reach a quarter of the index
        (at least :data:`UPKEEP_MIN_FILES`), so the rewrite costs a constant factor of the
        writes; done in steps of :data:`MERGE_PAGES` pages, each its own transaction, for at
        most ``budget_s`` a run (the next run goes on). Answers are unchanged: merging moves
        postings, it changes no row. True when the indexes are merged now. A failure (a full
        disk) is logged and leaves the index as it was."""
        try:
            pending = int(self.get_meta("fts_files_changed") or 0) + max(0, files_changed)
            if files_changed > 0:  # first: a merge cut short (time, a full disk) stays due
                with self.transaction():
                    self.set_meta("fts_files_changed", str(pending))
            if pending < UPKEEP_MIN_FILES:  # most runs: a save or two since the last merge
                return False
            if pending < int(self.conn.execute("SELECT count(*) FROM files").fetchone()[0]) // 4:
                return False
            deadline = time.monotonic() + budget_s
            for table in _FTS_TABLES:
                while self._segments(table) > 1:
                    if time.monotonic() > deadline:
                        return False
                    before = self.conn.total_changes
                    with self.transaction():
                        self.conn.execute(
                            f"INSERT INTO {table}({table}, rank) VALUES('merge', ?)", (-MERGE_PAGES,)
                        )
                    if self.conn.total_changes - before <= 1:
                        break  # nothing left that FTS5 will merge
            with self.transaction():
                self.set_meta("fts_files_changed", "0")
            return True
        except (StorageError, sqlite3.Error) as exc:
            log.warning("could not merge the full-text index of %s (%s); it stays as it is", self.path, exc)
            return False

    def _segments(self, table: str) -> int:
        """How many segments an FTS5 table's index has (its ``_idx`` shadow table has a row per
        leaf page of each, keyed by segment)."""
        return int(self.conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0])

    # -- reads -----------------------------------------------------------------------------

    def counts(self) -> tuple[int, int, int]:
        """(files, symbols, chunks): cheap counts for reports (refs can be millions of rows)."""
        c = self.conn
        return (
            int(c.execute("SELECT count(*) FROM files").fetchone()[0]),
            int(c.execute("SELECT count(*) FROM symbols").fetchone()[0]),
            int(c.execute("SELECT count(*) FROM chunks").fetchone()[0]),
        )

    def stats(self) -> StoreStats:
        c = self.conn

        def count(table: str) -> int:
            return int(c.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

        langs = {
            str(lang or "text"): int(n)
            for lang, n in c.execute("SELECT language, count(*) FROM files GROUP BY language")
        }
        finished = self.get_meta("last_run_finished_at")
        return StoreStats(
            files=count("files"),
            symbols=count("symbols"),
            chunks=count("chunks"),
            refs=count("refs"),
            languages=langs,
            last_run=self.get_meta("last_run_state"),
            last_run_complete=self.get_meta("last_run_state") == "complete",
            last_run_finished_at=float(finished) if finished else None,
            history_commits=count("commits"),
            history_head=self.get_meta("history_head"),
        )

    def language_sizes(self) -> dict[str, tuple[int, int]]:
        """Per language of the indexed files: (files, lines). What the daemon warms servers by."""
        return {
            str(lang or "text"): (int(n), int(lines or 0))
            for lang, n, lines in self.conn.execute(
                "SELECT language, count(*), sum(lines) FROM files GROUP BY language"
            )
        }


def _writable(path: Path) -> bool:
    """Whether nav can write the index at ``path`` (its folder, and the file if it exists)."""
    folder = path.parent
    probe = folder if folder.exists() else next((p for p in folder.parents if p.exists()), folder)
    if not os.access(probe, os.W_OK):
        return False
    if path.exists() and not os.access(path, os.W_OK):
        return False
    try:
        st = os.statvfs(probe)
    except OSError:
        return True
    return not st.f_flag & os.ST_RDONLY


if TYPE_CHECKING:  # the index answers the whole query seam

    def _conforms(store: Store) -> IndexQueries:
        return store
