"""A glance at an index without opening it as a store: what a process reads before the rest of
nav is imported (this module imports only ``sqlite3`` and nav's errors; :mod:`storage.db` brings
sqlite-utils). Read-only; nothing is created, migrated or locked for writing."""

from __future__ import annotations

import contextlib
import re
import sqlite3
from pathlib import Path

from storage.sqlite_errors import classify_query_error

__all__ = ["language_sizes", "target_files"]


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


def target_files(
    index_db: Path, target: str, *, limit: int = 4, timeout_s: float = 0.5
) -> list[tuple[str, str]]:
    """(root-relative path, language) of the files a question about ``target`` starts at, as the
    index last saw them: the file of ``path:line[:col]``, else files defining a symbol named
    ``target`` (the last part of a qualified name), at most ``limit``. A hint for what the
    question will open, never an answer: [] when SQLite cannot read the file quickly."""
    target = target.strip()
    located = re.fullmatch(r"(.+?):\d+(?::\d+)?", target)
    leaf = re.split(r"\.|::|#", target)[-1]
    if limit < 1 or not (located or leaf):
        return []
    args: tuple[object, ...]
    if located:
        sql, args = "SELECT path, language FROM files WHERE path = ?", (located.group(1),)
    else:
        sql = "SELECT DISTINCT f.path, f.language FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ? LIMIT ?"
        args = (leaf, limit)
    try:
        with contextlib.closing(
            sqlite3.connect(f"{index_db.as_uri()}?mode=ro", uri=True, timeout=timeout_s)
        ) as db:
            rows = db.execute(sql, args).fetchall()
    except sqlite3.Error:
        return []
    return [(str(path), str(language)) for path, language in rows if language]
