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
:class:`storage.query.IndexQueries`; a file's lines and the sums over a span of them are
:mod:`navigator.code_lines`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from navigator.code_lines import SNIPPET_READ, WORD, FileLines, SpanQuery, file_lines
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

_AVG_LEN = 20.0
_MAX_NAMED = 30
"""At most this many named definitions (and frames) are followed into the reference graph."""
_SPANS_PER_NAME = 20

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
        """One candidate's logit (:meth:`scores` of one)."""
        return self.scores([signals])[0]


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
    _lines: FileLines | None = field(default=None, repr=False)
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
                    "\n".join(lines.text[s : min(self.end_line, s + SNIPPET_READ) + 1]), s
                )
        return self._shown

    @property
    def snippet(self) -> str:
        return self._show()[0]

    @property
    def snippet_line(self) -> int:
        return self._show()[1]


def _path_match(a: str, b: str) -> bool:
    return a.endswith(b) or b.endswith(a)


class _Defs:
    """The pool's files' definitions (of :data:`ORDER_KINDS`, by start line), read for many files
    at once."""

    def __init__(
        self, index: IndexQueries, known: Mapping[str, Sequence[KindedDefinition]] | None = None
    ) -> None:
        self.index = index
        self._known = known or {}  # converted when a file is first asked for (most never are)
        self._defs: dict[str, list[tuple[int, int, str, str | None]]] = {}

    def read(self, paths: Iterable[str]) -> None:
        """Read the definitions of those of ``paths`` not read yet, in one go."""
        missing: list[str] = []
        for p in dict.fromkeys(paths):
            if p in self._defs:
                continue
            known = self._known.get(p)
            if known is None:
                missing.append(p)
            else:
                self._defs[p] = [
                    (d.start_line, d.end_line, d.qualified_name, d.signature)
                    for d in known
                    if d.kind in ORDER_KINDS
                ]
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
    query_tokens = set(WORD.findall(text))
    ident_tokens = {t for i in terms.identifiers for t in WORD.findall(i) if len(t) > 2}
    query = SpanQuery.of(words, ident_tokens, text, query_tokens - {"Exception", "Error"})
    hits_in = Counter(p for p, _n in nav)
    out: list[Candidate] = []
    texts = index.file_chunk_texts(list(by_path))
    for path, names in by_path.items():
        lines = file_lines(path, texts.get(path, []))
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
                )
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
        if c.hit is not None:  # its fused hit, scored by the order
            out.append(dataclasses.replace(c.hit, score=prob, ranks=dict(c.hit.ranks)))
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
                )
            )
    return out
