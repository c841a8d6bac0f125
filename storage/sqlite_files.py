"""The index file as a file: a connection whose file-level errors (damage, full disk, read-only)
become nav's storage errors wherever they surface, the refusal of an index that is not a plain
file (a symlink, a FIFO, a folder, a device), its WAL sidecars, its private mode, and discarding
it. The file is only ever opened through SQLite (see :func:`make_private`).
"""

from __future__ import annotations

import os
import sqlite3
import stat
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from storage.errors import (
    IndexIOError,
    StorageError,
    UnsafeIndexDirError,
)
from storage.sqlite_errors import classify_error


class GuardedCursor(sqlite3.Cursor):
    """A cursor whose file-level errors (damage, full disk, read-only) become nav's storage errors,
    wherever they surface: in ``execute`` or while rows are fetched."""

    @contextmanager
    def _guarded(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            conn = self.connection
            if isinstance(conn, GuardedConnection) and conn.closed_by_nav:
                raise conn.reopen_error() from exc
            err = classify_error(exc, conn.db_path) if isinstance(conn, GuardedConnection) else None
            if err is None:
                raise
            raise err from exc

    def execute(self, sql: str, parameters: Any = (), /) -> GuardedCursor:
        with self._guarded():
            super().execute(sql, parameters)
        return self

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> GuardedCursor:
        with self._guarded():
            super().executemany(sql, seq_of_parameters)
        return self

    def __next__(self) -> Any:
        with self._guarded():
            return super().__next__()

    def fetchone(self) -> Any:
        with self._guarded():
            return super().fetchone()

    def fetchall(self) -> list[Any]:
        with self._guarded():
            return super().fetchall()


class GuardedConnection(sqlite3.Connection):
    db_path: Path = Path()
    _cursors: weakref.WeakSet[sqlite3.Cursor] | None = None

    closed_by_nav = False
    """Set when nav closed the connection (to look at the file afresh) while a thread may still
    hold it: using it then is an :class:`IndexIOError`, which makes that thread reopen too."""

    def reopen_error(self) -> IndexIOError:
        return IndexIOError(
            f"the connection to the index at {self.db_path} was closed (to reopen the file); ask again"
        )

    def cursor(self, factory: Any = GuardedCursor) -> Any:
        if self.closed_by_nav:
            raise self.reopen_error()
        cur = super().cursor(factory)
        if self._cursors is None:
            self._cursors = weakref.WeakSet()
        self._cursors.add(cur)
        return cur

    def close(self) -> None:
        """Close, really: a cursor still in the middle of its rows (one an exception's traceback
        keeps alive) would otherwise keep the file open under a closed connection, and with it
        this process's stale view of the WAL."""
        self.closed_by_nav = True
        for cur in list(self._cursors or ()):
            with suppress(sqlite3.Error):
                cur.close()
        super().close()

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def sidecars(path: Path) -> tuple[Path, Path]:
    """The WAL and shared-memory files SQLite keeps beside ``path``."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def check_index_files(path: Path) -> None:
    """Refuse an index file (or its ``-wal`` / ``-shm``) that is not a plain file, before SQLite
    opens it: a symlink would have nav's schema written into its target, and a FIFO would block
    the open for ever. Only ``lstat``: never a descriptor (see :func:`make_private`)."""
    for p in (path, *sidecars(path)):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StorageError(f"cannot inspect the index file {p}: {exc.strerror or exc}") from exc
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.readlink(p)
            except OSError:
                target = "?"
            raise UnsafeIndexDirError(
                f"the index file `{p}` is a symlink (to `{target[:100]}`); nav refuses to write through it: "
                f"remove it (`rm {p}`) and run `nav index`"
            )
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
            raise StorageError(
                f"the index file `{p}` is {kind}, not a database file; nav does not open it: "
                f"remove it (`rm {'-r ' if stat.S_ISDIR(st.st_mode) else ''}{p}`) and run `nav index` to rebuild the index"
            )


def make_private(path: Path) -> None:
    """Mode 0600 for the index (it holds copies of the code) and its WAL files, set by path.

    Never through a descriptor of our own: SQLite's POSIX locks belong to the process, and
    closing any descriptor of the database file drops every lock the process holds on it, so
    the next other process to close its connection would think it was the last and delete the
    WAL under this one. The moment between SQLite creating the file and this call is covered by
    ``.nav`` itself being 0700; SQLite gives the WAL files the database's mode."""
    for p in (path, *sidecars(path)):
        try:
            st = os.lstat(p)
        except OSError:
            continue
        mode = stat.S_IMODE(st.st_mode)
        if stat.S_ISREG(st.st_mode) and mode & 0o077:
            with suppress(OSError):  # someone else's file or a read-only file system: left as it is
                os.chmod(p, mode & 0o700)  # others lose access; the owner's bits (read-only?) stay


def discard_database(path: Path) -> None:
    """Delete an index database and its WAL files (it is a cache: the next index run rebuilds it).

    Other processes that still have the old file open notice the new one by its inode."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with suppress(FileNotFoundError):
            p.unlink()
