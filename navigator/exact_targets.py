"""What the exact leg asks its servers about: the text forms of a target, turned into positions.

A name (``createSalesOrder``, ``Order.create``, ``pkg.module.func``) resolves through the
symbol table (:class:`SymbolTable`; ``Navigator`` is one through :class:`NavigatorTable`) to
its definitions' names; ``path:line[:col]`` names a position directly, confined to the root,
with the identifier under it. :class:`Files` is one request's view of the files it reads
(an editor's buffers first, then the disk, never outside the root). No language server here:
:mod:`navigator.exact` asks them, and merges and completes their answers.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lsp.positions import split_lines
from navigator.confine import confine, is_inside, open_inside, read_text_inside
from navigator.walk import looks_secret
from semantic.languages import detect_language
from storage.db import RefRow, Store, SymbolRow
from storage.errors import OutsideRootError, SymbolNotFoundError, UsageError, shorten

_POSITION = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::(?P<col>\d+))?$")
IDENT = re.compile(r"[A-Za-z_$][\w$]*")


class SymbolTable(Protocol):
    """What the exact leg needs from the index."""

    def resolve(self, name: str) -> list[SymbolRow]: ...

    def suggestions(self, name: str) -> list[str]: ...

    def symbols_in_file(self, path: str) -> list[SymbolRow]: ...

    def refs_by_name(self, name: str) -> list[RefRow]: ...

    def file_language(self, path: str) -> str | None: ...


class IndexedCheckout(Protocol):
    """What :class:`NavigatorTable` reads of the facade. :class:`navigator.api.Navigator` is
    one; it composes this module, so this module does not import it (the engine's imports
    point one way: ``tests/test_layout.py``)."""

    @property
    def store(self) -> Store: ...

    @property
    def refresh(self) -> bool: ...

    def resolve(self, name: str) -> list[SymbolRow]: ...

    def suggestions(self, name: str) -> list[str]: ...


class NavigatorTable:
    """:class:`SymbolTable` over a :class:`~navigator.api.Navigator` (index kept fresh by it)."""

    def __init__(self, nav: IndexedCheckout) -> None:
        self.nav = nav

    def resolve(self, name: str) -> list[SymbolRow]:
        return self.nav.resolve(name)

    def suggestions(self, name: str) -> list[str]:
        return self.nav.suggestions(name)

    def symbols_in_file(self, path: str) -> list[SymbolRow]:
        return self.nav.store.symbols_in_file(path)

    def refs_by_name(self, name: str) -> list[RefRow]:
        return self.nav.store.refs_by_name(name)

    def file_language(self, path: str) -> str | None:
        row = self.nav.store.file_row(path)
        return (row.language or "") if row is not None else None  # "": indexed, no language

    def follows_changes(self) -> bool:
        """True when something else reports file changes (the daemon's watcher turns the
        Navigator's per-query refresh off and calls ``Navigator.files_changed()`` after
        each re-index): the servers are then told those changes instead of the tree being
        walked before every request. Optional in :class:`SymbolTable`."""
        return not self.nav.refresh and callable(getattr(self.nav, "files_changed", None))


@dataclass(frozen=True, slots=True)
class Target:
    """A position to ask a server about: a definition's name, or an explicit position."""

    path: str
    line: int
    col: int
    name: str
    language: str | None
    qualified_name: str | None = None
    kind: str | None = None


def parse_position(query: str) -> tuple[str, int, int | None] | None:
    """``path:line[:col]`` → (path, line, col); None when ``query`` is not shaped like one."""
    m = _POSITION.match(query.strip())
    if not m:
        return None
    return m["path"], int(m["line"]), int(m["col"]) if m["col"] else None


def enclosing_symbol(rows: Iterable[SymbolRow], line: int) -> SymbolRow | None:
    """The innermost symbol whose span contains ``line``."""
    best: SymbolRow | None = None
    for row in rows:
        span = row.definition.span
        if span.start_line <= line <= span.end_line and (
            best is None
            or (span.start_line, -span.end_line)
            > (best.definition.span.start_line, -best.definition.span.end_line)
        ):
            best = row
    return best


def resolve_targets(query: str, table: SymbolTable, root: Path) -> list[Target]:
    """Turn a name or ``path:line[:col]`` into the positions to ask about."""
    if not isinstance(query, str) or not query.strip():
        raise UsageError(f"a symbol name or path:line:col is required, got {shorten(repr(query))}")
    query = query.strip()
    pos = parse_position(query)
    if pos is not None and (_path_like(pos[0]) or (root / pos[0]).exists()):
        confine(root, pos[0])  # outside the root: refused before anything is read or revealed
    if pos is not None and (root / pos[0]).is_file():
        return [_position_target(root, *pos, table=table)]
    if pos is not None and Path(pos[0]).is_absolute() and Path(pos[0]).is_file():
        try:
            rel = Path(pos[0]).resolve().relative_to(root).as_posix()
        except ValueError:
            raise UsageError(f"`{shorten(pos[0])}` is outside the root {root}") from None
        return [_position_target(root, rel, pos[1], pos[2], table=table)]
    if pos is not None and _path_like(pos[0]) and not (root / pos[0]).exists():
        raise UsageError(f"no file `{shorten(pos[0])}` under {root} (position `{shorten(query)}`)")
    rows = table.resolve(query)
    if not rows:
        raise SymbolNotFoundError(query, table.suggestions(query))
    out: list[Target] = []
    for row in rows:
        d = row.definition
        out.append(
            Target(
                path=d.path,
                line=d.name_span.start_line,
                col=d.name_span.start_col,
                name=d.name,
                language=d.language or detect_language(d.path),
                qualified_name=d.qualified_name,
                kind=d.kind,
            )
        )
    return out


def _path_like(text: str) -> bool:
    return "/" in text or "." in text.rsplit("/", 1)[-1]


def buffer_text(table: SymbolTable, path: str) -> str | None:
    """The text an editor holds for ``path`` (root-relative), when the table carries editor
    buffers (the optional ``text_of`` of ``nav lsp``'s overlay); None: read the disk."""
    text_of = getattr(table, "text_of", None)
    return text_of(path) if callable(text_of) else None


def _position_target(root: Path, path: str, line: int, col: int | None, *, table: SymbolTable) -> Target:
    path = confine(root, path)  # the real file, under the root (a symlink inside it: its target)
    text = buffer_text(table, path)
    if text is None:
        if looks_secret(path.rsplit("/", 1)[-1]) and table.file_language(path) is None:
            raise UsageError(
                f"`{path}` looks like a secret (key, credentials, .env), which nav leaves out and does not "
                "read; `[index] include_secrets = true` in .nav.toml takes such files in"
            )
        text = read_text_inside(root, path)
        if text is None:
            raise UsageError(
                f"cannot read `{shorten(path)}`; check that it is a readable file under the root"
            )
    lines = split_lines(text)
    if not 1 <= line <= len(lines):
        raise UsageError(f"line {shorten(line)} is outside `{shorten(path)}`, which has {len(lines)} lines")
    line_text = lines[line - 1]
    if col is None:
        m = IDENT.search(line_text)
        col = m.start() + 1 if m else 1
    if not 1 <= col <= len(line_text) + 1:
        raise UsageError(
            f"column {shorten(col)} is outside line {line} of `{shorten(path)}`, which has {len(line_text)} characters"
        )
    name = ""
    for m in IDENT.finditer(line_text):
        if m.start() < col <= m.end() + (1 if m.end() == col - 1 else 0):
            name = m.group()
            break
    language = table.file_language(path) or detect_language(path, text)
    return Target(path=path, line=line, col=col, name=name, language=language)


_LINES_MEMO: dict[tuple[int, int, int, int, int], tuple[list[str], bool]] = {}
_LINES_MEMO_FILES = 512
_SETTLED_S = 2.0  # a file changed within this long may change again within the clock's tick


def disk_lines(root: Path, path: Path) -> tuple[list[str], bool] | None:
    """The lines of the file ``path`` (under ``root``: :func:`open_inside` checks the file it
    opened) and whether it starts with a byte-order mark (which the lines leave out), or None.
    Split files are remembered by what ``fstat`` says of the file opened (device, inode, size,
    mtime, ctime), so asking again for an unchanged file costs an open and a stat, not a read and
    a split; a file changed within the last :data:`_SETTLED_S` seconds is not remembered (two
    writes inside one clock tick can leave the same times: git's "racy" rule). The list is
    shared: callers read it, never change it."""
    try:
        fd = open_inside(root, path)
    except (OSError, OutsideRootError):
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            held = _LINES_MEMO.get(key)
            if held is not None:
                return held
            data = fh.read()
        except OSError:
            return None
    text = data.decode("utf-8", errors="replace")
    got = (split_lines(text), text.startswith("\ufeff"))
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _SETTLED_S * 1e9:
        if len(_LINES_MEMO) >= _LINES_MEMO_FILES:
            _LINES_MEMO.pop(next(iter(_LINES_MEMO)), None)  # the oldest
        _LINES_MEMO[key] = got
    return got


class Files:
    """Per-request cache of file lines and symbol rows."""

    def __init__(self, root: Path, table: SymbolTable) -> None:
        self.root = root
        self.table = table
        self._lines: dict[str, list[str] | None] = {}
        self._symbols: dict[str, list[SymbolRow]] = {}
        self._inside: dict[str, bool] = {}
        self.bom: set[str] = set()
        """Files (as asked for) that start with a byte-order mark, which nav's columns do not count."""
        self.outside = 0
        """Locations a server reported outside the root (libraries, symlink targets): left out."""

    def inside(self, path: str) -> bool:
        if path not in self._inside:
            self._inside[path] = is_inside(self.root, path)
        return self._inside[path]

    def rel(self, abspath: str) -> str:
        try:
            return Path(abspath).relative_to(self.root).as_posix()
        except ValueError:
            return abspath

    def absolute(self, path: str) -> Path:
        p = Path(path)
        return p if p.is_absolute() else self.root / p

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines and not Path(path).is_absolute():
            buffer = buffer_text(self.table, path)
            if buffer is not None:
                self._lines[path] = split_lines(buffer)
        if path not in self._lines:
            got = disk_lines(self.root, self.absolute(path))  # never outside the root
            if got is not None and got[1]:
                self.bom.add(path)
            self._lines[path] = got[0] if got is not None else None
        return self._lines[path]

    def bom_shift(self, path: str, line: int, bom_is_text: bool) -> int:
        """1 where the server counts a mark that nav's columns do not (line 1 of such a file)."""
        if not bom_is_text or line != 1:
            return 0
        self.lines(path)
        return 1 if path in self.bom else 0

    def line(self, path: str, line: int) -> str:
        lines = self.lines(path)
        return lines[line - 1] if lines and 1 <= line <= len(lines) else ""

    def symbols(self, path: str) -> list[SymbolRow]:
        if Path(path).is_absolute():
            return []
        if path not in self._symbols:
            self._symbols[path] = self.table.symbols_in_file(path)
        return self._symbols[path]
