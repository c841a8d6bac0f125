"""An in-memory index for fast unit tests of the pure core: :class:`FakeIndex` answers
:class:`storage.query.IndexQueries` (and so :class:`~storage.query.VectorCache` and
:class:`~storage.query.TextStats`) in plain Python, with no database.

It holds what :meth:`storage.db.Store.replace_file` stores and answers the same questions with
the same contract (``tests/test_store_contract.py`` runs one suite against it and the real
stores). Full text is tokenized as the real index is (:func:`storage.tokens.index_text`) but not
stemmed, and BM25 is a plain sum of idf × weighted term frequency: ranks follow the same rules
(rarer and more frequent terms score higher, column weights count), scores are not SQLite's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from storage.model import ParsedFile, SymbolDef
from storage.query import (
    EVERYTHING,
    ChunkKey,
    ChunkPlace,
    ChunkRecord,
    ChunkRow,
    ChunkWords,
    DefinitionSpan,
    FileContent,
    FileRow,
    FtsTable,
    IndexQueries,
    IndexSignature,
    KindedDefinition,
    NameMatch,
    NameScore,
    RefCount,
    RefRow,
    Scope,
    ScoredChunk,
    SymbolRow,
    Vector,
)
from storage.tokens import index_text

__all__ = ["FakeIndex"]

_TOKEN = re.compile(r"[0-9a-z_]+")


def _ascii_lower(text: str) -> str:
    """Lower-cased as SQLite's LIKE compares: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(text.lower()))


@dataclass(slots=True)
class _File:
    id: int
    path: str
    language: str | None
    hash: str
    size: int
    lines: int
    indexed_at: float
    mtime_ns: int = 0


@dataclass(slots=True)
class _Chunk:
    id: int
    file: _File
    start_line: int
    end_line: int
    symbol: str | None
    signature: str | None
    text: str
    hash: str
    columns: tuple[tuple[str, ...], ...]  # path, symbol, text tokens
    fts_symbol: str
    fts_text: str


@dataclass(slots=True)
class _Symbol:
    id: int
    file: _File
    definition: SymbolDef
    columns: tuple[tuple[str, ...], ...]


@dataclass(slots=True)
class _Ref:
    file: _File
    name: str
    line: int
    col: int
    end_col: int


# -- the full-text query language of storage.tokens: "phrases", OR, AND, parentheses ------------


@dataclass(frozen=True, slots=True)
class _Phrase:
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Op:
    op: str
    items: tuple[_Phrase | _Op, ...] = field(default_factory=tuple)


_LEX = re.compile(r'\s*(?:(\()|(\))|"((?:[^"]|"")*)"|(AND|OR)\b|([^\s()"]+))')


class _Unparsable(ValueError):
    """A query FTS5 would refuse: it matches nothing."""


def _parse(match: str) -> _Phrase | _Op:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = match.strip()
    while pos < len(text):
        m = _LEX.match(text, pos)
        if m is None or m.end() == pos:
            raise _Unparsable(match)
        pos = m.end()
        if m.group(1):
            tokens.append(("(", ""))
        elif m.group(2):
            tokens.append((")", ""))
        elif m.group(3) is not None:
            tokens.append(("phrase", m.group(3).replace('""', '"')))
        elif m.group(4):
            tokens.append(("op", m.group(4)))
        elif m.group(5):
            tokens.append(("phrase", m.group(5)))
    at = 0

    def expr() -> _Phrase | _Op:
        nonlocal at
        items = [term()]
        op = None
        while at < len(tokens) and tokens[at][0] == "op":
            this = tokens[at][1]
            if op is not None and this != op:
                raise _Unparsable(match)  # mixed AND / OR without parentheses: not built by nav
            op = this
            at += 1
            items.append(term())
        return items[0] if op is None else _Op(op, tuple(items))

    def term() -> _Phrase | _Op:
        nonlocal at
        if at >= len(tokens):
            raise _Unparsable(match)
        kind, value = tokens[at]
        at += 1
        if kind == "(":
            inner = expr()
            if at >= len(tokens) or tokens[at][0] != ")":
                raise _Unparsable(match)
            at += 1
            return inner
        if kind != "phrase":
            raise _Unparsable(match)
        return _Phrase(_tokens(value))

    tree = expr()
    if at != len(tokens):
        raise _Unparsable(match)
    return tree


def _tf(words: tuple[str, ...], column: tuple[str, ...]) -> int:
    n = len(words)
    if not n:
        return 0
    return sum(1 for i in range(len(column) - n + 1) if column[i : i + n] == words)


class FakeIndex:
    """One checkout's index in memory (see the module's doc). Not thread-safe."""

    def __init__(self) -> None:
        self._files: dict[str, _File] = {}
        self._chunks: dict[int, _Chunk] = {}
        self._symbols: dict[int, _Symbol] = {}
        self._refs: list[_Ref] = []
        self._vectors: dict[tuple[str, str], Vector] = {}
        self._next = 0
        self._clock = 0.0

    def _id(self) -> int:
        self._next += 1
        return self._next

    # -- writes (what the indexer stores) ------------------------------------------------------

    def replace_file(
        self, parsed: ParsedFile, *, content_hash: str, size: int, mtime_ns: int = 0, lines: int
    ) -> None:
        """Replace every row of one file, as :meth:`storage.db.Store.replace_file` does."""
        old = self._files.get(parsed.path)
        self._clock += 1.0
        f = _File(
            old.id if old else self._id(),
            parsed.path,
            parsed.language or None,
            content_hash,
            size,
            lines,
            self._clock,
        )
        f.mtime_ns = mtime_ns
        self._drop(parsed.path)
        self._files[f.path] = f
        path_tokens = index_text(f.path.replace("/", " ").replace(".", " "))
        for ch in parsed.chunks:
            sym = index_text((ch.symbol or "").replace(".", " "))
            text = index_text(ch.text)
            cid = self._id()
            self._chunks[cid] = _Chunk(
                cid, f, ch.start_line, ch.end_line, ch.symbol, ch.signature, ch.text, ch.content_hash,
                (_tokens(path_tokens), _tokens(sym), _tokens(text)), sym, text,
            )  # fmt: skip
        for s in parsed.symbols:
            sid = self._id()
            tokens = _tokens(index_text(s.qualified_name.replace(".", " ")))
            definition = SymbolDef(
                s.name, s.qualified_name, s.kind, f.path, f.language or "", s.span, s.name_span, s.signature,
                s.container, s.docstring,
            )  # fmt: skip
            self._symbols[sid] = _Symbol(sid, f, definition, (tokens,))
        self._refs.extend(_Ref(f, r.name, r.line, r.col, r.end_col) for r in parsed.refs)

    def delete_files(self, paths: Sequence[str]) -> int:
        n = 0
        for p in paths:
            if p in self._files:
                self._drop(p)
                del self._files[p]
                n += 1
        return n

    def _drop(self, path: str) -> None:
        self._chunks = {i: c for i, c in self._chunks.items() if c.file.path != path}
        self._symbols = {i: s for i, s in self._symbols.items() if s.file.path != path}
        self._refs = [r for r in self._refs if r.file.path != path]

    # -- full text -------------------------------------------------------------------------

    def _fts(self, table: FtsTable) -> list[tuple[int, tuple[tuple[str, ...], ...]]]:
        if table == "chunks":
            return [(c.id, c.columns) for c in self._chunks.values()]
        return [(s.id, s.columns) for s in self._symbols.values()]

    def _search(
        self, match: str, table: FtsTable, weights: Sequence[float] | None = None
    ) -> list[tuple[int, float]]:
        """(row id, score) of the rows matching ``match``, best first (ties by id)."""
        try:
            tree = _parse(match)
        except _Unparsable:
            return []
        rows = self._fts(table)
        n = max(1, len(rows))
        df: dict[tuple[str, ...], int] = {}

        def phrases(node: _Phrase | _Op) -> list[_Phrase]:
            return [node] if isinstance(node, _Phrase) else [p for i in node.items for p in phrases(i)]

        for ph in phrases(tree):
            if ph.words not in df:
                df[ph.words] = sum(1 for _, cols in rows if any(_tf(ph.words, c) for c in cols))

        def score(node: _Phrase | _Op, cols: tuple[tuple[str, ...], ...]) -> float | None:
            if isinstance(node, _Phrase):
                w = weights or (1.0,) * len(cols)
                tf = sum(wt * _tf(node.words, c) for wt, c in zip(w, cols, strict=False))
                if not tf:
                    return None
                d = df[node.words]
                return math.log(1 + (n - d + 0.5) / (d + 0.5)) * tf / (tf + 1.2)
            parts = [score(i, cols) for i in node.items]
            got = [p for p in parts if p is not None]
            if node.op == "AND" and len(got) < len(parts):
                return None
            return sum(got) if got else None

        out = []
        for rid, cols in rows:
            s = score(tree, cols)
            if s is not None:
                out.append((rid, s))
        out.sort(key=lambda kv: (-kv[1], kv[0]))
        return out

    def doc_freqs(self, words: Sequence[str], *, cap: int) -> dict[str, int]:
        return self.table_doc_freqs(words, cap=cap, table="chunks")

    def table_doc_freqs(self, words: Sequence[str], *, cap: int, table: FtsTable) -> dict[str, int]:
        if table not in ("chunks", "symbols"):
            raise ValueError(f"table must be one of ['chunks', 'symbols'], got {table!r}")
        out: dict[str, int] = {}
        for w in words:
            if w in out or not w:
                continue
            phrase = _tokens(w)
            hits = sum(1 for _, cols in self._fts(table) if phrase and any(_tf(phrase, c) for c in cols))
            out[w] = min(hits, cap + 1)
        return out

    def vocab_doc_freqs(self, words: Sequence[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        for w in dict.fromkeys(words):
            n = sum(1 for c in self._chunks.values() if any(w in col for col in c.columns))
            if n:
                out[w] = n
        return out

    def chunk_count(self) -> int:
        return len(self._chunks)

    def chunk_id_high(self) -> int:
        return max(self._chunks, default=0)

    def symbol_count(self) -> int:
        return len(self._symbols)

    def bm25_chunks(
        self, match: str, *, weights: tuple[float, float, float], scope: Scope, limit: int
    ) -> list[ScoredChunk]:
        if not match:
            return []
        out = []
        for cid, s in self._search(match, "chunks", weights):
            c = self._chunks[cid]
            if scope.holds(c.file.path, c.file.language):
                out.append(ScoredChunk(cid, s))
        return out[:limit]

    def chunk_words(self, ids: Sequence[int]) -> list[ChunkWords]:
        return [
            ChunkWords(self._chunks[i].fts_symbol, self._chunks[i].fts_text)
            for i in sorted(set(ids))
            if i in self._chunks
        ]

    # -- symbols ---------------------------------------------------------------------------

    def _chunk_of(self, s: _Symbol) -> int | None:
        line = s.definition.name_span.start_line
        spans = [
            (c.end_line - c.start_line, c.id)
            for c in self._chunks.values()
            if c.file is s.file and c.start_line <= line <= c.end_line
        ]
        return min(spans)[1] if spans else None

    def symbols_named(self, names: Sequence[str], *, scope: Scope, limit: int) -> list[NameMatch]:
        wanted = set(names)
        out = [
            NameMatch(self._chunk_of(s), s.definition.name, s.definition.qualified_name, s.file.path)
            for s in self._symbols.values()
            if s.definition.name in wanted and scope.holds(s.file.path, s.file.language)
        ]
        return out[:limit]

    def symbol_bm25_chunks(
        self,
        match: str,
        *,
        scope: Scope,
        skip_kinds: Sequence[str],
        limit: int,
        rank_first: bool = False,
    ) -> list[NameScore]:
        if not match:
            return []
        ranked = self._search(match, "symbols")
        if rank_first and scope.everything:
            ranked = ranked[:limit]
        out = []
        for sid, score in ranked:
            s = self._symbols[sid]
            if s.definition.kind in skip_kinds or not scope.holds(s.file.path, s.file.language):
                continue
            out.append(NameScore(self._chunk_of(s), score))
        return out[:limit]

    def _by_place(self) -> list[_Symbol]:
        return sorted(self._symbols.values(), key=lambda s: (s.file.path, s.definition.span.start_line, s.id))

    def symbols(
        self,
        *,
        kinds: Sequence[str] | None = None,
        exclude_kinds: Sequence[str] = (),
        language: str | None = None,
        limit: int,
    ) -> list[SymbolRow]:
        out = [
            SymbolRow(s.id, s.definition)
            for s in self._by_place()
            if (kinds is None or s.definition.kind in kinds)
            and s.definition.kind not in exclude_kinds
            and (language is None or s.file.language == language)
        ]
        return out[:limit] if limit >= 0 else out

    def symbols_by_name(self, name: str) -> list[SymbolRow]:
        return [SymbolRow(s.id, s.definition) for s in self._by_place() if s.definition.name == name][:1000]

    def symbols_by_qualified_suffix(self, dotted: str) -> list[SymbolRow]:
        last = dotted.rsplit(".", 1)[-1]
        return [
            SymbolRow(s.id, d)
            for s in self._by_place()
            if (d := s.definition).name == last
            and (d.qualified_name == dotted or d.qualified_name.endswith("." + dotted))
        ][:1000]

    def symbols_in_file(self, path: str) -> list[SymbolRow]:
        return [SymbolRow(s.id, s.definition) for s in self._by_place() if s.file.path == path]

    def symbols_like(self, pattern: str, *, limit: int = 2000) -> list[SymbolRow]:
        low = _ascii_lower(pattern)
        return [
            SymbolRow(s.id, s.definition)
            for s in self._by_place()
            if low in _ascii_lower(s.definition.qualified_name)
        ][:limit]

    def symbols_fts(self, match: str, *, limit: int = 200) -> list[SymbolRow]:
        if not match:
            return []
        return [SymbolRow(sid, self._symbols[sid].definition) for sid, _ in self._search(match, "symbols")][
            :limit
        ]

    def symbol_names(self) -> list[str]:
        return list(dict.fromkeys(s.definition.name for s in self._symbols.values()))

    def definitions_in(
        self, path: str, *, kinds: Sequence[str], start_line: int, end_line: int
    ) -> list[DefinitionSpan]:
        return [
            DefinitionSpan(d.qualified_name, d.span.start_line, d.span.end_line, d.signature)
            for s in self._by_place()
            if (d := s.definition).path == path
            and d.kind in kinds
            and d.span.end_line >= start_line
            and d.span.start_line <= end_line
        ]

    def definitions_of(
        self, paths: Sequence[str], *, kinds: Sequence[str]
    ) -> dict[str, list[KindedDefinition]]:
        wanted = set(paths)
        out: dict[str, list[KindedDefinition]] = {}
        for sym in self._by_place():
            d = sym.definition
            if d.path in wanted and d.kind in kinds:
                out.setdefault(d.path, []).append(
                    KindedDefinition(
                        d.qualified_name, d.span.start_line, d.span.end_line, d.signature, d.kind
                    )
                )
        return out

    # -- references ------------------------------------------------------------------------

    def refs_by_name(self, name: str, *, limit: int = 100_000) -> list[RefRow]:
        refs = sorted((r for r in self._refs if r.name == name), key=lambda r: (r.file.path, r.line, r.col))
        return [RefRow(r.file.path, r.name, r.line, r.col, r.end_col) for r in refs][:limit]

    def names_used_in(self, path: str, start_line: int, end_line: int) -> set[str]:
        return {r.name for r in self._refs if r.file.path == path and start_line <= r.line <= end_line}

    def ref_counts(self, names: Sequence[str]) -> dict[str, int]:
        wanted = set(names)
        out: dict[str, int] = {}
        for r in self._refs:
            if r.name in wanted:
                out[r.name] = out.get(r.name, 0) + 1
        return out

    def chunks_using(self, names: Sequence[str], *, scope: Scope, limit: int) -> list[int]:
        wanted = set(names)
        uses: dict[int, int] = {}
        for r in self._refs:
            if r.name not in wanted or not scope.holds(r.file.path, r.file.language):
                continue
            for c in self._chunks.values():
                if c.file is r.file and c.start_line <= r.line <= c.end_line:
                    uses[c.id] = uses.get(c.id, 0) + 1
        return sorted(uses, key=lambda i: (-uses[i], i))[:limit]

    def ref_counts_by_file(self) -> list[RefCount]:
        counts: dict[tuple[str, str], int] = {}
        for r in self._refs:
            counts[(r.file.path, r.name)] = counts.get((r.file.path, r.name), 0) + 1
        return [RefCount(p, n, c) for (p, n), c in counts.items()]

    # -- files and chunks ------------------------------------------------------------------

    def has_files(self) -> bool:
        return bool(self._files)

    def files_signature(self) -> tuple[int, float]:
        return (len(self._files), max((f.indexed_at for f in self._files.values()), default=0.0))

    def index_signature(self) -> IndexSignature:
        ids = list(self._chunks)
        return IndexSignature(
            chunks=len(ids),
            max_chunk_id=max(ids) if ids else None,
            chunk_id_total=float(sum(ids)),
            files=len(self._files),
            last_indexed_at=max((f.indexed_at for f in self._files.values()), default=None),
        )

    def file_paths(self, scope: Scope = EVERYTHING) -> list[str]:
        return [f.path for f in self._files.values() if scope.holds(f.path, f.language)]

    def chunk_ids(self, scope: Scope) -> list[int]:
        return [c.id for c in self._chunks.values() if scope.holds(c.file.path, c.file.language)]

    def chunk_places(self, ids: Sequence[int]) -> dict[int, ChunkPlace]:
        out = {}
        for i in ids:
            c = self._chunks.get(i)
            if c is not None:
                out[i] = ChunkPlace(i, c.file.path, c.symbol, c.start_line)
        return out

    def chunks_by_ids(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        out = {}
        for i in ids:
            c = self._chunks.get(i)
            if c is not None:
                out[i] = ChunkRow(
                    i,
                    c.file.path,
                    c.file.language,
                    c.start_line,
                    c.end_line,
                    c.symbol,
                    c.signature,
                    c.text,
                    c.hash,
                )
        return out

    def file_row(self, path: str) -> FileRow | None:
        f = self._files.get(path)
        return None if f is None else FileRow(f.path, f.language, f.hash, f.size, f.mtime_ns)

    def first_chunks(self, paths: Sequence[str]) -> dict[str, int]:
        out = {}
        for p in paths:
            mine = [(c.start_line, c.id) for c in self._chunks.values() if c.file.path == p]
            if mine:
                out[p] = min(mine)[1]
        return out

    def file_chunk_texts(self, paths: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        wanted = set(paths)
        out: dict[str, list[tuple[int, str]]] = {}
        for c in sorted(self._chunks.values(), key=lambda c: (c.file.path, c.start_line, c.id)):
            if c.file.path in wanted:
                out.setdefault(c.file.path, []).append((c.start_line, c.text))
        return out

    def chunk_keys(self) -> list[ChunkKey]:
        return [ChunkKey(c.id, c.hash, c.file.path, c.symbol, c.signature) for c in self._chunks.values()]

    def file_contents(self) -> list[FileContent]:
        by_file: dict[str, list[_Chunk]] = {}
        for c in self._chunks.values():
            by_file.setdefault(c.file.path, []).append(c)
        symbols: dict[str, list[SymbolDef]] = {}
        for s in self._by_place():
            symbols.setdefault(s.file.path, []).append(s.definition)
        return [
            FileContent(
                path=f.path, language=f.language, hash=f.hash, size=f.size, lines=f.lines,
                chunks=tuple(
                    ChunkRecord(c.start_line, c.end_line, c.symbol, c.signature, c.text, c.hash)
                    for c in sorted(by_file.get(f.path, ()), key=lambda c: (c.start_line, c.id))
                ),
                symbols=tuple(symbols.get(f.path, ())),
            )
            for f in sorted(self._files.values(), key=lambda f: f.path)
        ]  # fmt: skip

    # -- vectors ---------------------------------------------------------------------------

    def vector_dim(self, model: str) -> int | None:
        return next((int(v.shape[-1]) for (m, _), v in self._vectors.items() if m == model), None)

    def vector_keys(self, model: str, keys: Sequence[str]) -> set[str]:
        return {k for k in keys if (model, k) in self._vectors}

    def fetch_vectors(self, model: str, keys: Sequence[str]) -> dict[str, Vector]:
        return {k: self._vectors[(model, k)] for k in dict.fromkeys(keys) if (model, k) in self._vectors}

    def push_vectors(self, model: str, vectors: Mapping[str, Vector]) -> int:
        for k, v in vectors.items():
            self._vectors[(model, k)] = np.ascontiguousarray(v, dtype=np.float32).copy()
        return len(vectors)


if TYPE_CHECKING:  # the fake answers the whole query seam, as the index does

    def _conforms(fake: FakeIndex) -> IndexQueries:
        return fake
