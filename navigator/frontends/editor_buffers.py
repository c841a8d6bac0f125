"""The documents one editor connection holds open, and the index seen through them.

An editor lives in unsaved buffers. For the files it holds open, ``nav lsp`` answers from
the buffer's text, not the disk's:

- :class:`Buffers` keeps each open document's text and version (one per root, per editor
  connection: it lives in the ``nav lsp`` process, so the CLI and agents sharing the
  root's daemon never see it), and parses a document with the indexer's own tree-sitter
  code (:func:`semantic.parse.parse_source`) the first time its symbols are wanted after a
  change, cached by version;
- :class:`BufferTable` is the exact leg's :class:`~navigator.exact.SymbolTable` with the
  open documents laid over the index: their symbols and syntax references come from the
  buffer, everything else from the index.

Pure bookkeeping: no I/O beyond reading the disk's text for a line map.
"""

from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from navigator.confine import read_text_inside
from navigator.public import ParsedFile, RefRow, SymbolRow, detect_language, parse_source

__all__ = ["Buffer", "Buffers", "BufferTable", "LineMap"]


@dataclass
class Buffer:
    rel: str
    text: str
    version: int
    language: str | None
    _parsed: ParsedFile | None = field(default=None, repr=False)


class Buffers:
    """Open documents under one root (root-relative paths). Thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._docs: dict[str, Buffer] = {}
        self._lock = threading.Lock()
        self.parses = 0
        """How many times a buffer was parsed (tests check the cache)."""

    def open(self, rel: str, text: str, version: int) -> None:
        with self._lock:
            self._docs[rel] = Buffer(rel, text, version, detect_language(rel, text))

    def change(self, rel: str, text: str, version: int) -> None:
        with self._lock:
            doc = self._docs.get(rel)
            if doc is None:
                self._docs[rel] = Buffer(rel, text, version, detect_language(rel, text))
            else:
                doc.text, doc.version, doc._parsed = text, version, None

    def close(self, rel: str) -> None:
        with self._lock:
            self._docs.pop(rel, None)

    def paths(self) -> list[str]:
        with self._lock:
            return list(self._docs)

    def text_of(self, rel: str) -> str | None:
        with self._lock:
            doc = self._docs.get(rel)
            return doc.text if doc is not None else None

    def version_of(self, rel: str) -> int | None:
        with self._lock:
            doc = self._docs.get(rel)
            return doc.version if doc is not None else None

    def parsed(self, rel: str) -> ParsedFile | None:
        """The buffer's symbols and syntax references (None: not open). Parsed on the first
        call after a change, then cached until the next change."""
        with self._lock:
            doc = self._docs.get(rel)
            if doc is None:
                return None
            if doc._parsed is not None:
                return doc._parsed
            text, version, language = doc.text, doc.version, doc.language
        parsed = parse_source(rel, text, language)
        with self._lock:
            self.parses += 1
            doc = self._docs.get(rel)
            if doc is not None and doc.version == version and doc.text is text:
                doc._parsed = parsed
        return parsed

    def dirty(self, rel: str) -> bool:
        """Whether the buffer's text differs from the file on disk."""
        text = self.text_of(rel)
        if text is None:
            return False
        disk = read_text_inside(self.root, rel)  # never outside the root
        return disk is None or disk != text


class LineMap:
    """Maps a line of the disk's version of a file to the buffer's (1-based), for answers
    the index gives in disk lines (search chunks). Lines the buffer changed map to None."""

    def __init__(self, disk: str, buffer: str) -> None:
        self._map: dict[int, int] = {}
        matcher = difflib.SequenceMatcher(None, disk.splitlines(), buffer.splitlines(), autojunk=False)
        for a, b, size in matcher.get_matching_blocks():
            for i in range(size):
                self._map[a + i + 1] = b + i + 1

    def line(self, disk_line: int) -> int | None:
        return self._map.get(disk_line)


class BufferTable:
    """The exact leg's symbol table with the open documents laid over the index.

    ``base`` is a :class:`~navigator.exact.NavigatorTable` (the index on disk)."""

    def __init__(self, base: Any, buffers: Buffers, *, follows_changes: bool = False) -> None:
        self.base = base
        self.buffers = buffers
        self._follows = follows_changes

    def _rows(self, rel: str, parsed: ParsedFile) -> list[SymbolRow]:
        # negative ids: never confused with the index's rows
        return [SymbolRow(-(i + 1), d) for i, d in enumerate(parsed.symbols)]

    def _open_parsed(self) -> dict[str, ParsedFile]:
        out = {}
        for rel in self.buffers.paths():
            parsed = self.buffers.parsed(rel)
            if parsed is not None:
                out[rel] = parsed
        return out

    def resolve(self, name: str) -> list[SymbolRow]:
        opened = self._open_parsed()
        rows = [r for r in self.base.resolve(name) if r.definition.path not in opened]
        dotted = name.replace("::", ".").replace("#", ".")
        for rel, parsed in opened.items():
            for row in self._rows(rel, parsed):
                d = row.definition
                if d.name == dotted or d.qualified_name == dotted or d.qualified_name.endswith("." + dotted):
                    rows.append(row)
        return rows

    def suggestions(self, name: str) -> list[str]:
        out: list[str] = self.base.suggestions(name)
        return out

    def symbols_in_file(self, path: str) -> list[SymbolRow]:
        parsed = self.buffers.parsed(path)
        if parsed is not None:
            return self._rows(path, parsed)
        rows: list[SymbolRow] = self.base.symbols_in_file(path)
        return rows

    def refs_by_name(self, name: str) -> list[RefRow]:
        opened = self._open_parsed()
        rows = [r for r in self.base.refs_by_name(name) if r.path not in opened]
        for rel, parsed in opened.items():
            rows += [RefRow(rel, r.name, r.line, r.col, r.end_col) for r in parsed.refs if r.name == name]
        return rows

    def file_language(self, path: str) -> str | None:
        language: str | None = self.base.file_language(path)
        if language is None:
            text = self.buffers.text_of(path)
            if text is not None:
                language = detect_language(path, text)
        return language

    def text_of(self, path: str) -> str | None:
        """The editor's text for ``path`` (the exact leg's hook: positions, code lines)."""
        return self.buffers.text_of(path)

    def follows_changes(self) -> bool:
        return self._follows
