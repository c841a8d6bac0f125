"""The grep index: trigram postings over every text file under a root, in ``.nav/grep.db``.

A file of its own (never ``index.db``), opened only through SQLite, WAL mode. Tables:

- ``files``: one row per file ripgrep would search — path, document id, size, mtime (ns), an
  8-byte content hash, and its kind (:data:`TEXT`, :data:`BINARY`: a NUL byte somewhere, so
  ripgrep stops at it; :data:`UNINDEXED`: too big or unreadable, a candidate for every query).
- ``postings``: (trigram, segment) → the sorted document ids holding that trigram, as little-endian
  uint32s. Trigrams are of the ASCII-lowercased bytes, never spanning a newline, so one index
  narrows case-sensitive and case-insensitive queries alike.

Postings are written in *segments*: a full build flushes one every :data:`FLUSH_PAIRS`
(trigram, document) pairs, so memory stays bounded; an incremental update writes one small
segment for the changed files and retires the old document ids (a file's new content gets a new
id; ids not in ``files`` are dead and ignored by readers). :meth:`GrepStore.compact` merges
segments and drops dead ids when there are too many of either. Pure storage: it knows nothing
of regular expressions or of ripgrep.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from storage.errors import IndexDamagedError, StorageError

SCHEMA_VERSION = 1
TEXT, BINARY, UNINDEXED = 0, 1, 2
FLUSH_PAIRS = 2_000_000
"""(trigram, document) pairs held in memory before a segment is written (~40 MB while sorting)."""
MAX_SEGMENTS = 8
"""More segments than this and the small ones are merged."""
DEAD_FRACTION = 0.25
"""Dead document ids above this share of all ids ever given and every segment is rewritten."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    doc INTEGER NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash BLOB,
    kind INTEGER NOT NULL,
    text_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS postings (
    tri INTEGER NOT NULL,
    seg INTEGER NOT NULL,
    docs BLOB NOT NULL,
    PRIMARY KEY (tri, seg)
) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    doc: int
    size: int
    mtime_ns: int
    hash: bytes | None
    kind: int


@dataclass(frozen=True, slots=True)
class NewFile:
    """A file's entry to write: its stat, kind, hash, and the trigrams of what ripgrep can search."""

    path: str
    size: int
    mtime_ns: int
    hash: bytes | None
    kind: int
    trigrams: Sequence[int]
    text_bytes: int


def _ids(blob: bytes) -> array[int]:
    out = array("I")
    out.frombytes(blob)
    if sys.byteorder != "little":
        out.byteswap()
    return out


def _blob(ids: Iterable[int]) -> bytes:
    out = array("I", ids)
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


class GrepStore:
    """One connection to a root's grep index. Writers hold the caller's lock (one at a time)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        try:
            if read_only:
                self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            else:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
                os.close(fd)
                self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.conn.execute("PRAGMA busy_timeout = 5000")
            if not read_only:
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = NORMAL")
                self.conn.executescript(_SCHEMA)
                version = self.meta("schema_version")
                if version is None:
                    self.set_meta("schema_version", str(SCHEMA_VERSION))
                elif version != str(SCHEMA_VERSION):
                    self._reset()
        except sqlite3.DatabaseError as exc:
            raise IndexDamagedError(
                f"the grep index at {path} cannot be used ({exc}); delete it to rebuild"
            ) from exc
        except OSError as exc:
            raise StorageError(f"cannot open the grep index at {path}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        self.conn.close()

    def _reset(self) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM files")
            self.conn.execute("DELETE FROM postings")
            self.conn.execute("DELETE FROM meta")
            self.conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    # -- meta ------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def transaction(self) -> _Tx:
        return _Tx(self.conn)

    # -- reading ---------------------------------------------------------------------------

    def built(self) -> bool:
        return self.meta("built") == "1"

    def files(self) -> dict[str, FileRow]:
        rows = self.conn.execute("SELECT path, doc, size, mtime_ns, hash, kind FROM files")
        return {r[0]: FileRow(*r) for r in rows}

    def file(self, path: str) -> FileRow | None:
        r = self.conn.execute(
            "SELECT path, doc, size, mtime_ns, hash, kind FROM files WHERE path = ?", (path,)
        ).fetchone()
        return None if r is None else FileRow(*r)

    def has_under(self, folder: str) -> bool:
        """Whether any file lies under ``folder`` (a root-relative path)."""
        prefix = folder.rstrip("/") + "/"
        row = self.conn.execute(
            "SELECT 1 FROM files WHERE path >= ? AND path < ? LIMIT 1", (prefix, prefix[:-1] + "0")
        ).fetchone()
        return row is not None

    def postings(self, tri: int) -> set[int]:
        """Document ids (live or dead) holding ``tri``, over every segment."""
        out: set[int] = set()
        for (blob,) in self.conn.execute("SELECT docs FROM postings WHERE tri = ?", (tri,)):
            out.update(_ids(blob))
        return out

    def paths_of(self, docs: Iterable[int]) -> list[tuple[str, int]]:
        """(path, kind) of the live documents among ``docs``."""
        wanted = sorted(docs)
        out: list[tuple[str, int]] = []
        for i in range(0, len(wanted), 900):
            part = wanted[i : i + 900]
            marks = ",".join("?" * len(part))
            out.extend(self.conn.execute(f"SELECT path, kind FROM files WHERE doc IN ({marks})", part))
        return out

    def all_paths(self, kinds: Sequence[int] = (TEXT, BINARY, UNINDEXED)) -> list[tuple[str, int]]:
        marks = ",".join("?" * len(kinds))
        return list(self.conn.execute(f"SELECT path, kind FROM files WHERE kind IN ({marks})", tuple(kinds)))

    def stats(self) -> dict[str, int]:
        files, text = self.conn.execute("SELECT count(*), coalesce(sum(text_bytes), 0) FROM files").fetchone()
        segs = self.conn.execute("SELECT count(DISTINCT seg) FROM postings").fetchone()[0]
        page = self.conn.execute("PRAGMA page_size").fetchone()[0]
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        return {"files": files, "text_bytes": text, "segments": segs, "db_bytes": page * pages}

    # -- writing ---------------------------------------------------------------------------

    def _next(self, key: str) -> int:
        value = int(self.meta(key) or "0")
        self.set_meta(key, str(value + 1))
        return value

    def remove(self, paths: Iterable[str]) -> None:
        """Forget files (their document ids become dead). Call inside a transaction."""
        self.conn.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in paths))

    def touch(self, path: str, size: int, mtime_ns: int) -> None:
        """New stat, same content: nothing to re-read next time."""
        self.conn.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", (size, mtime_ns, path))

    def write(self, files: Iterator[NewFile]) -> int:
        """Add (or replace) files, flushing a segment every :data:`FLUSH_PAIRS` pairs. Each flush
        is its own transaction, so a crash leaves a consistent (if partial) index. ``trigrams``
        are numpy uint32 arrays (or sequences of ints). Returns how many files were written."""
        rows: list[NewFile] = []
        pairs = 0
        written = 0
        for f in files:
            rows.append(f)
            pairs += len(f.trigrams)
            if pairs >= FLUSH_PAIRS:
                self._flush(rows)
                written += len(rows)
                rows, pairs = [], 0
        if rows:
            self._flush(rows)
            written += len(rows)
        return written

    def _flush(self, rows: list[NewFile]) -> None:
        import numpy as np

        with self.transaction():
            seg = self._next("next_seg")
            first = int(self.meta("next_doc") or "0")
            self.set_meta("next_doc", str(first + len(rows)))
            docs = np.arange(first, first + len(rows), dtype=np.uint32)
            self.conn.executemany("DELETE FROM files WHERE path = ?", ((f.path,) for f in rows))
            self.conn.executemany(
                "INSERT INTO files (path, doc, size, mtime_ns, hash, kind, text_bytes) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    (f.path, int(d), f.size, f.mtime_ns, f.hash, f.kind, f.text_bytes)
                    for f, d in zip(rows, docs, strict=True)
                ),
            )
            arrays = [np.asarray(f.trigrams, dtype=np.uint32) for f in rows]
            if not any(a.size for a in arrays):
                return
            tris = np.concatenate(arrays)
            owners = np.repeat(docs, [a.size for a in arrays])
            order = np.argsort(tris, kind="stable")  # stable: ids stay ascending within a trigram
            tris, owners = tris[order], owners[order].astype("<u4")
            starts = np.concatenate(([0], np.flatnonzero(np.diff(tris)) + 1))
            ends = np.concatenate((starts[1:], [tris.size]))
            raw = owners.tobytes()
            keys = tris[starts].tolist()
            self.conn.executemany(
                "INSERT INTO postings (tri, seg, docs) VALUES (?, ?, ?)",
                (
                    (k, seg, raw[a * 4 : b * 4])
                    for k, a, b in zip(keys, starts.tolist(), ends.tolist(), strict=True)
                ),
            )

    def needs_compaction(self) -> bool:
        segs = self.conn.execute("SELECT count(DISTINCT seg) FROM postings").fetchone()[0]
        live = self.conn.execute("SELECT count(*) FROM files").fetchone()[0]
        given = int(self.meta("next_doc") or "0")
        return bool(segs > MAX_SEGMENTS or (given > 64 and given - live > DEAD_FRACTION * given))

    def compact(self) -> None:
        """Merge every segment into one and drop dead document ids, one trigram at a time (memory
        bounded by the longest posting list). One transaction: readers see before or after."""
        live = {int(d) for (d,) in self.conn.execute("SELECT doc FROM files")}
        with self.transaction():
            seg = self._next("next_seg")
            self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS merged (tri INTEGER, seg INTEGER, docs BLOB)")
            self.conn.execute("DELETE FROM merged")
            batch: list[tuple[int, int, bytes]] = []
            tri_now = -1
            acc: list[int] = []
            for tri, blob in self.conn.execute("SELECT tri, docs FROM postings ORDER BY tri"):
                if tri != tri_now:
                    kept = sorted(d for d in acc if d in live)
                    if kept:
                        batch.append((tri_now, seg, _blob(kept)))
                    if len(batch) >= 20_000:
                        self.conn.executemany("INSERT INTO merged VALUES (?, ?, ?)", batch)
                        batch = []
                    tri_now, acc = tri, []
                acc.extend(_ids(blob))
            kept = sorted(d for d in acc if d in live)
            if kept:
                batch.append((tri_now, seg, _blob(kept)))
            self.conn.executemany("INSERT INTO merged VALUES (?, ?, ?)", batch)
            self.conn.execute("DELETE FROM postings")
            self.conn.execute("INSERT INTO postings SELECT tri, seg, docs FROM merged ORDER BY tri")
            self.conn.execute("DELETE FROM merged")


class _Tx:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.depth = 0

    def __enter__(self) -> None:
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
            self.depth = 1

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if not self.depth:
            return
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
