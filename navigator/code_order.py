"""The code view's learned order (issue 18): which definitions to read first, out of more than
the fused chunks offer.

The fused code view ranks only the definitions its best chunks overlap; the one to change is
often another definition of a file the files view ranks high. So the candidates (the *pool*) are
the code view's first :data:`CODE_DEPTH` definitions plus every definition (and the module-level
lines, ``<module>``) of the files view's first :data:`POOL_FILES` files, both views from one set
of legs. Each candidate gets the signals of :data:`FEATURES` — its rank in either view, how much
and how rarely its own lines match the query (share, IDF, BM25), whether the query or a traceback
frame names it, its class or its path, quoted string literals it holds, the reference graph
(called by a definition the query names or a frame is in, how often it is used), its size, depth
and kind, and whether its file is no source of the project — and a linear model
(:data:`MODEL`, standardized signals, a weight each) orders them.

The model was trained on pairs mined from the history of public repositories none of the
benchmarks uses (``bench/within_file.py``, bench/README.md "Issue 18"); the same code computes
the signals for training, for the benchmark and here. Nothing here writes; every read is one of
:class:`storage.query.IndexQueries`.
"""

from __future__ import annotations

import functools
import json
import math
import operator
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from navigator.pipeline import snippet_at
from navigator.results import SearchHit
from semantic.analysis import QueryTerms
from storage.query import IndexQueries, KindedDefinition
from storage.tokens import split_words

__all__ = [
    "ABSENT",
    "CODE_DEPTH",
    "CODE_LANGUAGES",
    "FEATURES",
    "MODEL",
    "MODULE",
    "ORDER_KINDS",
    "POOL_FILES",
    "Candidate",
    "OrderModel",
    "candidates",
    "learned_code_view",
    "load_model",
    "non_source",
]

CODE_DEPTH = 50
"""How many of the fused code view's definitions join the pool (and how deep both views go)."""
POOL_FILES = 5
"""The files view's first files whose every definition joins the pool."""
ABSENT = 100.0
"""A rank the candidate does not have (not in that list)."""
ORDER_KINDS = ("function", "method", "class", "struct", "interface", "enum", "trait", "type")
"""The definitions a pool holds (a file's other lines are its ``<module>`` candidate)."""
MODULE = "<module>"

CODE_LANGUAGES = frozenset(
    {"python", "typescript", "tsx", "javascript", "go", "java", "ruby", "rust", "c", "cpp", "csharp",
     "kotlin", "scala", "swift", "php", "elixir", "lua", "haskell", "zig"}
)  # fmt: skip
"""The languages whose files can be a project's source (not markup, data, shell or prose)."""

FEATURES = (
    "code_rank",
    "code_in",
    "files_rank",
    "code_file_rank",
    "code_hits_in_file",
    "own_share",
    "own_idf",
    "own_bm25",
    "own_bm25_rank_in_file",
    "name_share",
    "named",
    "named_pos",
    "class_named",
    "frame_pos",
    "frame_file_pos",
    "path_named",
    "lines_log",
    "depth",
    "module",
    "private",
    "dunder",
    "nonsrc",
    "defs_in_file_log",
    "query_words_log",
    "long",
    "code_score_share",
    "files_score_share",
    "idents_in_body",
    "idents_in_body_share",
    "literal_quoted",
    "raises_named",
    "callee_of_named",
    "callee_of_frame",
    "fan_in_log",
)
"""The signals per candidate, in the model's order (``*_rank``/``*_pos``: 0-based, :data:`ABSENT`
when absent)."""

MODEL = Path(__file__).resolve().parent / "models" / "code_order.json"

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL = re.compile(r"""(?:'([^'\\\n]{12,})'|"([^"\\\n]{12,})")""")
_FORMAT = re.compile(r"%[-#0-9.]*[sdrfi]|\{[^}]*\}")
_RAISE = re.compile(r"\braise\s+([A-Za-z_][\w.]*)")
_AVG_LEN = 20.0
_QUOTED = 12
"""A string literal's part counts as quoted by the query from this many characters."""
_MAX_NAMED = 30
"""At most this many named definitions (and frames) are followed into the reference graph."""
_SPANS_PER_NAME = 20
_SNIPPET_READ = 40
"""Lines a snippet is cut from (it shows eight, after leading blank lines)."""

# -- which files are no source of the project ------------------------------------------------

_NON_SOURCE_DIR = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|docs?|doc_src|examples?|galleries|tutorials?|benchmarks?|asv_bench"
    r"|\.github|\.circleci|ci|scripts?|tools|extras?|release|changelog\.d|news)(/|$)",
    re.I,
)
_TEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_tests?|conftest|setup)$", re.I)
_OTHER_TESTS = re.compile(
    r"(^|/)([^/]*\.(test|spec)\.[cm]?[jt]sx?|[^/]*_test\.go|[^/]*_spec\.rb|[^/]*Tests?\.(java|kt|scala|cs))$"
)


def non_source(path: str, language: str | None) -> bool:
    """Whether a file is no source of the project (the ``nonsrc`` signal, as the model was
    trained): no code language (markup, data, shell, prose), or under tests, docs, examples,
    benchmarks, CI, scripts, tools or release notes, or a test module (``test_*``, ``*_test``,
    ``conftest``, ``setup``; ``*.test.ts``, ``*_test.go``, ``*_spec.rb``, ``*Test.java``)."""
    if (language or "") not in CODE_LANGUAGES:
        return True
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return bool(_NON_SOURCE_DIR.search(path) or _TEST_MODULE.search(stem) or _OTHER_TESTS.search(path))


# -- the model -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OrderModel:
    """A linear model over :data:`FEATURES`: rank signals become ``1 / (1 + rank)``, then each
    signal is standardized (``(x - mean) / scale``) and weighed; the score is a logit."""

    features: tuple[str, ...]
    rank_features: frozenset[str]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weight: tuple[float, ...]
    intercept: float
    source: str = "<model>"

    @classmethod
    def of(cls, data: Mapping[str, Any], *, source: str = "<model>") -> OrderModel:
        """The model of a model file's JSON (``format: nav-code-order``), checked."""
        if data.get("format") != "nav-code-order":
            raise ValueError(f"{source}: not a nav code-order model (format {data.get('format')!r})")
        try:
            names = tuple(str(n) for n in data["features"])
            unknown = sorted(set(names) - set(FEATURES))
            if unknown:
                raise ValueError(f"{source}: signals nav does not compute: {unknown}")
            mean, scale, weight = (
                tuple(float(data[key][n]) for n in names) for key in ("mean", "scale", "weight")
            )
            ranks = frozenset(str(n) for n in data.get("rank_features", ()))
            intercept = float(data["intercept"])
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"{source}: a model needs features, mean, scale, weight and intercept ({exc!r})"
            ) from exc
        if any(not s > 0 for s in scale):
            raise ValueError(f"{source}: a signal's scale is not positive")
        return cls(names, ranks, mean, scale, weight, intercept, source)

    def scores(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """:meth:`score` of many candidates at once."""
        if not rows:
            return []
        x = np.array([[r[n] for n in self.features] for r in rows], dtype=np.float64)
        ranks = [i for i, n in enumerate(self.features) if n in self.rank_features]
        x[:, ranks] = 1.0 / (1.0 + x[:, ranks])
        out = ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.weight) + self.intercept
        return [float(v) for v in out]

    def score(self, signals: Mapping[str, float]) -> float:
        total = self.intercept
        for name, mean, scale, weight in zip(self.features, self.mean, self.scale, self.weight, strict=True):
            x = signals[name]
            if name in self.rank_features:
                x = 1.0 / (1.0 + x)
            total += weight * (x - mean) / scale
        return total


@functools.lru_cache(maxsize=4)
def load_model(path: str | None = None) -> OrderModel:
    """The order's model: the shipped one (:data:`MODEL`) or a model file; read once per process."""
    where = Path(path) if path else MODEL
    try:
        data = json.loads(where.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"code-order model {str(where)[:200]}: cannot read it: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"code-order model {str(where)[:200]}: not a JSON object")
    return OrderModel.of(data, source=str(where))


# -- the pool and its signals ------------------------------------------------------------------


@dataclass(slots=True)
class Candidate:
    """One definition the order may list (``name``: its qualified name, or ``<module>``)."""

    path: str
    name: str
    start_line: int
    end_line: int
    signature: str | None
    language: str | None
    hit: SearchHit | None
    """The fused code view's hit for it (its first), when it is one."""
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    _lines: _FileLines | None = field(default=None, repr=False)
    _uncovered: list[int] | None = field(default=None, repr=False)
    _shown: tuple[str, int] | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        """``path::name``: how a benchmark's labels name a definition."""
        return f"{self.path}::{self.name}"

    def _show(self) -> tuple[str, int]:
        """Its snippet and the file line it starts at, cut when first asked (most of a pool is
        never listed): a definition's first lines, or the module level's first that are not
        blank, up to the next definition ("" when it holds none)."""
        if self._shown is None:
            lines = self._lines
            if lines is None:
                self._shown = ("", 0)
            elif self.name == MODULE:
                self._shown = lines.module_snippet(self._uncovered or [])
            else:
                s = self.start_line
                self._shown = snippet_at(
                    "\n".join(lines.text[s : min(self.end_line, s + _SNIPPET_READ) + 1]), s
                )
        return self._shown

    @property
    def snippet(self) -> str:
        return self._show()[0]

    @property
    def snippet_line(self) -> int:
        return self._show()[1]


@functools.lru_cache(maxsize=65_536)
def _line(line: str) -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """One line's tokens, lowercased identifier words, quoted literals and raised names (a pool
    reads the same lines for query after query)."""
    tokens = _WORD.findall(line)
    words = tuple(chain.from_iterable(map(split_words, tokens)))
    literals = tuple(a or b for a, b in _LITERAL.findall(line)) if ("'" in line or '"' in line) else ()
    raised = frozenset(r.rsplit(".", 1)[-1] for r in _RAISE.findall(line)) if "raise" in line else frozenset()
    return frozenset(tokens), words, literals, raised


@dataclass(frozen=True, slots=True)
class _Query:
    """What a pool's spans are matched against: the query's words, its identifier tokens, the
    literals it quotes and the error names it says."""

    words: tuple[str, ...]
    idents: tuple[str, ...]
    text: str
    raise_names: frozenset[str]
    word_set: frozenset[str] = frozenset()
    word_at: dict[str, int] = field(default_factory=dict)
    ident_set: frozenset[str] = frozenset()
    ident_at: dict[str, int] = field(default_factory=dict)
    windows: frozenset[str] = frozenset()
    """Every 12 characters of the text (a literal it quotes starts with one)."""

    @classmethod
    def of(cls, words: Sequence[str], idents: Iterable[str], text: str, raise_names: Iterable[str]) -> _Query:
        ws, ids = tuple(words), tuple(sorted(idents))
        return cls(
            ws, ids, text, frozenset(raise_names), frozenset(ws), {w: n for n, w in enumerate(ws)},
            frozenset(ids), {t: n for n, t in enumerate(ids)},
            frozenset(text[i : i + _QUOTED] for i in range(len(text) - _QUOTED + 1)),
        )  # fmt: skip

    def quotes(self, literals: Iterable[str]) -> bool:
        """Whether one of ``literals`` (split at format placeholders) is quoted by the query:
        a part of at least 12 characters found in its text (whose first 12 are one of the
        text's windows, looked up before the text is searched)."""
        for lit in literals:
            for part in _FORMAT.split(lit):
                part = part.strip()
                if len(part) >= _QUOTED and part[:_QUOTED] in self.windows and part in self.text:
                    return True
        return False


@dataclass(frozen=True, slots=True)
class _Spans:
    """:meth:`_FileLines.aggregate`'s sums, a row per span."""

    tf: npt.NDArray[np.int64]
    """(spans, query words): each word's count among the span's words."""
    length: npt.NDArray[np.int64]
    idents: npt.NDArray[np.int64]
    quoted: npt.NDArray[np.bool_]
    raising: npt.NDArray[np.bool_]


_T = TypeVar("_T")


def _pick(items: Sequence[_T], at: Sequence[int]) -> Sequence[_T]:
    """``items`` at the indexes ``at`` (one C call)."""
    if len(at) == 1:
        return (items[at[0]],)
    got: tuple[_T, ...] = operator.itemgetter(*at)(items)
    return got


class _FileLines:
    """One file's indexed lines (``text[n]`` is line ``n``; "" where the index holds none) and each
    line's parts (:func:`_line`), split when a candidate first reads them."""

    def __init__(self, chunks: Sequence[tuple[int, str]]) -> None:
        parts = [(start, chunk.splitlines()) for start, chunk in chunks]
        self.last = max((start + len(lines) - 1 for start, lines in parts), default=0)
        size = self.last + 2
        self.text = [""] * size
        for start, lines in reversed(parts):  # the first chunk holding a line gives it
            self.text[start : start + len(lines)] = lines
        self._tokens: list[frozenset[str]] = [frozenset()] * size
        self._words: list[tuple[str, ...]] = [()] * size
        self._literals: list[tuple[str, ...]] = [()] * size
        self._raised: list[frozenset[str]] = [frozenset()] * size
        self._split = bytearray(size)
        self._len_cache: npt.NDArray[np.int64] | None = None
        self._lock = threading.Lock()  # kept files are shared by the daemon's request threads

    def _lens(self) -> npt.NDArray[np.int64]:
        """Each line's word count (0 for a line not split yet), kept until more are split (under
        the lock)."""
        if self._len_cache is None:
            self._len_cache = np.fromiter(map(len, self._words), dtype=np.int64, count=self.last + 2)
        return self._len_cache

    def _fill(self, lo: int, hi: int) -> None:
        """Split lines ``lo``..``hi - 1`` (a line split before is split again from the cache;
        under the lock)."""
        tokens, words, literals, raised = zip(*map(_line, self.text[lo:hi]), strict=True)
        self._tokens[lo:hi] = tokens
        self._words[lo:hi] = words
        self._literals[lo:hi] = literals
        self._raised[lo:hi] = raised
        self._split[lo:hi] = b"\x01" * (hi - lo)
        self._len_cache = None

    def _clip(self, start: int, end: int) -> tuple[int, int]:
        """Lines ``start``..``end`` as the index holds them: [lo, hi)."""
        lo, hi = max(start, 0), min(end, self.last) + 1
        return lo, max(lo, hi)

    def aggregate(
        self, spans: Sequence[tuple[int, int]], uncovered: Sequence[int] | None, query: _Query
    ) -> _Spans:
        """Per span (and for the lines ``uncovered``, when given, as one more row last): how often
        each query word is among its words, how many words it has, how many of the query's
        identifier tokens it holds, and whether it quotes a literal of the query or raises an
        error the query names. Each needed line is split once; the sums are prefix sums."""
        ranges = [self._clip(s, e) for s, e in spans]
        needed = [(1, self.last + 1)] if uncovered is not None else ranges  # a whole file, or spans
        with self._lock:  # a line's parts never change once split: only splitting is guarded
            for lo, hi in needed:
                if lo < hi and self._split.find(0, lo, hi) >= 0:
                    self._fill(lo, hi)
            whole_lens = self._lens() if uncovered is not None else None
        words: Sequence[tuple[str, ...]]
        tokens: Sequence[frozenset[str]]
        literals: Sequence[tuple[str, ...]]
        raised: Sequence[frozenset[str]]
        if uncovered is not None:
            at: Sequence[int] = range(self.last + 2)
            words, tokens = self._words, self._tokens
            literals, raised = self._literals, self._raised
            lens = cast("npt.NDArray[np.int64]", whole_lens)
        else:  # only the spans' lines, in order (a file's few definitions, not all its lines)
            marks = bytearray(self.last + 2)
            for lo, hi in ranges:
                marks[lo:hi] = b"\x01" * (hi - lo)
            at = list(compress(range(self.last + 2), marks))
            if not at:
                at = [0]
            words, tokens = _pick(self._words, at), _pick(self._tokens, at)
            literals, raised = _pick(self._literals, at), _pick(self._raised, at)
            lens = np.fromiter(map(len, words), dtype=np.int64, count=len(at))
        size = len(at)
        where = np.asarray(at, dtype=np.int64)
        starts = np.searchsorted(where, np.array([r[0] for r in ranges], dtype=np.int64))
        ends = np.searchsorted(where, np.array([r[1] for r in ranges], dtype=np.int64))
        mask = None
        if uncovered is not None:
            mask = np.zeros(size, dtype=np.bool_)
            mask[list(uncovered)] = True
        no_events = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        word_events = no_events
        if query.words:  # (query word, line) of each occurrence, from the lines holding one, in C
            hits = list(compress(range(size), map(operator.not_, map(query.word_set.isdisjoint, words))))
            if hits:
                held = _pick(words, hits)
                flat = list(chain.from_iterable(held))
                ids = np.fromiter(map(query.word_at.get, flat, repeat(-1)), dtype=np.int64, count=len(flat))
                lines = np.repeat(
                    np.asarray(hits, dtype=np.int64), np.fromiter(map(len, held), dtype=np.int64)
                )
                keep = ids >= 0
                word_events = (ids[keep], lines[keep])
        ident_events = no_events
        if query.idents:  # (identifier token, line) of each line holding it
            hits = list(compress(range(size), map(operator.not_, map(query.ident_set.isdisjoint, tokens))))
            if hits:
                found = list(map(query.ident_set.intersection, _pick(tokens, hits)))
                flat_ids = list(chain.from_iterable(found))
                ids = np.fromiter(
                    map(query.ident_at.__getitem__, flat_ids), dtype=np.int64, count=len(flat_ids)
                )
                lines = np.repeat(
                    np.asarray(hits, dtype=np.int64), np.fromiter(map(len, found), dtype=np.int64)
                )
                ident_events = (ids, lines)

        def counted(
            events: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]], width: int
        ) -> npt.NDArray[np.int64]:
            """(spans [+ module], width): the events of each id on each span's lines."""
            ids, lines = events
            keys = np.sort(ids * (size + 1) + lines)
            base = np.arange(width, dtype=np.int64)[None, :] * (size + 1)
            out: npt.NDArray[np.int64] = np.searchsorted(keys, base + ends[:, None]) - np.searchsorted(
                keys, base + starts[:, None]
            )
            if mask is not None:
                module = np.bincount(ids[mask[lines]], minlength=width)[None, :]
                out = np.concatenate([out, module], axis=0)
            return out

        def total(a: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
            prefix = np.zeros(size + 1, dtype=np.int64)
            np.cumsum(a, out=prefix[1:])
            out: npt.NDArray[np.int64] = prefix[ends] - prefix[starts]
            if mask is not None:
                out = np.concatenate([out, [int(a[mask].sum())]])
            return out

        quoted = np.zeros(size, dtype=np.int64)
        for x in compress(range(size), literals):
            quoted[x] = query.quotes(literals[x])
        raising = np.zeros(size, dtype=np.int64)
        for x in compress(range(size), raised):
            raising[x] = bool(raised[x] & query.raise_names)
        return _Spans(
            tf=counted(word_events, len(query.words)),
            length=total(lens),
            idents=(counted(ident_events, len(query.idents)) > 0).sum(axis=1),
            quoted=total(quoted) > 0,
            raising=total(raising) > 0,
        )

    def uncovered(self, spans: Iterable[tuple[int, int]]) -> list[int]:
        """The lines (of those the index holds) no span covers."""
        covered = bytearray(self.last + 2)
        for s, e in spans:
            lo, hi = max(s, 0), min(e, self.last) + 1
            if lo < hi:
                covered[lo:hi] = b"\x01" * (hi - lo)
        return [n for n in range(1, self.last + 1) if not covered[n]]

    def module_snippet(self, uncovered: list[int]) -> tuple[str, int]:
        """The module level's snippet: from its first line that is not blank, up to the next
        definition ("" when it has none)."""
        at = next((n for n in uncovered if self.text[n].strip()), 0)
        if not at:
            return "", 0
        run = [at]
        for n in uncovered[uncovered.index(at) + 1 :]:
            if n != run[-1] + 1 or len(run) == _SNIPPET_READ:
                break
            run.append(n)
        return snippet_at("\n".join(self.text[n] for n in run), at)


_FILES: OrderedDict[tuple[str, tuple[tuple[int, str], ...]], _FileLines] = OrderedDict()
_FILES_KEPT = 64
_FILES_LOCK = threading.Lock()


def _file_lines(path: str, chunks: Sequence[tuple[int, str]]) -> _FileLines:
    """The lines of a file of these chunks, split as earlier queries split them: the last
    :data:`_FILES_KEPT` files read are kept, keyed by their indexed text (a file changed since
    is another key), so the files a session keeps asking about are split once."""
    key = (path, tuple(chunks))
    with _FILES_LOCK:
        got = _FILES.get(key)
        if got is not None:
            _FILES.move_to_end(key)
            return got
    got = _FileLines(chunks)
    with _FILES_LOCK:
        _FILES[key] = got
        while len(_FILES) > _FILES_KEPT:
            _FILES.popitem(last=False)
    return got


def _path_match(a: str, b: str) -> bool:
    return a.endswith(b) or b.endswith(a)


class _Defs:
    """The pool's files' definitions (of :data:`ORDER_KINDS`, by start line), read for many files
    at once."""

    def __init__(
        self, index: IndexQueries, known: Mapping[str, Sequence[KindedDefinition]] | None = None
    ) -> None:
        self.index = index
        self._defs: dict[str, list[tuple[int, int, str, str | None]]] = {}
        for path, got in (known or {}).items():
            self._defs[path] = [
                (d.start_line, d.end_line, d.qualified_name, d.signature)
                for d in got
                if d.kind in ORDER_KINDS
            ]

    def read(self, paths: Iterable[str]) -> None:
        """Read the definitions of those of ``paths`` not read yet, in one go."""
        missing = [p for p in dict.fromkeys(paths) if p not in self._defs]
        if not missing:
            return
        got = self.index.definitions_of(missing, kinds=ORDER_KINDS)
        for path in missing:
            self._defs[path] = [
                (d.start_line, d.end_line, d.qualified_name, d.signature) for d in got.get(path, ())
            ]

    def of(self, path: str) -> list[tuple[int, int, str, str | None]]:
        self.read([path])
        return self._defs[path]

    def name_at(self, path: str, line: int) -> str:
        """The definition a code-view hit starting at ``line`` is: the first starting there, else
        the innermost around it, else ``<module>``."""
        defs = self.of(path)
        for s, _e, qn, _sig in defs:
            if s == line:
                return qn
        around = [(e - s, qn) for s, e, qn, _sig in defs if s <= line <= e]
        return min(around)[1] if around else MODULE


def _callees(index: IndexQueries, named: Iterable[tuple[str | None, str]]) -> set[str]:
    """The names used inside the definitions ``named`` names (reference-graph distance 1):
    (path suffix or None, definition name); a traceback frame carries a path."""
    out: set[str] = set()
    for path, name in named:
        rows = [r.definition for r in index.symbols_by_name(name)]
        spans = [d for d in rows if d.kind in ("function", "method", "class")][:_SPANS_PER_NAME]
        for d in spans:
            if path is not None and not _path_match(d.path, path):
                continue
            used = index.names_used_in(d.path, d.span.start_line, d.span.end_line)
            out |= used - {name}  # not itself (recursion); another named definition counts
    return out


def candidates(
    index: IndexQueries,
    terms: QueryTerms,
    text: str,
    files_hits: Sequence[SearchHit],
    code_hits: Sequence[SearchHit],
    *,
    pool_files: int = POOL_FILES,
    definitions: Mapping[str, Sequence[KindedDefinition]] | None = None,
) -> list[Candidate]:
    """The pool of one query and each candidate's :data:`FEATURES`, from the files view's hits
    and the fused code view's (each at depth :data:`CODE_DEPTH`) of the same legs; ``terms``:
    the query's terms as the search read them, ``text``: the query as asked; ``definitions``:
    files' definitions already read (any kinds, :data:`ORDER_KINDS` among them)."""
    defs = _Defs(index, definitions)
    files = list(dict.fromkeys(h.path for h in files_hits))
    defs.read([h.path for h in code_hits] + files[:pool_files])
    language = {h.path: h.language for h in (*files_hits, *code_hits)}
    hit_names = [defs.name_at(h.path, h.start_line) for h in code_hits]
    first_hit: dict[tuple[str, str], SearchHit] = {}
    for h, n in zip(code_hits, hit_names, strict=True):
        first_hit.setdefault((h.path, n), h)
    nav = list(first_hit)  # each definition at its first hit
    code_files = list(dict.fromkeys(p for p, _n in nav))
    words = sorted(set(terms.words))
    n_chunks = index.chunk_count() or 1
    df = index.vocab_doc_freqs(words) if words else {}
    idf = {w: math.log(1 + n_chunks / (1 + df.get(w, 0))) for w in words}
    idf_total = sum(idf.values()) or 1.0
    idents = [i.rsplit(".", 1)[-1] for i in terms.identifiers]
    ident_full = set(terms.identifiers)
    lowered = text.lower()
    frames = [(f.path.replace("\\", "/"), f.function.rsplit(".", 1)[-1]) for f in terms.frames]
    callees_named = _callees(index, [(None, i) for i in dict.fromkeys(idents)][:_MAX_NAMED])
    callees_frame = _callees(index, frames[:_MAX_NAMED])

    pool: list[tuple[str, str]] = list(nav)
    for path in files[:pool_files]:
        pool.extend((path, qn) for _s, _e, qn, _sig in defs.of(path))
        pool.append((path, MODULE))
    pool = list(dict.fromkeys(pool))
    by_path: dict[str, list[str]] = {}
    for path, name in pool:
        by_path.setdefault(path, []).append(name)
    fan_in = index.ref_counts(sorted({n.rsplit(".", 1)[-1] for _p, n in pool if n != MODULE}))

    nav_rank = {key: r for r, key in enumerate(nav)}
    code_score: dict[tuple[str, str], float] = {}
    for h, n in zip(code_hits, hit_names, strict=True):
        code_score.setdefault((h.path, n), float(h.score))
    best_code = max(code_score.values(), default=1.0) or 1.0
    file_score: dict[str, float] = {}
    for h in files_hits:
        file_score.setdefault(h.path, float(h.score))
    best_file = max(file_score.values(), default=1.0) or 1.0
    query_tokens = set(_WORD.findall(text))
    ident_tokens = {t for i in terms.identifiers for t in _WORD.findall(i) if len(t) > 2}
    query = _Query.of(words, ident_tokens, text, query_tokens - {"Exception", "Error"})
    hits_in = Counter(p for p, _n in nav)
    out: list[Candidate] = []
    texts = index.file_chunk_texts(list(by_path))
    for path, names in by_path.items():
        lines = _file_lines(path, texts.get(path, []))
        spans = {qn: (s, e, sig) for s, e, qn, sig in defs.of(path)}
        uncovered: list[int] | None = None
        nonsrc = float(non_source(path, language.get(path)))
        file_rank = float(files.index(path)) if path in files else ABSENT
        code_file_rank = float(code_files.index(path)) if path in code_files else ABSENT
        frame_file = next((p for p, (fp, _fn) in enumerate(frames) if _path_match(fp, path)), -1)
        path_named = float(any(_path_match(path, p) for p in terms.paths))
        def_names = [n for n in names if n in spans]
        if len(def_names) < len(names):  # <module>: the lines no definition covers
            uncovered = lines.uncovered([(cs, ce) for cs, ce, _sig in spans.values()])
        agg = lines.aggregate([spans[n][:2] for n in def_names], uncovered, query)
        row_of = {n: i for i, n in enumerate(def_names)}
        mine: list[Candidate] = []
        for name in names:
            last = name.rsplit(".", 1)[-1]
            row = row_of.get(name, len(def_names))
            s, e, sig = spans[name] if name in spans else (1, max(lines.last, 1), None)
            tf = {words[j]: int(c) for j, c in enumerate(agg.tf[row]) if c}
            name_words = split_words(last)
            for w in name_words:
                if w in query.word_at:
                    tf[w] = tf.get(w, 0) + 1
            length = int(agg.length[row]) + len(name_words) or 1
            present = [w for w in words if w in tf]
            bm25 = sum(
                idf[w] * tf[w] * 2.2 / (tf[w] + 1.2 * (0.25 + 0.75 * length / _AVG_LEN)) for w in present
            )
            is_module = name == MODULE
            name_toks = list(split_words(last)) if not is_module else []
            named_pos = next((p for p, i in enumerate(idents) if i == last), -1) if not is_module else -1
            cls = name.split(".")[0] if "." in name else ""
            frame_pos = next(
                (p for p, (fp, fn) in enumerate(frames) if fn == last and _path_match(fp, path)), -1
            )
            found = int(agg.idents[row])
            key = (path, name)
            signals = {
                "code_rank": float(nav_rank.get(key, ABSENT)),
                "code_in": float(key in nav_rank),
                "files_rank": file_rank,
                "code_file_rank": code_file_rank,
                "code_hits_in_file": float(hits_in.get(path, 0)),
                "own_share": len(present) / len(words) if words else 0.0,
                "own_idf": sum(idf[w] for w in present) / idf_total,
                "own_bm25": bm25,
                "name_share": (sum(1 for w in name_toks if w in terms.stems) / len(name_toks))
                if name_toks
                else 0.0,
                "named": float(named_pos >= 0 or name in ident_full),
                "named_pos": float(named_pos) if named_pos >= 0 else ABSENT,
                "class_named": float(bool(cls) and (cls in idents or cls.lower() in lowered)),
                "frame_pos": float(frame_pos) if frame_pos >= 0 else ABSENT,
                "frame_file_pos": float(frame_file) if frame_file >= 0 else ABSENT,
                "path_named": path_named,
                "lines_log": math.log1p(e - s + 1),
                "depth": float(name.count(".")),
                "module": float(is_module),
                "private": float(last.startswith("_") and not last.startswith("__")),
                "dunder": float(last.startswith("__") and last.endswith("__")),
                "nonsrc": nonsrc,
                "defs_in_file_log": math.log1p(len(spans)),
                "query_words_log": math.log1p(len(words)),
                "long": float(terms.long),
                "code_score_share": code_score.get(key, 0.0) / best_code,
                "files_score_share": file_score.get(path, 0.0) / best_file,
                "idents_in_body": float(found),
                "idents_in_body_share": found / len(ident_tokens) if ident_tokens else 0.0,
                "literal_quoted": float(agg.quoted[row]),
                "raises_named": float(agg.raising[row]),
                "callee_of_named": float(not is_module and last in callees_named),
                "callee_of_frame": float(not is_module and last in callees_frame),
                "fan_in_log": math.log1p(fan_in.get(last, 0)) if not is_module else 0.0,
            }
            mine.append(
                Candidate(
                    path,
                    name,
                    s,
                    e,
                    sig,
                    language.get(path),
                    first_hit.get(key),
                    signals,
                    _lines=lines,
                    _uncovered=uncovered if is_module else None,
                )  # fmt: skip
            )
        order = sorted(mine, key=lambda c: -c.signals["own_bm25"])
        for r, c in enumerate(order):
            c.signals["own_bm25_rank_in_file"] = float(r)
        out.extend(mine)
    return out


def _file_rank(c: Candidate) -> dict[str, int]:
    """How a definition no leg found came to be listed: its file's 1-based rank in the files view."""
    rank = c.signals.get("files_rank", ABSENT)
    return {"file": int(rank) + 1} if rank < ABSENT else {}


def learned_code_view(
    index: IndexQueries,
    terms: QueryTerms,
    text: str,
    files_hits: Sequence[SearchHit],
    code_hits: Sequence[SearchHit],
    k: int,
    *,
    model: OrderModel | None = None,
    definitions: Mapping[str, Sequence[KindedDefinition]] | None = None,
) -> list[SearchHit]:
    """The code view's first ``k`` definitions in the learned order (see the module's doc). A
    candidate that is a fused code-view hit keeps its hit (its snippet, its legs' ranks); the
    others are listed by their own lines. Each hit's score is the model's probability."""
    model = model or load_model()
    pool = candidates(index, terms, text, files_hits, code_hits, definitions=definitions)
    for c, score in zip(pool, model.scores([c.signals for c in pool]), strict=True):
        c.score = score
    pool.sort(key=lambda c: -c.score)
    out: list[SearchHit] = []
    for c in pool:
        if len(out) == k:
            break
        if c.hit is None and not c.snippet:
            continue  # a file's module level that holds nothing but blank lines
        prob = round(1.0 / (1.0 + math.exp(-c.score)), 6)
        if c.hit is not None:
            h = c.hit
            out.append(
                SearchHit(
                    path=h.path,
                    start_line=h.start_line,
                    end_line=h.end_line,
                    symbol=h.symbol,
                    signature=h.signature,
                    snippet=h.snippet,
                    score=prob,
                    language=h.language,
                    ranks=dict(h.ranks),
                    snippet_line=h.snippet_line,
                )  # fmt: skip
            )
        else:
            out.append(
                SearchHit(
                    path=c.path,
                    start_line=c.start_line,
                    end_line=c.end_line,
                    symbol=None if c.name == MODULE else c.name,
                    signature=c.signature,
                    snippet=c.snippet,
                    score=prob,
                    language=c.language,
                    ranks=_file_rank(c),
                    snippet_line=c.snippet_line,
                )  # fmt: skip
            )
    return out
