"""``nav grep``'s index: the trigram postings (:mod:`storage.ngrams`, ``.nav/grep.db``) of exactly
the files ``rg --files`` lists at the root, kept fresh by the daemon's watcher or on demand,
and the ripgrep helpers it shares with the search. See :mod:`navigator.grep`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from storage.errors import IndexBusyError, UsageError
from storage.ngrams import BINARY, TEXT, UNINDEXED, GrepStore, NewFile

MAX_INDEX_BYTES = 32 * 1024 * 1024
"""Files above this are not indexed but searched by every query (ripgrep reads them)."""
IGNORE_FILES = frozenset({".gitignore", ".ignore", ".rgignore"})
GREP_DB = "grep.db"

# -- the index -------------------------------------------------------------------------------


def rg_binary() -> str:
    found = shutil.which("rg")
    if found is None:
        raise UsageError(
            "nav grep needs ripgrep (`rg`) on PATH to confirm matches; install it "
            "(`apt-get install ripgrep`, or scripts/setup.sh)"
        )
    return found


def rg_files(
    root: Path, *, globs: Sequence[str] = (), types: Sequence[str] = (), paths: Sequence[str] = ()
) -> list[str]:
    """The files ripgrep would search at ``root`` (with these filters), root-relative."""
    cmd = [rg_binary(), "--no-config", "--files", "--null"]
    for g in globs:
        cmd += ["-g", g]
    for t in types:
        cmd += ["-t", t]
    cmd += ["--", *paths] if paths else []
    proc = subprocess.run(cmd, cwd=root, capture_output=True, timeout=300, check=False)
    if proc.returncode == 2 and not proc.stdout:
        raise UsageError(f"ripgrep refused the file filters: {first_lines(proc.stderr)}")
    out = []
    for raw in proc.stdout.split(b"\0"):
        if raw:
            name = os.fsdecode(raw)
            out.append(name[2:] if name.startswith("./") else name)
    return out


def _searchable(data: bytes) -> bytes:
    """What ripgrep's search sees of a file: UTF-16 with a byte-order mark transcoded to UTF-8."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", "replace").encode("utf-8")
    return data


def trigrams_of(data: bytes) -> object:
    """The distinct trigrams of ASCII-lowercased ``data`` that span no newline (a numpy array)."""
    import numpy as np

    a = np.frombuffer(data.lower(), dtype=np.uint8)
    if a.size < 3:
        return np.zeros(0, dtype=np.uint32)
    w = a.astype(np.uint32)
    t = (w[:-2] << 16) | (w[1:-1] << 8) | w[2:]
    nl = a == 10
    t = t[~(nl[:-2] | nl[1:-1] | nl[2:])]
    return np.unique(t)


def _entry(root: Path, rel: str) -> NewFile | None:
    """The index entry of one file as it is now; None when it is gone."""
    full = root / rel
    try:
        st = os.stat(full)
    except FileNotFoundError:
        return None
    except OSError:
        return NewFile(rel, 0, 0, None, UNINDEXED, (), 0)
    if st.st_size > MAX_INDEX_BYTES:
        return NewFile(rel, st.st_size, st.st_mtime_ns, None, UNINDEXED, (), 0)
    try:
        with open(full, "rb") as fh:
            data = fh.read(MAX_INDEX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError:
        return NewFile(rel, st.st_size, st.st_mtime_ns, None, UNINDEXED, (), 0)
    if len(data) > MAX_INDEX_BYTES:
        return NewFile(rel, st.st_size, st.st_mtime_ns, None, UNINDEXED, (), 0)
    digest = hashlib.blake2b(data, digest_size=8).digest()
    text = _searchable(data)
    nul = text.find(b"\0")
    kind = TEXT if nul < 0 else BINARY
    if nul >= 0:
        text = text[:nul]  # ripgrep stops at the first NUL: nothing after it can match
    tris = trigrams_of(text)
    return NewFile(rel, st.st_size, st.st_mtime_ns, digest, kind, tris, len(text))  # type: ignore[arg-type]


@dataclass
class UpdateReport:
    written: int = 0
    removed: int = 0
    unchanged: int = 0
    seconds: float = 0.0


class GrepIndex:
    """A root's grep index: brought up to date by a stat walk, or for given paths only."""

    def __init__(self, root: Path, nav_dir: Path) -> None:
        self.root = root
        self.nav_dir = nav_dir
        self.path = nav_dir / GREP_DB
        self._store: GrepStore | None = None

    @property
    def store(self) -> GrepStore:
        if self._store is None:
            from navigator.paths import ensure_nav_dir

            ensure_nav_dir(self.nav_dir)  # 0700, never a symlink or someone else's folder
            ignore = self.nav_dir / ".gitignore"
            if not ignore.exists() and os.access(self.nav_dir, os.W_OK):
                ignore.write_text("# nav's index; safe to delete\n*\n", encoding="utf-8")
            self._store = GrepStore(self.path)
        return self._store

    def exists(self) -> bool:
        return self.path.exists()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _locked(self, timeout_s: float) -> _Lock:
        return _Lock(self.nav_dir / "grep.lock", timeout_s)

    def update(self, *, only: Sequence[str] | None = None, lock_wait_s: float = 30.0) -> UpdateReport:
        """Bring the index up to date: every file (a walk by ``rg --files`` and a stat of each),
        or just ``only`` (root-relative paths a watcher saw change) when that is enough."""
        started = time.perf_counter()
        with self._locked(lock_wait_s):
            store = self.store
            if only is not None and store.built() and not self._needs_walk(only):
                report = self._update_paths(store, only)
            else:
                report = self._update_all(store)
            if store.needs_compaction():
                store.compact()
        report.seconds = time.perf_counter() - started
        return report

    def _needs_walk(self, only: Sequence[str]) -> bool:
        """Whether the watcher's paths need ripgrep's walk: an ignore file changed, a file or
        folder appeared (only the walk knows whether ripgrep searches it), or a folder went."""
        store = self.store
        for rel in only:
            if os.path.basename(rel) in IGNORE_FILES or rel.startswith(".git/info/"):
                return True
            if rel.split("/", 1)[0] in (".nav", ".git"):
                continue
            if store.file(rel) is not None:
                continue
            if os.path.lexists(self.root / rel) or store.has_under(rel):
                return True
        return False

    def _update_paths(self, store: GrepStore, only: Sequence[str]) -> UpdateReport:
        report = UpdateReport()
        gone: list[str] = []
        fresh: list[NewFile] = []
        for rel in dict.fromkeys(only):
            row = store.file(rel)
            if row is None:
                continue
            entry = self._changed(row.size, row.mtime_ns, row.hash, rel, store)
            if entry is False:
                report.unchanged += 1
            elif entry is None:
                gone.append(rel)
            else:
                fresh.append(entry)
        with store.transaction():
            store.remove(gone)
        report.removed = len(gone)
        report.written = store.write(iter(fresh))
        return report

    def _changed(
        self, size: int, mtime_ns: int, digest: bytes | None, rel: str, store: GrepStore
    ) -> NewFile | None | Literal[False]:
        """False when unchanged (a touched file gets its new stat), None when gone, else the entry."""
        try:
            st = os.stat(self.root / rel)
        except FileNotFoundError:
            return None
        except OSError:
            st = None
        if st is not None and st.st_size == size and st.st_mtime_ns == mtime_ns:
            return False
        entry = _entry(self.root, rel)
        if entry is not None and entry.hash is not None and entry.hash == digest:
            store.touch(rel, entry.size, entry.mtime_ns)
            return False
        return entry

    def _update_all(self, store: GrepStore) -> UpdateReport:
        report = UpdateReport()
        listed = rg_files(self.root)
        known = store.files()
        current = set(listed)
        gone = [p for p in known if p not in current]

        def fresh() -> Iterator[NewFile]:
            for rel in listed:
                row = known.get(rel)
                entry: NewFile | None | Literal[False]
                if row is None:
                    entry = _entry(self.root, rel)
                else:
                    entry = self._changed(row.size, row.mtime_ns, row.hash, rel, store)
                    if entry is False:
                        report.unchanged += 1
                        continue
                if entry is None:
                    if row is not None:
                        gone.append(rel)
                    continue
                yield entry

        report.written = store.write(fresh())  # a transaction per flushed segment
        with store.transaction():
            store.remove(gone)
            store.set_meta("built", "1")
        report.removed = len(gone)
        return report


class _Lock:
    def __init__(self, path: Path, timeout_s: float) -> None:
        self.path = path
        self.timeout_s = timeout_s
        self.fd = -1

    def __enter__(self) -> None:
        from navigator.paths import ensure_nav_dir, flock_within, open_private

        ensure_nav_dir(self.path.parent)
        self.fd = open_private(self.path)
        if not flock_within(self.fd, self.timeout_s):
            os.close(self.fd)
            raise IndexBusyError(
                f"another nav process is updating the grep index (lock {self.path}); wait for it"
            )

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


def first_lines(raw: bytes, n: int = 6) -> str:
    text = raw.decode("utf-8", "replace").strip().splitlines()
    return " / ".join(line.strip() for line in text[:n] if line.strip())
