"""A glance at an index without opening it as a store: what a process reads before the rest of
nav is imported (this module imports only ``sqlite3`` and nav's errors; :mod:`storage.db` brings
sqlite-utils). Read-only; nothing is created, migrated or locked for writing."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from storage.sqlite_errors import classify_query_error

__all__ = ["language_sizes"]


def language_sizes(index_db: Path, *, timeout_s: float = 1.0) -> dict[str, tuple[int, int]]:
    """Per language of the indexed files: (files, lines), as :meth:`storage.db.Store.language_sizes`
    counts them. Raises a classified :class:`~storage.errors.StorageError` when SQLite cannot
    read the file."""
    try:
        with contextlib.closing(
            sqlite3.connect(f"{index_db.as_uri()}?mode=ro", uri=True, timeout=timeout_s)
        ) as db:
            rows = db.execute("SELECT language, COUNT(*), SUM(lines) FROM files GROUP BY language").fetchall()
    except sqlite3.Error as exc:
        raise classify_query_error(exc, index_db) from exc
    return {str(lang or "text"): (int(n), int(lines or 0)) for lang, n, lines in rows}
