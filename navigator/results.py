"""The API's result types: frozen, typed, and serializable to compact JSON.

Every front end returns these: the Python API directly, the CLI's ``--json`` as
``to_json(result)``, the editor server inside JSON-RPC responses. Positions are
1-based lines and columns (code points); paths are relative to the root.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

Provenance = Literal["lsp", "symbols", "bm25", "vector", "syntax", "path", "possible"]
"""``possible``: the same name in code where a language server answered but did not
resolve it (an untyped receiver): listed after the precise hits, and the answer is then
not complete."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition known to the index."""

    name: str
    qualified_name: str
    kind: str
    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    signature: str
    language: str
    container: str | None = None
    docstring: str | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    """One place in the code: a definition, a reference, a caller, an implementation."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    """The source line at ``line``, stripped."""
    symbol: str | None = None
    """Qualified name of the innermost symbol enclosing the hit (None at module level)."""
    is_definition: bool = False
    provenance: tuple[str, ...] = ()
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result of semantic/lexical search: a chunk of code."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    signature: str | None
    snippet: str
    score: float
    language: str | None = None
    ranks: dict[str, int] = field(default_factory=dict)
    """Which legs found it, at what 1-based rank (``{"bm25": 3, "vector": 1}``); ``file``: a
    definition the code view lists because its file ranks there in the files view (no leg found
    its own lines)."""
    snippet_line: int = 0
    """The file line the snippet's first line is (1-based): a hit spans a whole definition
    (``start_line``-``end_line``) but its snippet can start inside it — at the chunk that
    matched, after leading blank lines. 0: not known (an older daemon's answer)."""


@dataclass(frozen=True, slots=True)
class GrepHit:
    """One line of a ``grep`` answer: a match, or a context line around one (``-A/-B/-C``).

    With ``files_only`` the hits are files (``line`` 0); with ``count``, ``count`` is the number
    of matching lines in ``path`` (``line`` 0)."""

    path: str
    line: int
    col: int
    """1-based code point of the line's first match (0 on a context line)."""
    text: str
    """The whole line, without its line break (invalid UTF-8 shown as U+FFFD)."""
    symbol: str | None = None
    context: bool = False
    count: int | None = None


@dataclass(frozen=True, slots=True)
class Response(Generic[T]):
    """A bounded answer that says whether it is complete, and why not."""

    items: tuple[T, ...]
    complete: bool = True
    reason: str | None = None
    """Why the answer is incomplete: e.g. ``server still indexing``, ``deadline reached``,
    ``no server for go``, ``limit reached``. None when complete."""
    source: str | None = None
    """Which backend answered (``lsp:basedpyright``, ``syntax``, ``index`` ...)."""
    elapsed_ms: float = 0.0
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HoverInfo:
    """The language server's hover text for one position."""

    path: str
    line: int
    col: int
    symbol: str | None
    text: str
    provenance: tuple[str, ...] = ("lsp",)


@dataclass(frozen=True, slots=True)
class Source:
    """The source of one definition (:meth:`navigator.Navigator.show`), trimmed to a line budget."""

    path: str
    start_line: int
    end_line: int
    """The definition's whole span, 1-based and inclusive, whatever was cut from ``text``."""
    text: str
    """Its lines, with one marker line in place of those cut (see ``cut``)."""
    symbol: str | None = None
    """Qualified name (None for a window of module-level lines)."""
    kind: str | None = None
    signature: str | None = None
    cut: tuple[int, int] | None = None
    """The first and last line left out of ``text`` to fit ``max_lines``; None when whole."""


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    symbol: Symbol
    depth: int


@dataclass(frozen=True, slots=True)
class IndexReport:
    added: tuple[str, ...]
    updated: tuple[str, ...]
    removed: tuple[str, ...]
    unchanged: int
    skipped: tuple[tuple[str, str], ...]
    """(path, reason) for files the walk or the parser could not take."""
    files: int
    symbols: int
    chunks: int
    seconds: float
    notes: tuple[str, ...] = ()
    """What the run had to do besides indexing (e.g. rebuild a damaged index)."""
    history_added: int = 0
    """Past commits this run added to the git history (:mod:`navigator.history`)."""
    history_head: str | None = None
    """The commit the history is read to (None: none read)."""


@dataclass(frozen=True, slots=True)
class Status:
    root: str
    index_path: str
    indexed: bool
    files: int
    symbols: int
    chunks: int
    refs: int
    languages: dict[str, int]
    last_run_complete: bool
    last_indexed_at: float | None
    stale_files: int
    """Files whose size or mtime differ from the index (or that are new or deleted)."""
    notes: tuple[str, ...] = ()
    history_commits: int = 0
    """Past commits the index holds for the history leg (:mod:`navigator.history`)."""
    history_head: str | None = None
    """The commit the history was read to (None: no git history read)."""


@dataclass(frozen=True, slots=True)
class Found:
    """One answer of :meth:`Navigator.query`: a definition, a reference or a chunk of code."""

    path: str
    line: int
    col: int
    end_line: int
    kind: str
    """``definition``, ``reference``, ``code`` (a search chunk), or ``related`` (a search chunk
    listed after a complete exact answer)."""
    code: str
    """The line of code at ``line`` (a chunk's first line for ``code``)."""
    symbol: str | None
    score: float
    """Reciprocal-rank-fusion score: the sum of 1 / (60 + rank) over the legs that found it."""
    ranks: dict[str, int] = field(default_factory=dict)
    """Which legs found it, at what 1-based rank: ``lsp``, ``syntax``, ``symbols``, ``search``."""
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class MapEntry:
    symbol: Symbol
    score: float


@dataclass(frozen=True, slots=True)
class RepoMap:
    """The most important symbols, ranked by PageRank over references, fitted to a token budget."""

    text: str
    entries: tuple[MapEntry, ...]
    tokens: int
    """The budget asked for; ``text`` fits within it (about four characters a token)."""
    total_symbols: int
    elapsed_ms: float = 0.0


def to_data(obj: Any) -> Any:
    """Convert result objects (dataclasses, tuples, dicts) to plain JSON-able data."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_data(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_data(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): to_data(v) for k, v in obj.items()}
    return obj


def to_json(obj: Any, *, indent: int | None = None) -> str:
    return json.dumps(to_data(obj), indent=indent, ensure_ascii=False)
