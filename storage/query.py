"""What the layers above storage ask the index: the query-level seam, with no SQL crossing it.

Three small ``Protocol`` classes, named by what they answer:

- :class:`VectorCache`: embedding vectors cached by (model id, embedding key). The SQLite index
  (:class:`storage.db.Store`), the PostgreSQL team store (:class:`storage.pg.PgStore`) and the fake
  (:class:`storage.fake.FakeIndex`) implement it.
- :class:`TextStats`: document frequencies of words and the number of chunks, what the
  feedback leg and the long-query rules weigh words by. All three implement it.
- :class:`IndexQueries`: everything the local search pipeline and the engine read from one
  checkout's index: BM25 candidates over chunks and symbol names, symbol matches (by name, by
  kind, by file), path candidates, chunk metadata, reference counts. The SQLite index and the
  fake implement it; the team store answers by content keys across repositories, not by one
  index's chunk ids, so it implements only the two above.

Arguments are typed values (:class:`Scope`, names, kinds, ids); answers are the frozen value
types below or those of :mod:`storage.model`. A full-text query (``match``) is the expression
:mod:`storage.tokens` builds: quoted terms and phrases joined by ``OR`` / ``AND``, in parentheses.
Errors come out classified (:mod:`storage.errors`): a locked index is
:class:`~storage.errors.IndexBusyError`, a missing table :class:`~storage.errors.IndexSchemaError`,
damage :class:`~storage.errors.IndexDamagedError`; a full-text query the index cannot parse
matches nothing (an empty answer), as a search engine treats a query with no usable term.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from storage.model import SymbolDef

__all__ = [
    "EVERYTHING",
    "ChunkKey",
    "ChunkPlace",
    "ChunkRecord",
    "ChunkRow",
    "FileRow",
    "RefRow",
    "ChunkWords",
    "DefinitionSpan",
    "KindedDefinition",
    "FileContent",
    "FtsTable",
    "IndexQueries",
    "IndexSignature",
    "NameMatch",
    "RefCount",
    "NameScore",
    "Scope",
    "ScoredChunk",
    "SymbolRow",
    "TextStats",
    "Vector",
    "VectorCache",
]

Vector = npt.NDArray[np.float32]
FtsTable = Literal["chunks", "symbols"]
"""Which full-text table a word is counted in: chunk text (with path and symbol) or symbol names."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Which files a query reads: any of ``paths`` (a folder or file prefix, or a glob with
    ``*``, ``?`` or ``[``, matched against the whole path) and any of ``languages``; an empty
    tuple does not filter."""

    paths: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()

    @classmethod
    def of(cls, paths: Sequence[str] | None = None, languages: Sequence[str] | None = None) -> Scope:
        return cls(tuple(paths or ()), tuple(languages or ()))

    @property
    def everything(self) -> bool:
        return not self.paths and not self.languages

    def holds(self, path: str, language: str | None) -> bool:
        """Whether a file is in scope (pure; what the SQLite store's conditions say)."""
        from fnmatch import fnmatchcase

        if self.languages and language not in self.languages:
            return False
        if not self.paths:
            return True
        for p in self.paths:
            if any(ch in p for ch in "*?["):
                if fnmatchcase(path, p):
                    return True
            else:
                p = p.strip("/")
                if path == p or path.startswith(p + "/"):
                    return True
        return False


EVERYTHING = Scope()


class ScoredChunk(NamedTuple):
    """A chunk id with its score (higher is better)."""

    chunk_id: int
    score: float


class NameMatch(NamedTuple):
    """A symbol whose name was asked, with the chunk holding its name (None: no chunk does)."""

    chunk_id: int | None
    name: str
    qualified_name: str
    path: str


class NameScore(NamedTuple):
    """A symbol found by BM25 over names: its chunk (None: no chunk holds it) and its score."""

    chunk_id: int | None
    score: float


class ChunkPlace(NamedTuple):
    """Where a chunk is: what fusion's heuristics read."""

    id: int
    path: str
    symbol: str | None
    start_line: int


class ChunkKey(NamedTuple):
    """What a chunk's embedding key is made of."""

    id: int
    hash: str
    path: str
    symbol: str | None
    signature: str | None


class ChunkWords(NamedTuple):
    """A chunk's symbol and text as the full-text index holds them (identifiers whole and split)."""

    symbol: str | None
    text: str


class DefinitionSpan(NamedTuple):
    """A definition's lines in a file (the code view splits chunks by them)."""

    qualified_name: str
    start_line: int
    end_line: int
    signature: str | None


class KindedDefinition(NamedTuple):
    """A definition's lines in a file, with its kind (:meth:`IndexQueries.definitions_of`)."""

    qualified_name: str
    start_line: int
    end_line: int
    signature: str | None
    kind: str


class RefCount(NamedTuple):
    """How often a file uses a name (syntax references)."""

    path: str
    name: str
    uses: int


class IndexSignature(NamedTuple):
    """A cheap fingerprint of the index: any index run that changes a file changes it."""

    chunks: int
    max_chunk_id: int | None
    chunk_id_total: float
    files: int
    last_indexed_at: float | None


@dataclass(frozen=True, slots=True)
class SymbolRow:
    """A symbol as stored, with its database id (the API converts it to its own type)."""

    id: int
    definition: SymbolDef


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    language: str | None
    hash: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class RefRow:
    path: str
    name: str
    line: int
    col: int
    end_col: int


@dataclass(frozen=True, slots=True)
class ChunkRow:
    id: int
    path: str
    language: str | None
    start_line: int
    end_line: int
    symbol: str | None
    signature: str | None
    text: str
    hash: str


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """A chunk of a file as stored (what publishing copies)."""

    start_line: int
    end_line: int
    symbol: str | None
    signature: str | None
    text: str
    hash: str


@dataclass(frozen=True, slots=True)
class FileContent:
    """One indexed file with its chunks (by line) and its definitions (by line)."""

    path: str
    language: str | None
    hash: str
    size: int
    lines: int
    chunks: tuple[ChunkRecord, ...]
    symbols: tuple[SymbolDef, ...]


class VectorCache(Protocol):
    """Embedding vectors by (model id, embedding key)."""

    def vector_keys(self, model: str, keys: Sequence[str]) -> set[str]:
        """Which of ``keys`` have a vector for ``model``."""
        ...

    def fetch_vectors(self, model: str, keys: Sequence[str]) -> dict[str, Vector]:
        """The vectors of those of ``keys`` that have one for ``model``."""
        ...

    def push_vectors(self, model: str, vectors: Mapping[str, Vector]) -> int:
        """Store vectors (a key names its content: a stored key keeps an equal vector); returns
        how many rows were written."""
        ...


class TextStats(Protocol):
    """What a word weighs: in how many chunks it is, among how many."""

    def doc_freqs(self, words: Sequence[str], *, cap: int) -> dict[str, int]:
        """How many chunks hold each word (full text, as the index tokenizes it), counted up to
        ``cap + 1``: a word in more chunks reads ``cap + 1``; a word the index leaves nothing of
        reads 0."""
        ...

    def chunk_count(self) -> int:
        """Chunks in the index."""
        ...


class HistoryCommit(NamedTuple):
    """A past commit as the history leg reads it: its message and the files it changed (paths
    relative to the root)."""

    sha: str
    message: str
    paths: tuple[str, ...]


@runtime_checkable
class HistoryQueries(Protocol):
    """The repository's past commits as an index holds them (:mod:`navigator.history`): the local
    index only (the team store has none)."""

    def history_commits(
        self, match: str, *, limit: int, max_files: int, scope: Scope
    ) -> list[tuple[float, list[str]]]:
        """The ``limit`` past commits whose messages best match the FTS5 ``match`` (BM25), best
        first, each as (its positive score, the indexed files in ``scope`` it changed); a commit
        that changed more than ``max_files`` files is left out. Empty with no history indexed."""
        ...


class IndexQueries(VectorCache, TextStats, Protocol):
    """Everything the search pipeline and the engine read from one checkout's index."""

    # -- full text -------------------------------------------------------------------------

    def table_doc_freqs(self, words: Sequence[str], *, cap: int, table: FtsTable) -> dict[str, int]:
        """:meth:`doc_freqs` over chunks or over symbol names."""
        ...

    def vocab_doc_freqs(self, words: Sequence[str]) -> dict[str, int]:
        """Chunks holding each word as stored, unstemmed (the vocabulary's count); absent words
        are left out."""
        ...

    def chunk_id_high(self) -> int:
        """The largest chunk id in the full-text table (0: none)."""
        ...

    def symbol_count(self) -> int:
        """Symbols (definitions) in the index."""
        ...

    def bm25_chunks(
        self, match: str, *, weights: tuple[float, float, float], scope: Scope, limit: int
    ) -> list[ScoredChunk]:
        """Chunks matching ``match`` by BM25 over (path, symbol, text) with those column
        weights, best first, scores positive."""
        ...

    def chunk_words(self, ids: Sequence[int]) -> list[ChunkWords]:
        """The full-text symbol and text of the chunks ``ids`` (those that exist)."""
        ...

    # -- symbols ---------------------------------------------------------------------------

    def symbols_named(self, names: Sequence[str], *, scope: Scope, limit: int) -> list[NameMatch]:
        """Symbols whose (unqualified) name is one of ``names``, each with the smallest chunk
        holding its name's line."""
        ...

    def symbol_bm25_chunks(
        self,
        match: str,
        *,
        scope: Scope,
        skip_kinds: Sequence[str],
        limit: int,
        rank_first: bool = False,
    ) -> list[NameScore]:
        """Symbols whose split qualified names match ``match`` by BM25, best first, none of
        ``skip_kinds``, each with the smallest chunk holding its name's line. ``rank_first``
        (only for the whole index): take the ``limit`` best names first, then drop the skipped
        kinds (a long query matches thousands of names; fewer than ``limit`` may remain)."""
        ...

    def symbols(
        self,
        *,
        kinds: Sequence[str] | None = None,
        exclude_kinds: Sequence[str] = (),
        language: str | None = None,
        limit: int,
    ) -> list[SymbolRow]:
        """Symbols by path and line, of ``kinds`` (None: any) and none of ``exclude_kinds``,
        in files of ``language`` (None: any)."""
        ...

    def symbols_by_name(self, name: str) -> list[SymbolRow]:
        """Symbols named ``name`` (unqualified), by path and line (at most 1,000)."""
        ...

    def symbols_by_qualified_suffix(self, dotted: str) -> list[SymbolRow]:
        """Symbols whose qualified name is ``dotted`` or ends with ``.dotted``, by path and line."""
        ...

    def symbols_in_file(self, path: str) -> list[SymbolRow]:
        """The symbols of one file, by line."""
        ...

    def symbols_like(self, pattern: str, *, limit: int = 2000) -> list[SymbolRow]:
        """Symbols whose qualified name holds ``pattern`` (ASCII letters in any case), by path
        and line."""
        ...

    def symbols_fts(self, match: str, *, limit: int = 200) -> list[SymbolRow]:
        """Symbols whose split qualified names match ``match``, best BM25 first."""
        ...

    def symbol_names(self) -> list[str]:
        """Every distinct (unqualified) symbol name."""
        ...

    def definitions_in(
        self, path: str, *, kinds: Sequence[str], start_line: int, end_line: int
    ) -> list[DefinitionSpan]:
        """Definitions of ``kinds`` in ``path`` overlapping the lines ``start_line..end_line``,
        by start line."""
        ...

    # -- references ------------------------------------------------------------------------

    def definitions_of(
        self, paths: Sequence[str], *, kinds: Sequence[str]
    ) -> dict[str, list[KindedDefinition]]:
        """The definitions of ``kinds`` in each of ``paths``, every line, by start line, with their
        kind (one read for many files); a path with none is left out."""
        ...

    def refs_by_name(self, name: str, *, limit: int = 100_000) -> list[RefRow]:
        """The syntax references to ``name``, by path, line and column."""
        ...

    def names_used_in(self, path: str, start_line: int, end_line: int) -> set[str]:
        """The distinct names referenced on lines ``start_line``..``end_line`` of ``path`` (what a
        definition there calls or reads)."""
        ...

    def ref_counts(self, names: Sequence[str]) -> dict[str, int]:
        """How many syntax references each of ``names`` has (names with none are left out)."""
        ...

    def chunks_using(self, names: Sequence[str], *, scope: Scope, limit: int) -> list[int]:
        """Chunks holding references to ``names``, most references first."""
        ...

    def ref_counts_by_file(self) -> list[RefCount]:
        """Per file and name: how many references."""
        ...

    # -- files and chunks ------------------------------------------------------------------

    def has_files(self) -> bool:
        """Whether any file is indexed."""
        ...

    def files_signature(self) -> tuple[int, float]:
        """(files, the last time one was indexed, 0 for none): changes when a file does."""
        ...

    def index_signature(self) -> IndexSignature: ...

    def file_paths(self, scope: Scope = EVERYTHING) -> list[str]:
        """Paths of the indexed files in ``scope``."""
        ...

    def chunk_ids(self, scope: Scope) -> list[int]:
        """Ids of the chunks of the files in ``scope``."""
        ...

    def chunk_places(self, ids: Sequence[int]) -> dict[int, ChunkPlace]:
        """Where each of the chunks ``ids`` is (those that exist)."""
        ...

    def chunks_by_ids(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """The chunks ``ids`` (those that exist), with their text."""
        ...

    def file_row(self, path: str) -> FileRow | None:
        """One indexed file's row (None: not indexed)."""
        ...

    def first_chunks(self, paths: Sequence[str]) -> dict[str, int]:
        """Each path's first chunk (by line), for the paths that have one."""
        ...

    def file_chunk_texts(self, paths: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
        """The chunks of each of ``paths`` as (start line, text), by start line (the file's indexed
        lines); a path the index does not hold is left out."""
        ...

    def chunk_keys(self) -> list[ChunkKey]:
        """What every chunk's embedding key is made of."""
        ...

    def file_contents(self) -> list[FileContent]:
        """Every indexed file by path, with its chunks and definitions."""
        ...

    # -- vectors ---------------------------------------------------------------------------

    def vector_dim(self, model: str) -> int | None:
        """The dimension of the vectors cached for ``model`` (None: none is)."""
        ...
