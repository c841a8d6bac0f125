"""SQLite's errors as nav's: what the index file's state or a query's failure means.

:func:`classify_error` names the errors about the file itself (damage, a full disk, read-only,
I/O); :func:`classify_query_error` also the ones a query meets (a locked database, a missing
table), and :func:`is_fts_query_error` the full-text query the index cannot parse.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from storage.errors import (
    IndexBusyError,
    IndexDamagedError,
    IndexIOError,
    IndexReadOnlyError,
    IndexSchemaError,
    StorageError,
    StorageFullError,
)

# SQLite's primary result codes that say what went wrong with the file itself.
_SQLITE_READONLY = 8
_SQLITE_IOERR = 10
_SQLITE_CORRUPT = 11
_SQLITE_FULL = 13
_SQLITE_CANTOPEN = 14
_SQLITE_NOTADB = 26


def classify_error(exc: sqlite3.Error, path: Path) -> StorageError | None:
    """The nav error for an SQLite error about the database file, or None for any other error
    (a bad query, a constraint): damage, a full disk and a read-only file each get clear words
    and the one way back."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return IndexDamagedError(
            f"the index at {path} is damaged (sqlite: {exc}); it is a cache of the working tree: "
            "run `nav index` to rebuild it"
        )
    if primary == _SQLITE_FULL:
        return StorageFullError(
            f"no space left to write the index at {path} (sqlite: {exc}); the unfinished batch was "
            "rolled back and the index keeps what was written before; free some space and run `nav index`"
        )
    if primary == _SQLITE_READONLY:
        return IndexReadOnlyError(
            f"the index at {path} is read-only (sqlite: {exc}); queries read it as it is, "
            f"but to update it make {path.parent} writable"
        )
    if primary in (_SQLITE_IOERR, _SQLITE_CANTOPEN):
        return IndexIOError(
            f"cannot read or write the index at {path} (sqlite: {exc}); check that the disk is not full "
            f"and {path.parent} is readable and writable, then run `nav index`"
        )
    return None


_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6


def classify_query_error(exc: sqlite3.Error, path: Path) -> StorageError:
    """The nav error for any SQLite error a query meets: the file's state (:func:`classify_error`),
    a locked database, a missing table or column, else a plain :class:`StorageError` that quotes
    SQLite's words (never an unclassified ``sqlite3`` exception)."""
    err = classify_error(exc, path)
    if err is not None:
        return err
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    text = str(exc)
    if (
        primary in (_SQLITE_BUSY, _SQLITE_LOCKED)
        or "database is locked" in text
        or "database table is locked" in text
    ):
        return IndexBusyError(
            f"the index at {path} is locked by another connection for longer than the busy timeout "
            f"(sqlite: {exc}); ask again when the other writer is done"
        )
    if text.startswith(("no such table", "no such column")):
        return IndexSchemaError(
            f"the index at {path} lacks what nav reads (sqlite: {exc}); it is a cache of the working tree: "
            f"delete {path.parent} and run `nav index` to rebuild it"
        )
    return StorageError(f"cannot read the index at {path} (sqlite: {exc})")


_FTS_QUERY_ERRORS = (
    "fts5: syntax error",
    "fts5: parser stack overflow",
    "unterminated string",
    "unknown special query",
)


def is_fts_query_error(exc: sqlite3.Error, sql: str) -> bool:
    """Whether FTS5 refused the MATCH expression itself (a query the index cannot parse), as
    opposed to the database failing: such a query matches nothing. A column filter naming no
    column (``col:value``) reads "no such column: col", as a column the statement ``sql`` names
    and the table lacks would: only the first is the query's."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc)
    if text.startswith(_FTS_QUERY_ERRORS):
        return True
    if text.startswith("no such column: "):
        column = text.removeprefix("no such column: ").strip()
        return re.search(rf"(?<![\w.]){re.escape(column)}(?!\w)", sql) is None
    return False
