"""``nav grep``: ripgrep's answers, served from a trigram index of every file ripgrep would search.

How an answer is made, so that it equals ``rg``'s on the same tree:

1. **Which files.** The index (:mod:`storage.ngrams`, ``.nav/grep.db``) holds exactly the files
   ``rg --files`` lists at the root — ripgrep's own ignore rules (``.gitignore`` inside a git
   repository, ``.ignore``, ``.rgignore``, hidden files), asked of ripgrep rather than imitated.
2. **Narrowing.** :func:`plan` reads the pattern (Rust regex syntax, or a literal under ``-F``)
   into a boolean query over trigrams that every matching line must contain: a sound
   over-approximation. Anything it does not fully understand — ``.``, ``\\w+``, inline flags,
   nested classes — weakens the query towards "all files", never towards missing one.
3. **Confirming.** ripgrep itself runs on the candidate files with the caller's options, so
   every detail of its regex engine (Unicode classes, case folding, ``-w``) is its own. Files
   holding a NUL byte (ripgrep stops searching them there) are searched in ripgrep's directory
   mode through ``-g`` whitelists, as a plain ``rg`` would; files too big to index or unreadable
   are always candidates. Without a plan, ripgrep searches the tree itself.

``-g``/``-t``/PATH narrow through ``rg --files`` with the same options (ripgrep does not apply
globs or types to files named on its command line). Paths are relative to the root; columns are
1-based code points of the first match on the line, as everywhere in nav.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import select
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from navigator.results import GrepHit, Response
from storage.errors import IndexBusyError, NavError, UsageError, shorten
from storage.ngrams import BINARY, TEXT, UNINDEXED, GrepStore, NewFile

MAX_PATTERN_CHARS = 32768
"""Longer patterns are refused (ripgrep takes them on its command line, below the kernel's 128 kB per argument)."""
MAX_INDEX_BYTES = 32 * 1024 * 1024
"""Files above this are not indexed but searched by every query (ripgrep reads them)."""
MAX_TEXT_CHARS = 1 << 20
"""A hit's text longer than this is cut (the answer's notes say so): ripgrep prints whole lines,
and minified files have lines of 100k characters."""
MAX_ANSWER_CHARS = 64 << 20
"""The text of all hits together: past this the answer stops, as at its limit."""
DEFAULT_LIMIT = 1000
MAX_ARGV_BYTES = 96 * 1024
"""File names per ripgrep run (well under the kernel's 2 MB argv limit and its 128 kB per string)."""
IGNORE_FILES = frozenset({".gitignore", ".ignore", ".rgignore"})
EXACT_SET_MAX = 64
GREP_DB = "grep.db"

# -- planning (pure) -------------------------------------------------------------------------

Query = tuple[Any, ...]  # ("all",) | ("tri", int) | ("and", (Query, ...)) | ("or", (Query, ...))
ALL: Query = ("all",)
_UNSURE_UNDER_I = frozenset(b"ks")
"""ASCII letters whose case-insensitive match includes a non-ASCII character (K: U+212A KELVIN
SIGN, s: U+017F LONG S): their trigrams cannot narrow a case-insensitive search."""


class _Bail(Exception):
    """Syntax the planner does not handle: the whole pattern is planned as "all files"."""


@dataclass(frozen=True, slots=True)
class _Info:
    exact: frozenset[bytes] | None  # every string the node can match (lowercased), when known and small
    query: Query = ALL  # what any match contains, when ``exact`` is None


_ANY = _Info(None, ALL)
_EMPTY = _Info(frozenset({b""}))


def trigram(b: bytes) -> int:
    return (b[0] << 16) | (b[1] << 8) | b[2]


def _and(parts: Sequence[Query]) -> Query:
    out: list[Query] = []
    for p in parts:
        if p == ALL:
            continue
        if p[0] == "and":
            out.extend(p[1])
        elif p not in out:
            out.append(p)
    if not out:
        return ALL
    return out[0] if len(out) == 1 else ("and", tuple(out))


def _or(parts: Sequence[Query]) -> Query:
    out: list[Query] = []
    for p in parts:
        if p == ALL:
            return ALL
        if p[0] == "or":
            out.extend(p[1])
        elif p not in out:
            out.append(p)
    if not out:
        return ALL
    return out[0] if len(out) == 1 else ("or", tuple(out))


def _string_query(s: bytes) -> Query:
    if b"\n" in s:
        return ALL
    return _and([("tri", trigram(s[i : i + 3])) for i in range(len(s) - 2)])


def _query(info: _Info) -> Query:
    if info.exact is None:
        return info.query
    return _or([_string_query(s) for s in info.exact])


def _concat(items: Sequence[_Info]) -> _Info:
    cur: frozenset[bytes] = frozenset({b""})
    parts: list[Query] = []
    flushed = False
    for it in items:
        if it.exact is not None and len(cur) * len(it.exact) <= EXACT_SET_MAX:
            cur = frozenset(a + b for a in cur for b in it.exact)
            continue
        parts.append(_query(_Info(cur)))
        flushed = True
        if it.exact is not None:
            cur = it.exact
        else:
            parts.append(it.query)
            cur = frozenset({b""})
    if not flushed:
        return _Info(cur)
    parts.append(_query(_Info(cur)))
    return _Info(None, _and(parts))


def _alternate(items: Sequence[_Info]) -> _Info:
    if all(it.exact is not None for it in items):
        union: frozenset[bytes] = frozenset().union(*(it.exact or () for it in items))
        if len(union) <= EXACT_SET_MAX:
            return _Info(union)
    return _Info(None, _or([_query(it) for it in items]))


def _char(c: str, ignore_case: bool) -> _Info:
    b = c.encode("utf-8", "surrogatepass")
    # under -i a non-ASCII character may fold to others of other bytes (ripgrep's Unicode
    # tables, not Python's): it narrows nothing
    if ignore_case and (len(b) > 1 or b.lower()[0] in _UNSURE_UNDER_I):
        return _ANY
    return _Info(frozenset({b.lower()}))


def _literal(text: str, ignore_case: bool) -> _Info:
    return _concat([_char(c, ignore_case) for c in text])


class _Parser:
    """Rust-regex syntax, as far as narrowing needs it; :class:`_Bail` on anything else."""

    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.p = pattern
        self.i = 0
        self.icase = ignore_case

    def parse(self) -> _Info:
        info = self.alternation()
        if self.i != len(self.p):
            raise _Bail("unbalanced )")
        return info

    def alternation(self) -> _Info:
        branches = [self.sequence()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else _alternate(branches)

    def sequence(self) -> _Info:
        items: list[_Info] = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            items.extend(self.repeat(self.atom()))
        return _concat(items)

    def repeat(self, atom: _Info) -> list[_Info]:
        """The atom with its quantifiers, as a sequence: ``x+`` is ``x`` then anything, ``x{2,}``
        is ``xx`` then anything, ``x?`` is ``x`` or nothing, ``x*`` is anything."""
        p = self.p
        items = [atom]
        while self.i < len(p) and p[self.i] in "*+?{":
            c = p[self.i]
            if c == "{":
                end = p.find("}", self.i)
                if end < 0:
                    raise _Bail("unclosed {")
                body = p[self.i + 1 : end]
                lo_s, comma, hi_s = body.partition(",")
                if not lo_s.strip().isdigit() or (hi_s.strip() and not hi_s.strip().isdigit()):
                    raise _Bail("bad repetition")
                lo = int(lo_s)
                exact = not comma
                if not exact and hi_s.strip():
                    exact = int(hi_s) == lo
                self.i = end + 1
            else:
                lo, exact = (1, False) if c == "+" else (0, False)
                self.i += 1
            if self.i < len(p) and p[self.i] == "?":
                self.i += 1  # lazy
            whole = _concat(items)
            if c == "?":
                items = [_Info(whole.exact | {b""})] if whole.exact is not None and len(whole.exact) < EXACT_SET_MAX else [_ANY]
            elif lo == 0:
                items = [_ANY]
            else:
                items = [whole] * min(lo, 4) + ([] if exact and lo <= 4 else [_ANY])
        return items

    def atom(self) -> _Info:
        p = self.p
        c = p[self.i]
        if c == "(":
            self.i += 1
            if p.startswith("?", self.i):
                if p.startswith("?:", self.i):
                    self.i += 2
                elif p.startswith("?P<", self.i) or p.startswith("?<", self.i):
                    end = p.find(">", self.i)
                    if end < 0:
                        raise _Bail("bad group name")
                    self.i = end + 1
                else:
                    raise _Bail("inline flags")  # (?i) (?x) ... change how the rest reads
            inner = self.alternation()
            if self.i >= len(p) or p[self.i] != ")":
                raise _Bail("unclosed (")
            self.i += 1
            return inner
        if c in "*+?{":
            raise _Bail("repetition without an operand")
        if c == "[":
            return self.char_class()
        if c == ".":
            self.i += 1
            return _ANY
        if c in "^$":
            self.i += 1
            return _EMPTY
        if c == "\\":
            return self.escape()
        self.i += 1
        return _char(c, self.icase)

    def escape(self) -> _Info:
        p = self.p
        if self.i + 1 >= len(p):
            raise _Bail("trailing backslash")
        c = p[self.i + 1]
        self.i += 2
        if c in "dDwWsS":
            return _ANY
        if c in "pP":
            if self.i < len(p) and p[self.i] == "{":
                end = p.find("}", self.i)
                if end < 0:
                    raise _Bail("unclosed \\p{")
                self.i = end + 1
            else:
                self.i += 1
            return _ANY
        if c in "bBAz":
            return _EMPTY
        simple = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
        if c in simple:
            return _char(simple[c], self.icase)
        if c in "xuU":
            return _char(self.hex_escape(c), self.icase)
        if c.isascii() and not c.isalnum():
            return _char(c, self.icase)
        raise _Bail(f"escape \\{c}")

    def hex_escape(self, kind: str) -> str:
        p = self.p
        if self.i < len(p) and p[self.i] == "{":
            end = p.find("}", self.i)
            if end < 0:
                raise _Bail("unclosed \\x{")
            digits = p[self.i + 1 : end]
            self.i = end + 1
        else:
            n = {"x": 2, "u": 4, "U": 8}[kind]
            digits = p[self.i : self.i + n]
            self.i += n
            if len(digits) != n:
                raise _Bail("short hex escape")
        try:
            cp = int(digits, 16)
            return chr(cp)
        except (ValueError, OverflowError):
            raise _Bail("bad hex escape") from None

    def char_class(self) -> _Info:
        """A plain class of a few characters (``[abc]``, ``[0-9]``); ANY for a bigger or negated
        one; a bail for nested classes and set operations."""
        p = self.p
        i = self.i + 1
        negated = i < len(p) and p[i] == "^"
        if negated:
            i += 1
        chars: list[str] = []
        first = True
        simple = not negated
        while True:
            if i >= len(p):
                raise _Bail("unclosed [")
            c = p[i]
            if c == "]" and not first:
                i += 1
                break
            first = False
            if c == "[" or p.startswith(("&&", "--", "~~"), i):
                raise _Bail("nested class or set operation")
            if c == "\\":
                if i + 1 >= len(p):
                    raise _Bail("trailing backslash")
                e = p[i + 1]
                if e in "xuU":
                    sub = _Parser(p, self.icase)
                    sub.i = i + 2
                    lit = sub.hex_escape(e)
                    i = sub.i
                elif e in "pP":
                    simple = False
                    i += 2
                    if i < len(p) and p[i] == "{":
                        end = p.find("}", i)
                        if end < 0:
                            raise _Bail("unclosed \\p{")
                        i = end + 1
                    else:
                        i += 1
                    continue
                elif e in "dDwWsS":
                    simple = False
                    i += 2
                    continue
                elif e in "ntrfva":
                    lit = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}[e]
                    i += 2
                elif e.isascii() and not e.isalnum():
                    lit = e
                    i += 2
                else:
                    raise _Bail(f"escape \\{e} in a class")
            else:
                lit = c
                i += 1
            if i + 1 < len(p) and p[i] == "-" and p[i + 1] != "]":
                hi_c = p[i + 1]
                if hi_c in "\\[":
                    raise _Bail("escaped range end")
                i += 2
                lo, hi = ord(lit), ord(hi_c)
                if hi < lo or hi - lo > EXACT_SET_MAX:
                    simple = False
                    continue
                chars.extend(chr(x) for x in range(lo, hi + 1))
            else:
                chars.append(lit)
        self.i = i
        if not simple or not chars or len(chars) > 16:
            return _ANY
        return _alternate([_char(ch, self.icase) for ch in chars])


def plan(pattern: str, *, fixed: bool = False, ignore_case: bool = False) -> Query:
    """The trigram query every line matching ``pattern`` satisfies (over ASCII-lowercased bytes);
    ``ALL`` when nothing narrows it. Sound by construction: unknown syntax plans as ``ALL``."""
    if "\n" in pattern:
        return ALL  # ripgrep reads several patterns, or refuses: let it decide on every file
    if fixed:
        return _query(_literal(pattern, ignore_case))
    try:
        return _query(_Parser(pattern, ignore_case).parse())
    except (_Bail, IndexError):
        return ALL


# -- the index -------------------------------------------------------------------------------


def rg_binary() -> str:
    found = shutil.which("rg")
    if found is None:
        raise UsageError(
            "nav grep needs ripgrep (`rg`) on PATH to confirm matches; install it "
            "(`apt-get install ripgrep`, or scripts/setup.sh)"
        )
    return found


def rg_files(root: Path, *, globs: Sequence[str] = (), types: Sequence[str] = (), paths: Sequence[str] = ()) -> list[str]:
    """The files ripgrep would search at ``root`` (with these filters), root-relative."""
    cmd = [rg_binary(), "--no-config", "--files", "--null"]
    for g in globs:
        cmd += ["-g", g]
    for t in types:
        cmd += ["-t", t]
    cmd += ["--", *paths] if paths else []
    proc = subprocess.run(cmd, cwd=root, capture_output=True, timeout=300, check=False)
    if proc.returncode == 2 and not proc.stdout:
        raise UsageError(f"ripgrep refused the file filters: {_first_lines(proc.stderr)}")
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

    def _changed(self, size: int, mtime_ns: int, digest: bytes | None, rel: str, store: GrepStore) -> NewFile | None | Literal[False]:
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
            raise IndexBusyError(f"another nav process is updating the grep index (lock {self.path}); wait for it")

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


# -- searching -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GrepOptions:
    pattern: str
    fixed: bool = False
    ignore_case: bool = False
    word: bool = False
    files_only: bool = False
    count: bool = False
    globs: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    before: int = 0
    after: int = 0
    max_count: int | None = None
    limit: int | None = DEFAULT_LIMIT
    deadline_s: float = 30.0


def check_options(o: GrepOptions) -> None:
    if not isinstance(o.pattern, str):
        raise UsageError(f"the pattern must be text, got {shorten(repr(o.pattern))}")
    if len(o.pattern) > MAX_PATTERN_CHARS:
        raise UsageError(
            f"pattern `{shorten(o.pattern)}` is {len(o.pattern):,} characters (at most {MAX_PATTERN_CHARS:,}); "
            "search for a shorter part of it"
        )
    if "\0" in o.pattern or any("\0" in s for s in (*o.globs, *o.types, *o.paths)):
        raise UsageError(f"pattern or option `{shorten(o.pattern)}` holds a NUL character, which ripgrep cannot take; remove it")
    for name, value in (("before", o.before), ("after", o.after)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1000:
            raise UsageError(f"context `{name}` must be a whole number from 0 to 1000, got {shorten(repr(value))}")
    counts: tuple[tuple[str, int | None], ...] = (("max_count", o.max_count), ("limit", o.limit))
    for name, count in counts:
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
            raise UsageError(f"`{name}` must be a positive whole number, got {shorten(repr(count))}")
    if not isinstance(o.deadline_s, int | float) or not 0 < o.deadline_s <= 3600:
        raise UsageError(f"`deadline_s` must be a number of seconds in (0, 3600], got {shorten(repr(o.deadline_s))}")
    if o.files_only and o.count:
        raise UsageError("-l (files with matches) and -c (counts) cannot be combined; choose one")


def _flags(o: GrepOptions) -> list[str]:
    cmd = [rg_binary(), "--no-config", "--no-heading", "--with-filename", "--null", "--color", "never"]
    if o.files_only:
        cmd.append("--files-with-matches")
    elif o.count:
        cmd.append("--count")
    else:
        cmd += ["--line-number", "--column"]
        if o.before:
            cmd += ["-B", str(o.before)]
        if o.after:
            cmd += ["-A", str(o.after)]
    if o.fixed:
        cmd.append("--fixed-strings")
    if o.ignore_case:
        cmd.append("--ignore-case")
    if o.word:
        cmd.append("--word-regexp")
    if o.max_count is not None:
        cmd += ["--max-count", str(o.max_count)]
    return cmd


def evaluate(store: GrepStore, q: Query) -> set[int]:
    """Document ids satisfying ``q`` (never ALL: the caller handles that)."""
    kind = q[0]
    if kind == "tri":
        return store.postings(q[1])
    if kind == "and":
        result: set[int] | None = None
        for sub in q[1]:
            docs = evaluate(store, sub)
            result = docs if result is None else result & docs
            if not result:
                return set()
        return result or set()
    if kind == "or":
        out: set[int] = set()
        for sub in q[1]:
            out |= evaluate(store, sub)
        return out
    raise ValueError(f"not a narrowing query: {q!r}")


def _glob_escape(path: str) -> str:
    return "/" + "".join("\\" + c if c in "*?[]{}\\!," else c for c in path)


@dataclass
class _Run:
    hits: list[GrepHit] = field(default_factory=list)
    matches: int = 0
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    truncated_text: int = 0
    chars: int = 0
    limit_hit: bool = False
    deadline_hit: bool = False


def search(root: Path, index: GrepIndex | None, o: GrepOptions) -> Response[GrepHit]:
    """Answer one grep (the index already brought up to date by the caller)."""
    check_options(o)
    started = time.perf_counter()
    deadline = time.monotonic() + o.deadline_s
    q = plan(o.pattern, fixed=o.fixed, ignore_case=o.ignore_case)
    flags = _flags(o)
    run = _Run()
    source = "rg"
    if q == ALL or index is None:
        cmd = flags.copy()
        for g in o.globs:
            cmd += ["-g", g]
        for t in o.types:
            cmd += ["-t", t]
        cmd += ["-e", o.pattern, "--", *o.paths]
        _rg(root, cmd, o, run, deadline)
    else:
        source = "index+rg"
        store = index.store
        cands = dict(store.paths_of(evaluate(store, q)))
        cands.update(store.all_paths((UNINDEXED,)))
        explicit: set[str] = set()
        if o.globs or o.types or o.paths:
            allowed = rg_files(root, globs=o.globs, types=o.types, paths=o.paths)
            explicit = {p for p in o.paths if (root / p).is_file()}
            known = {p for p, _ in store.all_paths()}
            cands = {p: k for p, k in cands.items() if p in set(allowed)}
            for p in allowed:
                if p not in known:
                    cands[p] = UNINDEXED  # not in the index (new, or named on the command line): read it
        # text files as ripgrep's explicit arguments; the rest (a NUL byte, or not read at index
        # time) through its directory walk, where it stops at a NUL as a plain `rg` does
        texts = sorted(p for p, k in cands.items() if k == TEXT or p in explicit)
        binaries = sorted(p for p, k in cands.items() if k != TEXT and p not in explicit)
        literal = plain_literal(o)
        if literal is not None:
            source = "index+scan"
            texts = _scan(root, texts, literal, o, run, deadline)  # what it could not take goes to rg
        elif not texts and not binaries:
            _rg(root, [*flags, "-e", o.pattern, "--", os.devnull], o, run, deadline)  # ripgrep checks the pattern
        for batch in _batches(texts):
            if run.limit_hit or run.deadline_hit:
                break
            _rg(root, [*flags, "-e", o.pattern, "--", *batch], o, run, deadline)
        for batch in _batches(binaries):
            if run.limit_hit or run.deadline_hit:
                break
            globs = [a for p in batch for a in ("-g", _glob_escape(p))]
            _rg(root, [*flags, *globs, "-e", o.pattern], o, run, deadline)
    hits = sorted(run.hits, key=lambda h: (h.path, h.line))
    reason = None
    if run.deadline_hit:
        reason = f"deadline reached ({o.deadline_s:g} s): ripgrep was stopped; narrow the pattern or the paths"
    elif run.limit_hit:
        shown = f"the first {o.limit} matching lines" if run.chars <= MAX_ANSWER_CHARS else f"{MAX_ANSWER_CHARS >> 20}M characters of text"
        reason = f"limit reached: {shown}; pass a larger limit, -m, or narrow the search"
    elif run.errors:
        shown = "; ".join(shorten(e, 200) for e in run.errors[:3])
        more = f" (+{len(run.errors) - 3} more)" if len(run.errors) > 3 else ""
        reason = f"some files could not be searched: {shown}{more}"
    notes = list(run.notes)
    if run.truncated_text:
        notes.append(f"{run.truncated_text} long lines cut at {MAX_TEXT_CHARS} characters")
    return Response(
        items=tuple(hits),
        complete=reason is None,
        reason=reason,
        source=source,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 2),
        notes=tuple(notes),
    )


_REGEX_META = frozenset("\\.+*?()|[]{}^$#&-~")
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def plain_literal(o: GrepOptions) -> bytes | None:
    """The bytes to look for when a match is a substring test — a case-sensitive literal
    (``-F``, or a regex with no metacharacter), no context — else None. ripgrep matches such a
    pattern wherever its UTF-8 bytes occur in a line, which ``bytes.find`` decides the same way
    without starting a process; under ``-w`` (ripgrep's ``(?:^|\\W)lit(?:$|\\W)``) each
    occurrence's neighbours are checked too, where they are ASCII."""
    if o.ignore_case or o.before or o.after or not o.pattern or "\n" in o.pattern:
        return None
    if not o.fixed and any(c in _REGEX_META for c in o.pattern):
        return None
    try:
        return o.pattern.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: ripgrep says what it thinks of it
        return None


_WORD = frozenset(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _scan(root: Path, paths: list[str], lit: bytes, o: GrepOptions, run: _Run, deadline: float) -> list[str]:
    """Find ``lit`` in text files here; return the files ripgrep must search instead (a BOM,
    which ripgrep strips or transcodes; a NUL byte since indexing; unreadable; under ``-w``, a
    non-ASCII neighbour, whose Unicode word-ness is ripgrep's to decide)."""
    left: list[str] = []
    for n, rel in enumerate(paths):
        if run.limit_hit:
            break
        if n % 64 == 0 and time.monotonic() > deadline:
            run.deadline_hit = True
            break
        try:
            with open(root / rel, "rb") as fh:
                data = fh.read()
        except OSError:
            left.append(rel)
            continue
        if data.startswith(_BOMS) or b"\0" in data:
            left.append(rel)
            continue
        found = _find_lines(data, lit, o)
        if found is None:
            left.append(rel)
            continue
        if not found:
            continue
        if o.files_only or o.count:
            hits = [GrepHit(rel, 0, 0, "", count=len(found) if o.count else None)]
        else:
            hits = []
            for line_no, line, offset in found:
                text = line.decode("utf-8", "replace")
                if len(text) > MAX_TEXT_CHARS:
                    text = text[:MAX_TEXT_CHARS]
                    run.truncated_text += 1
                hits.append(GrepHit(rel, line_no, len(line[:offset].decode("utf-8", "replace")) + 1, text))
        for hit in hits:
            if (o.limit is not None and run.matches >= o.limit) or run.chars > MAX_ANSWER_CHARS:
                run.limit_hit = True
                break
            run.hits.append(hit)
            run.matches += 1
            run.chars += len(hit.text)
    return left


def _find_lines(data: bytes, lit: bytes, o: GrepOptions) -> list[tuple[int, bytes, int]] | None:
    """(line number, line, byte offset of the first match) of each matching line (at most
    ``max_count``; one for ``files_only``); None when only ripgrep can decide."""
    out: list[tuple[int, bytes, int]] = []
    lines = 0
    counted = 0  # data[:counted] holds ``lines`` newlines
    i = data.find(lit)
    size = len(lit)
    while i >= 0:
        start = data.rfind(b"\n", 0, i) + 1
        end = data.find(b"\n", i + size)
        if end < 0:
            end = len(data)
        if o.word:
            before = data[i - 1] if i > start else None
            after = data[i + size] if i + size < end else None
            if (before is not None and before >= 0x80) or (after is not None and after >= 0x80):
                return None
            if (before is not None and before in _WORD) or (after is not None and after in _WORD):
                i = data.find(lit, i + 1)
                continue
        lines += data.count(b"\n", counted, start)
        counted = start
        out.append((lines + 1, data[start:end], i - start))
        if o.files_only or (o.max_count is not None and len(out) >= o.max_count):
            break
        i = data.find(lit, end + 1) if end < len(data) else -1
    return out


def fresh_search(root: Path, index: GrepIndex, o: GrepOptions, *, walk: bool, lock_wait_s: float = 2.0) -> Response[GrepHit]:
    """:func:`search` after bringing the index up to date (a stat walk when ``walk``, or when it
    was never built). An index that cannot be written or read is not a failure: ripgrep then
    searches the tree itself, and the answer says so."""
    check_options(o)
    note = None
    usable = True
    try:
        built = index.exists() and index.store.built()
        if walk or not built:
            index.update(lock_wait_s=lock_wait_s if built else 60.0)
    except IndexBusyError:
        note = "another process is updating the grep index; files it has not reached yet were searched by ripgrep"
    except (NavError, OSError, sqlite3.Error) as exc:
        note = f"the grep index cannot be used ({exc}); ripgrep searched the tree itself"
        usable = False
    try:
        usable = usable and index.exists() and index.store.built()
    except (NavError, OSError, sqlite3.Error):
        usable = False
    answer = search(root, index if usable else None, o)
    return dataclasses.replace(answer, notes=(*answer.notes, note)) if note else answer


def _batches(paths: list[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for p in paths:
        n = len(os.fsencode(p)) + 8
        if batch and size + n > MAX_ARGV_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(p)
        size += n
    if batch:
        yield batch


def _first_lines(raw: bytes, n: int = 6) -> str:
    text = raw.decode("utf-8", "replace").strip().splitlines()
    return " / ".join(line.strip() for line in text[:n] if line.strip())


def _rg(root: Path, cmd: list[str], o: GrepOptions, run: _Run, deadline: float) -> None:
    """Run ripgrep once, reading its output into ``run`` until the limit or the deadline."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        run.deadline_hit = True
        return
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        buf = b""
        stopped = False
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    run.deadline_hit = True
                    stopped = True
                    break
                ready, _, _ = select.select([fd], [], [], remaining)
                if not ready:
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                buf += chunk
                if o.files_only:
                    *done, buf = buf.split(b"\0")
                    for raw in done:
                        _files_line(raw, run)
                else:
                    *lines, buf = buf.split(b"\n")
                    for raw in lines:
                        _line(raw, o, run)
                if (o.limit is not None and run.matches > o.limit) or run.chars > MAX_ANSWER_CHARS:
                    run.limit_hit = stopped = True  # one more than asked: there is more
                    break
        finally:
            if stopped and proc.poll() is None:
                proc.kill()
            proc.stdout.close()
            proc.wait()
        if not stopped and buf and not run.deadline_hit:
            if o.files_only:
                _files_line(buf, run)
            else:
                _line(buf, o, run)
        if run.limit_hit and o.limit is not None and run.matches > o.limit:
            keep, seen = [], 0
            for h in run.hits:
                if not h.context:
                    seen += 1
                    if seen > o.limit:
                        break
                keep.append(h)
            run.hits = keep
            run.matches = o.limit
        err.seek(0)
        stderr = err.read(1 << 20)
    if proc.returncode == 2 and not stopped:
        message = _first_lines(stderr)
        if not run.hits and ("regex" in message or "error:" in message or "parse" in message) and not _file_errors(stderr):
            raise UsageError(
                f"ripgrep cannot use the pattern `{shorten(o.pattern)}`: {shorten(message, 400)}; "
                "fix the regular expression, or pass -F to search for it literally"
            )
        run.errors.extend(_file_errors(stderr) or [message])


def _file_errors(stderr: bytes) -> list[str]:
    out = []
    for line in stderr.decode("utf-8", "replace").splitlines():
        if ": " in line and ("(os error" in line or "Permission denied" in line or "No such file" in line):
            out.append(line.strip())
    return out


def _files_line(raw: bytes, run: _Run) -> None:
    raw = raw.strip(b"\n")
    if raw:
        run.hits.append(GrepHit(_clean(raw), 0, 0, ""))
        run.matches += 1


def _clean(raw: bytes) -> str:
    name = os.fsdecode(raw)
    return name[2:] if name.startswith("./") else name


def _line(raw: bytes, o: GrepOptions, run: _Run) -> None:
    if not raw or raw == b"--":
        return
    path_b, sep, rest = raw.partition(b"\0")
    if not sep:
        text = raw.decode("utf-8", "replace")
        if "binary file" in text:
            run.notes.append(text)  # ripgrep's note on a binary file (named, or stopped after a match)
        return
    path = _clean(path_b)
    if o.count:
        try:
            n = int(rest)
        except ValueError:
            return
        run.hits.append(GrepHit(path, 0, 0, "", count=n))
        run.matches += 1
        return
    i = 0
    while i < len(rest) and 48 <= rest[i] <= 57:
        i += 1
    if i == 0 or i >= len(rest):
        return
    line_no = int(rest[:i])
    context = rest[i] == 45  # '-'
    body = rest[i + 1 :]
    col = 0
    if not context:
        j = body.find(b":")
        if j > 0 and body[:j].isdigit():
            byte_col = int(body[:j])
            body = body[j + 1 :]
            col = len(body[: byte_col - 1].decode("utf-8", "replace")) + 1
        else:
            col = 1  # ripgrep prints no column for some empty matches (at the end of a file, under -w)
    text = body.decode("utf-8", "replace")
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS]
        run.truncated_text += 1
    run.hits.append(GrepHit(path, line_no, col, text, context=context))
    run.chars += len(text)
    if not context:
        run.matches += 1
