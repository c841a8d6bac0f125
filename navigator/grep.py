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
import os
import select
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from navigator.grep_index import GrepIndex, first_lines, rg_binary, rg_files
from navigator.grep_plan import ALL, Query, plan
from navigator.results import GrepHit, Response
from storage.errors import IndexBusyError, NavError, UsageError, shorten
from storage.ngrams import TEXT, UNINDEXED, GrepStore

__all__ = ["GrepIndex", "GrepOptions", "check_options", "fresh_search", "plain_literal", "plan", "search"]
"""What the engine and the front ends use of ``nav grep``; the index and the planner live in
:mod:`navigator.grep_index` and :mod:`navigator.grep_plan`."""

MAX_PATTERN_CHARS = 32768
"""Longer patterns are refused (ripgrep takes them on its command line, below the kernel's 128 kB per argument)."""
MAX_TEXT_CHARS = 1 << 20
"""A hit's text longer than this is cut (the answer's notes say so): ripgrep prints whole lines,
and minified files have lines of 100k characters."""
MAX_ANSWER_CHARS = 64 << 20
"""The text of all hits together: past this the answer stops, as at its limit."""
DEFAULT_LIMIT = 1000
MAX_ARGV_BYTES = 96 * 1024
"""File names per ripgrep run (well under the kernel's 2 MB argv limit and its 128 kB per string)."""

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
        raise UsageError(
            f"pattern or option `{shorten(o.pattern)}` holds a NUL character, which ripgrep cannot take; remove it"
        )
    for name, value in (("before", o.before), ("after", o.after)):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 1000:
            raise UsageError(
                f"context `{name}` must be a whole number from 0 to 1000, got {shorten(repr(value))}"
            )
    counts: tuple[tuple[str, int | None], ...] = (("max_count", o.max_count), ("limit", o.limit))
    for name, count in counts:
        if count is not None and (not isinstance(count, int) or isinstance(count, bool) or count < 1):
            raise UsageError(f"`{name}` must be a positive whole number, got {shorten(repr(count))}")
    if not isinstance(o.deadline_s, int | float) or not 0 < o.deadline_s <= 3600:
        raise UsageError(
            f"`deadline_s` must be a number of seconds in (0, 3600], got {shorten(repr(o.deadline_s))}"
        )
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
        _rg(root, cmd, o, run, deadline, walk=True)
    else:
        source = "index+rg"
        store = index.store
        cands = dict(store.paths_of(evaluate(store, q)))
        cands.update(store.all_paths((UNINDEXED,)))
        explicit: set[str] = set()
        if o.globs or o.types or o.paths:
            allowed = rg_files(root, globs=o.globs, types=o.types, paths=o.paths)
            if not allowed:  # ripgrep's search refuses this (exit 2), though its --files does not
                raise UsageError(_no_files(o))
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
            _rg(
                root, [*flags, "-e", o.pattern, "--", os.devnull], o, run, deadline
            )  # ripgrep checks the pattern
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
        reason = (
            f"deadline reached ({o.deadline_s:g} s): ripgrep was stopped; narrow the pattern or the paths"
        )
    elif run.limit_hit:
        shown = (
            f"the first {o.limit} matching lines"
            if run.chars <= MAX_ANSWER_CHARS
            else f"{MAX_ANSWER_CHARS >> 20}M characters of text"
        )
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


def fresh_search(
    root: Path, index: GrepIndex, o: GrepOptions, *, walk: bool, lock_wait_s: float = 2.0
) -> Response[GrepHit]:
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


def _rg(
    root: Path, cmd: list[str], o: GrepOptions, run: _Run, deadline: float, *, walk: bool = False
) -> None:
    """Run ripgrep once, reading its output into ``run`` until the limit or the deadline.
    ``walk``: ripgrep walks the tree itself, so "no files were searched" means the caller's
    filters left none (an error, as ripgrep's exit code 2 says), not a whitelist gone stale."""
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
        message = first_lines(stderr)
        if walk and not run.hits and message.startswith("No files were searched"):
            raise UsageError(_no_files(o))
        if (
            not run.hits
            and ("regex" in message or "error:" in message or "parse" in message)
            and not _file_errors(stderr)
        ):
            raise UsageError(
                f"ripgrep cannot use the pattern `{shorten(o.pattern)}`: {shorten(message, 400)}; "
                "fix the regular expression, or pass -F to search for it literally"
            )
        run.errors.extend(_file_errors(stderr) or [message])


def _no_files(o: GrepOptions) -> str:
    shown = " ".join([*(f"-g {g}" for g in o.globs), *(f"-t {t}" for t in o.types), *o.paths])
    return f"no file ripgrep would search passes the filters `{shorten(shown or '(none)')}`; loosen them"


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
