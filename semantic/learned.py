"""A learned fusion (issue 18): the features fusion already computes per candidate, and a small
model that scores them in place of the hand-tuned file and chunk scores.

:func:`semantic.fusion.fuse` computes, for every candidate chunk and every file it rolls up to,
the features of :data:`FILE_FEATURES` and :data:`CHUNK_FEATURES` (each leg's rank, the boosts and
penalties it applied, nav's own fused scores and ranks, file aggregates, the query's length) and,
when ``RankingConfig.ranker`` is set, lets a :class:`semantic.ranking.Ranker` score them: the files
view orders files by the ``files`` model's score, the code view chunks by the ``chunks`` model's.

A model file is JSON (``format: nav-ranker``): per view, the feature names it was trained on and
either a linear model (``linear``: standardization, weights, intercept) or a tree ensemble
(``trees``: LightGBM's trees as flat node arrays), evaluated here in numpy, with no runtime
dependency on the trainer. ``bench/ranker_train.py`` writes them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from semantic.analysis import QueryTerms

__all__ = [
    "CHUNK_FEATURES",
    "FILE_FEATURES",
    "LEG_NAMES",
    "ChunkEvidence",
    "FileEvidence",
    "ModelRanker",
    "Table",
    "load_ranker",
    "rank_feature",
    "tables",
]

LEG_NAMES = ("bm25", "symbols", "ident", "prf", "vector")
"""The chunk legs whose ranks are features (a leg that did not run is absent from every row)."""

_ABSENT = 200.0
"""The rank a leg that did not find a candidate counts as (beyond every leg's depth)."""

QUERY_FEATURES = ("q_words", "q_long", "q_idents", "q_frames")
FILE_FEATURES = (
    "nav_file",
    "nav_file_rel",
    "nav_file_rank",
    "file_chunks",
    "legs_hit",
    *(f"best_{leg}" for leg in LEG_NAMES),
    "path_leg",
    "penalty",
    "non_source",
    "test",
    "docs",
    "prose",
    "frame_file",
    "any_def_match",
    "stem_match",
    "path_depth",
    *QUERY_FEATURES,
)
"""Per file: nav's file score (log; and over the best file's) and rank, how many candidate chunks it has and how many legs
found it, each leg's best rank among its chunks, the path leg's rank, the file penalty (log) and
its parts, the trace's rank of the file, whether a chunk of it defines a name the query says, the
stem boost, folder depth, and the query's length, long-query flag, names and frames."""

CHUNK_FEATURES = (
    *(f"leg_{leg}" for leg in LEG_NAMES),
    "nav_chunk",
    "nav_code",
    "nav_code_rel",
    "nav_code_rank",
    "chunk_in_file",
    "def_match",
    "frame_fn",
    "module_level",
    *FILE_FEATURES,
)
"""Per chunk: each leg's rank, nav's chunk and code-view scores (log; the latter also over the
best chunk's) and code-view rank, the
chunk's rank inside its file, the definition and frame boosts' evidence, whether it is module
level (no enclosing symbol), and its file's features."""


def rank_feature(rank: int | None) -> float:
    """A leg's rank as a feature: ``1 / (1 + log2(rank))`` (1 for the first, 0 when absent), a
    reciprocal-rank shape a linear model can weigh and a tree can cut."""
    if rank is None:
        return 0.0
    return 1.0 / (1.0 + math.log2(max(1, rank)))


def log_score(x: float) -> float:
    """A positive score as a feature (log, floored for zero)."""
    return math.log(max(x, 1e-9))


@dataclass(frozen=True, slots=True)
class Table:
    """One view's candidates as rows of features: ``keys`` are file paths (``files``) or chunk ids
    (``chunks``), ``rows[i]`` the features of ``keys[i]`` named by ``names``."""

    view: str
    names: tuple[str, ...]
    keys: tuple[str | int, ...]
    rows: npt.NDArray[np.float64]


def _linear(spec: Mapping[str, Any], x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    mean = np.asarray(spec["mean"], dtype=np.float64)
    scale = np.asarray(spec["scale"], dtype=np.float64)
    coef = np.asarray(spec["coef"], dtype=np.float64)
    out: npt.NDArray[np.float64] = ((x - mean) / scale) @ coef + float(spec["intercept"])
    return out


def _trees(spec: Mapping[str, Any], x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """A sum of binary trees, each as flat arrays: internal node ``i`` sends a row to ``left[i]``
    when ``x[feature[i]] <= threshold[i]``, else to ``right[i]``; a child ``< 0`` is leaf ``~child``.
    ``offset``: ``[feature index, weight]`` pairs added first (a model boosted from nav's score)."""
    total = np.full(len(x), float(spec.get("base", 0.0)))
    for feature_at, weight in spec.get("offset", ()):  # boosted from a feature (nav's own score)
        total += float(weight) * x[:, int(feature_at)]
    rows = np.arange(len(x))
    for tree in spec["trees"]:
        leaves = np.asarray(tree["leaf"], dtype=np.float64)
        if not tree["feature"]:  # a tree of one leaf
            total += leaves[0]
            continue
        feature = np.asarray(tree["feature"], dtype=np.int64)
        threshold = np.asarray(tree["threshold"], dtype=np.float64)
        left = np.asarray(tree["left"], dtype=np.int64)
        right = np.asarray(tree["right"], dtype=np.int64)
        node = np.zeros(len(x), dtype=np.int64)
        active = node >= 0
        while active.any():
            n = node[active]
            go_left = x[rows[active], feature[n]] <= threshold[n]
            node[active] = np.where(go_left, left[n], right[n])
            active = node >= 0
        total += leaves[~node]
    return total


@dataclass(frozen=True, slots=True)
class _ViewModel:
    names: tuple[str, ...]
    kind: str
    spec: Mapping[str, Any]

    def score(self, table: Table) -> npt.NDArray[np.float64]:
        if table.names == self.names:
            x = table.rows
        else:  # the model's features, in its order (a feature it does not know is ignored)
            at = {n: i for i, n in enumerate(table.names)}
            missing = [n for n in self.names if n not in at]
            if missing:
                raise ValueError(f"ranker model needs features the fusion does not compute: {missing}")
            x = table.rows[:, [at[n] for n in self.names]]
        if not len(x):
            return np.zeros(0)
        raw = _linear(self.spec, x) if self.kind == "linear" else _trees(self.spec, x)
        # positive and at most 1: the code view scales a split chunk's definitions by a share
        out: npt.NDArray[np.float64] = np.exp(raw - raw.max())
        return out


class ModelRanker:
    """A :class:`semantic.ranking.Ranker` from a model file (see the module's doc)."""

    def __init__(self, data: Mapping[str, Any], *, source: str = "<model>") -> None:
        if data.get("format") != "nav-ranker":
            raise ValueError(f"{source}: not a nav ranker model (format {data.get('format')!r})")
        self.source = source
        self.meta = {k: v for k, v in data.items() if k not in ("files", "chunks")}
        self.views: dict[str, _ViewModel] = {}
        for view in ("files", "chunks"):
            spec = data.get(view)
            if spec is None:
                continue
            kind = spec.get("kind")
            if kind not in ("linear", "trees"):
                raise ValueError(f"{source}: {view} model kind must be linear or trees, got {kind!r}")
            self.views[view] = _ViewModel(tuple(spec["features"]), kind, spec)

    def score(self, table: Table) -> Sequence[float] | None:
        model = self.views.get(table.view)
        return None if model is None else model.score(table).tolist()


MODELS = Path(__file__).resolve().parent / "models"
"""Where shipped model files live (``<name>.json``)."""


@lru_cache(maxsize=8)
def load_ranker(spec: str) -> ModelRanker:
    """The ranker a ``RankingConfig.ranker`` string names: a shipped model's name (a file in
    :data:`MODELS`) or a path to a model file. Read once per process (model files are read-only)."""
    path = MODELS / f"{spec}.json" if "/" not in spec and not spec.endswith(".json") else Path(spec)
    if not path.is_file():
        shipped = sorted(p.stem for p in MODELS.glob("*.json")) if MODELS.is_dir() else []
        raise ValueError(f"RankingConfig.ranker {spec!r}: no model file {path} (shipped: {shipped})")
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"RankingConfig.ranker {spec!r}: cannot read {path}: {exc}") from exc
    return ModelRanker(data, source=str(path))


@dataclass(frozen=True, slots=True)
class ChunkEvidence:
    """What fusion saw of one chunk beyond its legs' ranks."""

    def_match: bool
    frame_rank: int | None
    """The rank of the first trace frame naming the chunk's function (0: where it was raised)."""
    module_level: bool


@dataclass(frozen=True, slots=True)
class FileEvidence:
    """What fusion saw of one file: its penalty (and which kinds applied), trace rank, stem match."""

    penalty: float
    non_source: bool
    test: bool
    docs: bool
    prose: bool
    frame_rank: int | None
    stem_match: bool


class _Fused(Protocol):
    id: int
    path: str
    score: float
    ranks: dict[str, int]
    file_score: float
    code_score: float


def _query_row(terms: QueryTerms) -> list[float]:
    return [
        math.log1p(len(terms.words)),
        1.0 if terms.long else 0.0,
        math.log1p(len(terms.identifiers)),
        1.0 if terms.frames else 0.0,
    ]


def tables(
    by_file: Mapping[str, Sequence[_Fused]],
    path_rank: Mapping[str, int],
    chunks: Mapping[int, ChunkEvidence],
    files: Mapping[str, FileEvidence],
    terms: QueryTerms,
) -> tuple[Table, Table]:
    """The files and chunks tables of one fusion. ``by_file``: each file's fused chunks, best
    first, with nav's ``score``, ``file_score`` and ``code_score`` set; ``path_rank``: the path
    leg's 1-based ranks; ``chunks`` / ``files``: fusion's evidence per chunk id and per path."""
    query = _query_row(terms)
    order = sorted(by_file, key=lambda p: (-by_file[p][0].file_score, p))
    file_rank = {p: i for i, p in enumerate(order)}
    every = [r for p in order for r in by_file[p]]
    code_rank = {r.id: i for i, r in enumerate(sorted(every, key=lambda r: (-r.code_score, r.id)))}
    top_file = log_score(by_file[order[0]][0].file_score) if order else 0.0
    top_code = max((log_score(r.code_score) for r in every), default=0.0)
    file_rows: dict[str, list[float]] = {}
    for path in order:
        rs = by_file[path]
        ev = files[path]
        best = [min((r.ranks[leg] for r in rs if leg in r.ranks), default=None) for leg in LEG_NAMES]
        legs_hit = {leg for r in rs for leg in r.ranks if leg != "path"}
        legs_hit |= {"path"} if path in path_rank else set()
        file_rows[path] = [
            log_score(rs[0].file_score),
            log_score(rs[0].file_score) - top_file,
            math.log1p(file_rank[path]),
            math.log1p(len(rs)),
            float(len(legs_hit)),
            *(rank_feature(b) for b in best),
            rank_feature(path_rank.get(path)),
            math.log(max(ev.penalty, 1e-9)),
            float(ev.non_source),
            float(ev.test),
            float(ev.docs),
            float(ev.prose),
            0.0 if ev.frame_rank is None else 1.0 / (1.0 + ev.frame_rank),
            float(any(chunks[r.id].def_match for r in rs if r.id in chunks)),
            float(ev.stem_match),
            float(path.count("/")),
            *query,
        ]
    chunk_rows: list[list[float]] = []
    chunk_keys: list[int] = []
    for path in order:
        for pos, r in enumerate(by_file[path]):
            ev_c = chunks.get(r.id, ChunkEvidence(False, None, True))
            chunk_rows.append(
                [
                    *(rank_feature(r.ranks.get(leg)) for leg in LEG_NAMES),
                    log_score(r.score),
                    log_score(r.code_score),
                    log_score(r.code_score) - top_code,
                    math.log1p(code_rank[r.id]),
                    math.log1p(pos),
                    float(ev_c.def_match),
                    0.0 if ev_c.frame_rank is None else 1.0 / (1.0 + ev_c.frame_rank),
                    float(ev_c.module_level),
                    *file_rows[path],
                ]
            )
            chunk_keys.append(r.id)
    f = Table("files", FILE_FEATURES, tuple(order), _matrix([file_rows[p] for p in order], FILE_FEATURES))
    c = Table("chunks", CHUNK_FEATURES, tuple(chunk_keys), _matrix(chunk_rows, CHUNK_FEATURES))
    return f, c


def _matrix(rows: list[list[float]], names: tuple[str, ...]) -> npt.NDArray[np.float64]:
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), len(names))
