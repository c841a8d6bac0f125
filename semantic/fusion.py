"""Fusion and ranking of search legs: pure functions over plain values, no I/O.

1. Reciprocal rank fusion (k = 10, see :class:`semantic.ranking.RankingConfig`) of the chunk legs (BM25, vectors, symbol names):
   ``score(chunk) = sum over legs of weight / (k + rank)``.
2. Chunk boosts: a chunk that *defines* a symbol named in the query (definition boost),
   a chunk in a file whose stem is a query word (file-stem boost).
3. Files are ranked by the sum of their top-3 chunk scores, plus the path leg's RRF
   term; test files and vendored code are penalized.
4. The result lists the best chunk of each file in file order, then further chunks.

The settings (:class:`semantic.ranking.RankingConfig`, passed as ``config=``) were measured on
semble's Python dev set (see ``bench/README.md``); they are deliberately few.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from semantic.analysis import QueryTerms
from semantic.issue_text import Frame
from semantic.ranking import DEFAULT, Ranker, RankingConfig
from storage.tokens import split_words

__all__ = [
    "ChunkMeta",
    "Ranked",
    "definition_match",
    "file_penalty",
    "frame_ranks",
    "fuse",
    "non_source_kind",
    "rrf",
    "stem_match",
]


@dataclass(frozen=True, slots=True)
class ChunkMeta:
    """What the heuristics need to know about a candidate chunk."""

    id: int
    path: str
    symbol: str | None
    start_line: int


@dataclass(slots=True)
class Ranked:
    """A fused chunk: its final score and the 1-based rank each leg gave it."""

    id: int
    path: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)
    file_score: float = 0.0
    code_score: float = 0.0
    """The code view's score: the chunk's own, its file's penalty, a share of its file's score."""


K = TypeVar("K", bound=Hashable)


def rrf(
    legs: Mapping[str, Sequence[K]], *, k: int = DEFAULT.rrf_k, weights: Mapping[str, float] | None = None
) -> dict[K, tuple[float, dict[str, int]]]:
    """Reciprocal rank fusion over any keys (chunk ids, positions):
    key -> (sum of weight / (k + rank), {leg: rank}); a key repeated within a leg counts once."""
    out: dict[K, tuple[float, dict[str, int]]] = {}
    for leg, ids in legs.items():
        w = 1.0 if weights is None else weights.get(leg, 1.0)
        seen: set[K] = set()
        rank = 0
        for cid in ids:
            if cid in seen:
                continue
            seen.add(cid)
            rank += 1
            score, ranks = out.get(cid, (0.0, {}))
            ranks[leg] = rank
            out[cid] = (score + w / (k + rank), ranks)
    return out


def _same_name(query_name: str, symbol_name: str) -> bool:
    """Names match ignoring case, except that a capitalized query name (``Serialize``, a
    type) does not match a name differing only in case (``serialize``, a method); a query
    typed in lower case matches any case. Measured: +0.004 NDCG@10 on semble's TS/JS/Go/Rust
    (symbol queries 0.931 -> 0.951), 0 on Python."""
    if query_name == symbol_name:
        return True
    if query_name.lower() != symbol_name.lower():
        return False
    return query_name.islower()


_WORD_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def definition_match(symbol: str | None, terms: QueryTerms, *, config: RankingConfig = DEFAULT) -> bool:
    """True when the chunk's enclosing symbol is named in the query.

    ``Session.send`` matches a query naming ``send`` or ``Session.send`` as an identifier,
    or one whose words contain every word of a multi-word name (``create sales order``).
    """
    if not symbol:
        return False
    last = symbol.rsplit(".", 1)[-1]
    lowered = last.lower()
    for ident in terms.identifiers:
        if _same_name(ident.rsplit(".", 1)[-1], last) or _same_name(ident, symbol):
            return True
    parts = split_words(last)
    if len(parts) >= 2:
        if config.said_parts and terms.said:
            # ``replace_file`` for "where is a file's rows replaced": "file" is a stopword, but said.
            return all(p in terms.said for p in parts) and any(p in terms.stems for p in parts)
        return all(p in terms.stems for p in parts)
    # A one-word symbol (``Flask``, ``redirect``) counts only when the query is short and
    # names it: in prose, common words ("request", "session") would fire everywhere.
    if len(parts) == 1 and len(terms.words) <= 3 and lowered in terms.words:
        return any(_same_name(t, last) for t in _WORD_TOKEN.findall(terms.text) if t.lower() == lowered)
    return False


_STEM_SKIP = frozenset({"__init__", "index", "main", "mod", "lib", "init", "utils", "util", "types", "base"})


def stem_match(path: str, terms: QueryTerms) -> bool:
    """True when the file's stem (``sessions`` in ``flask/sessions.py``) is a query word."""
    name = path.rsplit("/", 1)[-1].split(".", 1)[0]
    if not name or name.lower() in _STEM_SKIP:
        return False
    words = split_words(name)
    if not words:
        return False
    return all(w in terms.stems for w in words)


_TEST = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs|e2e|fixtures?)(/|$)"  # a test folder, or a test file by its
    r"|(^|/)(test_[^/]*\.py|[^/]*_test\.[a-z]+|[^/]*\.(test|spec)\.[a-z]+|[^/]*_spec\.rb|conftest\.py)$"  # language's convention
)
"""Not any name with "test" in it: bats-core's library ``lib/bats-core/test_functions.bash`` is not a test."""
_VENDOR = re.compile(
    r"(^|/)(vendor|vendored|third_party|thirdparty|node_modules|dist|build|_vendor|external)(/|$)"
)
_DOCS = re.compile(r"(^|/)(docs?|_?examples?|benchmarks?|benches|docs_src)(/|$)")


_COMPAT = re.compile(r"(^|/)(compat|_compat|legacy|deprecated|v1)(/|\.[a-z]+$)")
_PRIVATE = re.compile(r"(^|/)_[A-Za-z][^/]*(/|\.py$)")


_NON_SOURCE: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    # CI and repository meta: workflows, issue templates
    (
        re.compile(r"(^|/)(\.github|\.circleci|\.gitlab|\.azure-pipelines|\.ci|ci)(/|$)|(^|/)\.travis\.yml$"),
        frozenset({"ci", "github", "workflow", "travis", "circleci", "pipeline", "template"}),
    ),
    # change logs and release notes
    (
        re.compile(
            r"(^|/)(changes|changelog|history|news|releases?|release[-_]notes|whatsnew|changelog\.d|upcoming_changes)"
            r"(/|$|\.(?:md|rst|txt|markdown)$)",
            re.I,
        ),
        frozenset({"changelog", "release", "news", "history", "whatsnew"}),
    ),
    # the scripts folder and Windows batch scripts (not every shell file: in a shell project
    # those are the source, bats-core's ``lib/`` or nvm's ``nvm.sh``)
    (
        re.compile(r"\.(bat|cmd|ps1)$|(^|/)scripts?/"),
        frozenset({"script", "shell", "bash", "sh", "zsh", "bat", "powershell"}),
    ),
    # build and packaging files, and the folders of developer extras
    (
        re.compile(
            r"(^|/)(Makefile|GNUmakefile|Dockerfile|[^/]*\.mk|tox\.ini|noxfile\.py|setup\.cfg|MANIFEST\.in)$|(^|/)extras/"
        ),
        frozenset(
            {"makefile", "make", "docker", "dockerfile", "tox", "nox", "build", "packaging", "manifest"}
        ),
    ),
    # test folders named for what they test (``js_tests/``, ``forms_tests/``)
    (re.compile(r"(^|/)[\w-]+_tests?/"), frozenset({"test", "spec", "fixture"})),
    # web assets of a theme or a static folder
    (
        re.compile(
            r"(^|/)(static|_static|themes?|_themes|assets|_templates)/(.*/)?[^/]*\.(js|mjs|css|scss|less|map)$"
        ),
        frozenset({"css", "javascript", "js", "theme", "style", "stylesheet", "static", "asset"}),
    ),
)
"""``RankingConfig.non_source_penalty``: kinds of files that are no source code, each with the
words of a query that asks for it."""


def non_source_kind(path: str) -> int | None:
    """The index in :data:`_NON_SOURCE` of the kind of non-source file ``path`` is, or None."""
    return next((i for i, (pattern, _asks) in enumerate(_NON_SOURCE) if pattern.search(path)), None)


def file_penalty(path: str, terms: QueryTerms, *, config: RankingConfig = DEFAULT) -> float:
    """A multiplier below 1 for tests, vendored, example and prose files, unless the query
    asks for them; the penalties multiply (a Markdown page under ``docs/`` gets both)."""
    asks = terms.stems
    penalty = 1.0
    if config.non_source_penalty != 1.0:
        kind = non_source_kind(path)
        if kind is not None and not (_NON_SOURCE[kind][1] & asks):
            penalty *= config.non_source_penalty
    if _VENDOR.search(path):
        penalty *= config.vendor_penalty
    if _TEST.search(path) and not ({"test", "spec", "fixture"} & asks):
        penalty *= config.test_penalty
    if _DOCS.search(path) and not ({"doc", "example", "benchmark"} & asks):
        penalty *= config.docs_penalty
    if path.rsplit(".", 1)[-1].lower() in config.prose_extensions and not (
        {"doc", "readme", "documentation"} & asks
    ):
        penalty *= config.prose_penalty
    if _COMPAT.search(path) and not ({"compat", "compatibility", "legacy"} & asks):
        penalty *= config.compat_penalty
    if _PRIVATE.search(path):
        penalty *= config.private_penalty
    return penalty


def frame_ranks(
    paths: Iterable[str], frames: Sequence[Frame]
) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """The files of ``paths`` that a stack trace's ``frames`` (innermost first) run through, by the
    trailing path components a frame shares with a file (``/venv/.../site-packages/pkg/x.py`` is
    ``src/pkg/x.py``: at least two, or the whole of a file at the top): (file -> its rank among
    the trace's distinct files, 0 where the error was raised; file -> function -> the rank of the
    first frame naming it). A frame matching no file, or two files equally well, is skipped (a
    user's script, another library)."""
    by_name: dict[str, list[list[str]]] = {}
    for p in paths:
        parts = p.split("/")
        by_name.setdefault(parts[-1], []).append(parts)
    files: dict[str, int] = {}
    functions: dict[str, dict[str, int]] = {}
    for i, frame in enumerate(frames):
        raw = [x for x in frame.path.replace("\\", "/").split("/") if x]
        if not raw:
            continue
        scored: list[tuple[int, str]] = []
        for parts in by_name.get(raw[-1], ()):
            n = 1
            while n < min(len(parts), len(raw)) and parts[-n - 1] == raw[-n - 1]:
                n += 1
            if n >= 2 or n == len(parts):
                scored.append((n, "/".join(parts)))
        if not scored:
            continue
        best = max(n for n, _ in scored)
        top = [p for n, p in scored if n == best]
        if len(top) != 1:
            continue
        files.setdefault(top[0], len(files))
        if frame.function:
            functions.setdefault(top[0], {}).setdefault(frame.function, i)
    return files, functions


def _frame_factor(rank: int, config: RankingConfig) -> float:
    """``RankingConfig.frame_boost``, decaying by ``frame_decay`` per rank outwards."""
    return 1.0 + (config.frame_boost - 1.0) * config.frame_decay**rank


_VERSION_DIR = re.compile(r"(^|/)v(\d+)/")


def superseded(paths: Iterable[str]) -> set[str]:
    """Paths under ``.../v<N>/`` when another path has ``.../v<M>/`` with M > N, same parent."""
    newest: dict[str, int] = {}
    found: list[tuple[str, str, int]] = []
    for p in paths:
        m = _VERSION_DIR.search(p)
        if m:
            parent, n = p[: m.start(2) - 1], int(m.group(2))
            found.append((p, parent, n))
            newest[parent] = max(newest.get(parent, n), n)
    return {p for p, parent, n in found if n < newest[parent]}


def fuse(
    legs: Mapping[str, Sequence[int]],
    meta: Mapping[int, ChunkMeta],
    terms: QueryTerms,
    *,
    path_leg: Sequence[str] = (),
    file_reps: Mapping[str, int] | None = None,
    limit: int = 10,
    view: str = "files",
    config: RankingConfig = DEFAULT,
    history_leg: Sequence[str] = (),
) -> list[Ranked]:
    """Fuse chunk legs (+ the file-level path and history legs) into a ranked list of chunks.

    ``view="files"``: the best chunk of each file in file order, then further chunks.
    ``view="code"``: chunks ranked on their own (a second function of the best file is not
    pushed below every other file), by chunk score times the file's penalty plus
    ``config.code_file_weight`` times the file's score.

    Chunks without ``meta`` (deleted since a leg was computed) are dropped. A file found
    only by the path leg enters through its representative chunk in ``file_reps``; the history
    leg adds to the files the others found.
    """
    k = config.rrf_k
    fused = rrf(legs, k=k, weights=config.leg_weights)
    framed: dict[str, dict[str, int]] = {}
    frame_file: dict[str, int] = {}
    if config.frame_boost != 1.0 and terms.frames:
        frame_file, framed = frame_ranks({m.path for m in meta.values()}, terms.frames)
    chunks: list[Ranked] = []
    for cid, (score, ranks) in fused.items():
        m = meta.get(cid)
        if m is None:
            continue
        if definition_match(m.symbol, terms, config=config):
            score *= config.definition_boost
        if stem_match(m.path, terms):
            score *= config.stem_boost
        if m.path in framed and m.symbol and m.symbol.rsplit(".", 1)[-1] in framed[m.path]:
            score *= _frame_factor(framed[m.path][m.symbol.rsplit(".", 1)[-1]], config)
        chunks.append(Ranked(cid, m.path, score, dict(ranks)))
    by_file: dict[str, list[Ranked]] = {}
    for r in chunks:
        by_file.setdefault(r.path, []).append(r)
    path_rank = {p: i + 1 for i, p in enumerate(dict.fromkeys(path_leg))}
    history_rank = {p: i + 1 for i, p in enumerate(dict.fromkeys(history_leg))}
    for path, cid in (file_reps or {}).items():
        if path not in by_file and path in path_rank and cid in meta:
            by_file[path] = [Ranked(cid, path, 0.0, {})]
    file_scores: dict[str, float] = {}
    for path, rs in by_file.items():
        rs.sort(key=lambda r: (-r.score, r.id))
        s = sum(r.score for r in rs[: config.top_chunks_per_file])
        if path in path_rank:
            s += config.path_leg_weight / (k + path_rank[path])
            for r in rs:
                r.ranks["path"] = path_rank[path]
        if path in history_rank:
            s += config.history_leg_weight / (k + history_rank[path])
            for r in rs:
                r.ranks["history"] = history_rank[path]
        s *= file_penalty(path, terms, config=config)
        if path in frame_file:
            s *= _frame_factor(frame_file[path], config)
        file_scores[path] = s
        for r in rs:
            r.file_score = s
    if config.superseded_penalty != 1.0:
        for path in superseded(by_file):
            file_scores[path] *= config.superseded_penalty
            for r in by_file[path]:
                r.file_score = file_scores[path]
    every = [r for rs in by_file.values() for r in rs]
    if view == "code" or config.ranker is not None:
        for r in every:
            r.code_score = (
                r.score * file_penalty(r.path, terms, config=config) + config.code_file_weight * r.file_score
            )
    if config.ranker is not None:
        _learned(
            config.ranker, by_file, file_scores, path_rank, frame_file, framed, meta, terms, view, config
        )
    if view == "code":
        every.sort(key=lambda r: (-r.code_score, r.id))
        return every[:limit]
    order = sorted(by_file, key=lambda p: (-file_scores[p], p))
    out: list[Ranked] = [by_file[p][0] for p in order]
    if len(out) < limit:
        rest = [r for p in order for r in by_file[p][1:]]
        rest.sort(key=lambda r: (-r.file_score, -r.score, r.id))
        out.extend(rest)
    return out[:limit]


def _learned(
    spec: str | Ranker,
    by_file: dict[str, list[Ranked]],
    file_scores: dict[str, float],
    path_rank: Mapping[str, int],
    frame_file: Mapping[str, int],
    framed: Mapping[str, Mapping[str, int]],
    meta: Mapping[int, ChunkMeta],
    terms: QueryTerms,
    view: str,
    config: RankingConfig,
) -> None:
    """``config.ranker`` scores the view's candidates from fusion's features (in place: the files
    view's ``file_scores`` and each chunk's ``file_score``, or each chunk's ``code_score``)."""
    from semantic import learned  # numpy and the model only when a ranker is set

    ranker = learned.load_ranker(spec) if isinstance(spec, str) else spec
    chunks: dict[int, learned.ChunkEvidence] = {}
    files: dict[str, learned.FileEvidence] = {}
    for path, rs in by_file.items():
        ext = path.rsplit(".", 1)[-1].lower()
        files[path] = learned.FileEvidence(
            penalty=file_penalty(path, terms, config=config),
            non_source=non_source_kind(path) is not None,
            test=bool(_TEST.search(path)),
            docs=bool(_DOCS.search(path)),
            prose=ext in config.prose_extensions,
            frame_rank=frame_file.get(path),
            stem_match=stem_match(path, terms),
        )
        for r in rs:
            m = meta.get(r.id)
            symbol = m.symbol if m is not None else None
            last = symbol.rsplit(".", 1)[-1] if symbol else None
            chunks[r.id] = learned.ChunkEvidence(
                def_match=definition_match(symbol, terms, config=config),
                frame_rank=framed.get(path, {}).get(last) if last else None,
                module_level=not symbol,
            )
    file_table, chunk_table = learned.tables(by_file, path_rank, chunks, files, terms)
    table = chunk_table if view == "code" else file_table
    scores = ranker.score(table)
    if scores is None:
        return
    if view == "code":
        by_id = {r.id: r for rs in by_file.values() for r in rs}
        for key, value in zip(table.keys, scores, strict=True):
            by_id[int(key)].code_score = float(value)
        return
    for key, value in zip(table.keys, scores, strict=True):
        path = str(key)
        file_scores[path] = float(value)
        for r in by_file[path]:
            r.file_score = float(value)
