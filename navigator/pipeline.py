"""The search pipeline's pure core, shared by the local index and the team store.

A search runs in three steps; only the first touches a store:

1. **Legs.** The store's adapter gathers each chunk leg's ranked chunks into :class:`Candidates`
   (:class:`navigator.search.SemanticSearch` over SQLite, :class:`navigator.team.TeamStore` over
   PostgreSQL); chunk ids are the adapter's own. The path leg is the same for both
   (:func:`path_candidates` over the store's :class:`PathIndex`, then :func:`unlisted` names the files
   it alone found, which the adapter lists by a representative chunk).
2. **Ranking** (:func:`rank`): an optional feedback step (the best few of a first fusion seed one
   more leg: :func:`feedback_words` picks the words, the adapter runs the leg), then :func:`semantic.fusion.fuse` in the asked view, all
   under one :class:`semantic.ranking.RankingConfig`.
3. **View.** The files view lists the fused chunks (:func:`chunk_hit`); the code view
   (:func:`code_view`) turns ranked chunks into ranked definitions from the definitions the
   adapter read for them.

Nothing here does I/O: every function is over plain values and callables the adapter passes.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from navigator.results import SearchHit
from semantic.analysis import STOPWORDS, QueryTerms, path_words, stem
from semantic.fusion import ChunkMeta, Ranked, definition_match, fuse
from semantic.path_leg import by_basename, by_path_word, path_files
from semantic.ranking import DEFAULT, RankingConfig
from storage.tokens import split_words

__all__ = [
    "VIEWS",
    "Candidates",
    "ChunkText",
    "Definition",
    "Feedback",
    "PathIndex",
    "chunk_hit",
    "code_view",
    "code_view_depth",
    "feedback_words",
    "path_candidates",
    "rank",
    "snippet",
    "unlisted",
]

VIEWS = ("files", "code")

Definition = tuple[str | None, int, int, str | None]
"""A definition inside or around a chunk: (qualified name, start line, end line, signature)."""


class ChunkText(Protocol):
    """A chunk as the views read it (the local index's ``ChunkRow``, the team store's ``ChunkLoc``)."""

    @property
    def path(self) -> str: ...

    @property
    def language(self) -> str | None: ...

    @property
    def start_line(self) -> int: ...

    @property
    def end_line(self) -> int: ...

    @property
    def symbol(self) -> str | None: ...

    @property
    def signature(self) -> str | None: ...

    @property
    def text(self) -> str: ...


@dataclass(slots=True)
class Candidates:
    """What the legs found, for fusion: chunk legs (ids best first), the file-level path leg,
    and what fusion needs to know of each chunk."""

    legs: dict[str, list[int]]
    meta: dict[int, ChunkMeta]
    path_leg: list[str] = field(default_factory=list)
    reps: dict[str, int] = field(default_factory=dict)
    """A file found by the path leg alone -> the chunk it is listed by."""
    history: list[str] = field(default_factory=list)
    """The file-level history leg (``RankingConfig.history_leg``), best first."""


@dataclass(frozen=True, slots=True)
class PathIndex:
    """A store's files as the path leg reads them: each path's words, and two lookups."""

    words: dict[str, set[str]]
    """path -> the words of its folders and file name (:func:`semantic.analysis.path_words`)."""
    basenames: dict[str, list[str]]
    """file name -> the paths of that name."""
    postings: dict[str, list[str]]
    """path word -> the paths holding it."""

    @classmethod
    def of(cls, paths: Mapping[str, str] | Sequence[str]) -> PathIndex:
        """The index of ``paths`` (or of a mapping key -> the path whose words it has: the team
        store keys ``repo/path`` by the path alone, its repository's name is no path word)."""
        named = paths if isinstance(paths, Mapping) else {p: p for p in paths}
        words = {key: path_words(p) for key, p in named.items()}
        return cls(words, by_basename(list(words)), by_path_word(words))


def path_candidates(
    index: PathIndex,
    terms: QueryTerms,
    *,
    depth: int,
    keep: Callable[[str], bool] | None = None,
    config: RankingConfig = DEFAULT,
) -> list[str]:
    """The path leg: files whose path words are the query's, rarest words weighing most, best
    first (files the query names by path lead); ``keep``: only the files it keeps (a scope)."""
    if keep is None:
        ranked = path_files(
            index.words, terms, limit=depth, basenames=index.basenames, postings=index.postings, config=config
        )
    else:
        ranked = path_files(
            {p: w for p, w in index.words.items() if keep(p)}, terms, limit=depth, config=config
        )
    return [p for p, _ in ranked]


def unlisted(
    path_leg: Sequence[str], meta: Mapping[int, ChunkMeta], *, config: RankingConfig = DEFAULT
) -> list[str]:
    """The path leg's best ``config.path_listed`` files no chunk leg found: fusion lists each by
    a representative chunk (:attr:`Candidates.reps`, the adapter's choice: its first)."""
    listed = {m.path for m in meta.values()}
    return [p for p in path_leg[: config.path_listed] if p not in listed]


Feedback = Callable[[Sequence[int]], tuple[list[int], Mapping[int, ChunkMeta]]]
"""The feedback leg: given the first fusion's best chunk ids, the ``prf`` leg's ids, best first,
and the meta of those not among the candidates yet."""


# The feedback leg ``prf`` (``RankingConfig.prf_terms`` and the ``prf_*`` settings):
# pseudo-relevance feedback. The words most shared by the first ranking's best ``prf_docs``
# chunks (in at least ``prf_min_docs`` of them, not the query's, weighted by their rarity in the
# index) join the query's words in one more BM25 leg, ``prf``, fused at ``leg_weights["prf"]``
# (0.5). Short queries only; ``prf_terms=0`` turns it off. It finds the code that shares the best
# hits' vocabulary without the query's words: measured on development data, then once on both
# check sets (bench/README.md, "pseudo-relevance feedback"): issue localization file Acc@5 +0.024
# [+0.006, +0.048] on 166 development instances, semble's benchmark unchanged.
_PRF_WORD = re.compile(r"[a-z][a-z0-9]{2,}")


def feedback_words(
    docs: Iterable[tuple[str | None, str | None]],
    terms: QueryTerms,
    doc_freqs_of: Callable[[list[str], int], dict[str, int]],
    chunk_count: Callable[[], int],
    *,
    config: RankingConfig = DEFAULT,
) -> list[str]:
    """The words a ``prf`` leg adds to the query (``config.prf_terms`` of them), best first: words
    of the first ranking's best chunks (``docs``: their (symbol, text)) present in at least
    ``config.prf_min_docs`` of them, neither asked by the query nor stopwords, weighted by
    count * log(n / df) among the ``chunk_count()`` chunks of the index; a word in more than
    ``config.prf_max_df`` of them is dropped. ``doc_freqs_of(words, cap)`` counts each word's chunks
    up to ``cap + 1`` (the local index: FTS5)."""
    counts: dict[str, int] = {}
    n_docs = 0
    for sym, text in docs:
        n_docs += 1
        for w in set(_PRF_WORD.findall(f"{sym or ''} {text or ''}".lower())):
            counts[w] = counts.get(w, 0) + 1
    if n_docs < config.prf_min_docs or not config.prf_terms:
        return []
    asked = terms.stems | terms.said  # every spelling of every word the query says
    shared = sorted(
        (w for w, c in counts.items() if c >= config.prf_min_docs and w not in asked and w not in STOPWORDS),
        key=lambda w: (-counts[w], w),
    )[: 4 * config.prf_terms]
    if not shared:
        return []
    n = max(1, chunk_count())
    cap = max(1, int(config.prf_max_df * n))
    df = doc_freqs_of(shared, cap)
    weight = {w: counts[w] * math.log(n / df[w]) for w in shared if 0 < df.get(w, 0) <= cap}
    return sorted(weight, key=lambda w: (-weight[w], w))[: config.prf_terms]


def rank(
    cands: Candidates,
    terms: QueryTerms,
    *,
    k: int,
    view: str = "files",
    config: RankingConfig = DEFAULT,
    feedback: Feedback | None = None,
) -> list[Ranked]:
    """Fuse the candidates in ``view``: the best ``k`` chunks of the files view, or every
    candidate ranked for the code view (which :func:`code_view` cuts to ``k`` definitions).

    With ``feedback``, a first fusion's best ``config.prf_docs`` chunks seed the ``prf`` leg,
    which joins the others (``cands`` is updated in place)."""
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")

    def fused(limit: int, how: str = "files", cfg: RankingConfig = config) -> list[Ranked]:
        return fuse(
            cands.legs,
            cands.meta,
            terms,
            path_leg=cands.path_leg,
            file_reps=cands.reps,
            history_leg=cands.history,
            limit=limit,
            view=how,
            config=cfg,
        )

    if feedback is not None and cands.legs:
        # the hand-tuned fusion seeds the feedback leg (a learned ranker orders the final
        # candidates, those it was trained on: seeded so)
        seed = config if config.ranker is None else dataclasses.replace(config, ranker=None)
        prf, meta = feedback([r.id for r in fused(config.prf_docs, cfg=seed)])
        if prf:
            cands.legs = {**cands.legs, "prf": prf}
            cands.meta.update(meta)
    if view == "code":
        return fused(len(cands.meta), "code")
    return fused(k)


_SNIPPET_LINES = 8


def snippet(text: str) -> str:
    """A hit's first lines: leading blank lines dropped, at most eight."""
    return snippet_at(text, 1)[0]


def snippet_at(text: str, first_line: int) -> tuple[str, int]:
    """:func:`snippet` of ``text`` whose first line is file line ``first_line``, and the file
    line the snippet starts at (after the blank lines it drops)."""
    lines = [ln.rstrip() for ln in text.splitlines()]
    dropped = 0
    while lines and not lines[0].strip():
        lines.pop(0)
        dropped += 1
    return "\n".join(lines[:_SNIPPET_LINES]), first_line + dropped


def chunk_hit(r: Ranked, row: ChunkText) -> SearchHit:
    """A files-view hit: the chunk, scored by its file."""
    text, at = snippet_at(row.text, row.start_line)
    return SearchHit(
        path=row.path,
        start_line=row.start_line,
        end_line=row.end_line,
        symbol=row.symbol,
        signature=row.signature,
        snippet=text,
        score=round(r.file_score, 6),
        language=row.language,
        ranks=dict(r.ranks),
        snippet_line=at,
    )


_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@functools.lru_cache(maxsize=32_768)
def _line_words(line: str) -> frozenset[str]:
    """The words of one line's identifiers (a code view splits the same lines for every query)."""
    return frozenset(w for t in _WORDS.findall(line) for w in split_words(t))


def _own_match(qualified: str, lines: Sequence[str], terms: QueryTerms) -> float:
    """How much of the query one definition's own lines match (a definition the query names
    matches fully): the share of the query's words found among its words."""
    last = qualified.rsplit(".", 1)[-1]
    if any(ident.rsplit(".", 1)[-1] == last for ident in terms.identifiers):
        return 1.0
    if not terms.words:
        return 0.0
    toks = set(split_words(last)).union(*map(_line_words, lines))
    return sum(1 for w, st in _word_stems(terms.words) if w in toks or st in toks) / len(terms.words)


@functools.lru_cache(maxsize=256)
def _word_stems(words: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """A query's words with their stems (the code view matches every definition against them)."""
    return tuple((w, stem(w)) for w in words)


def _named_at(qualified: str, terms: QueryTerms, config: RankingConfig) -> int:
    """Where the query names this definition (its position among the query's identifiers,
    strongest first), else after them all; a definition matched by words comes next."""
    last = qualified.rsplit(".", 1)[-1]
    for pos, ident in enumerate(terms.identifiers):
        if ident == qualified or ident.rsplit(".", 1)[-1] == last:
            return pos
    return len(terms.identifiers) + (0 if definition_match(qualified, terms, config=config) else 1)


def _leaves(inside: Sequence[Definition]) -> list[Definition]:
    """The definitions of ``inside`` that hold no other (two of one span hold each other), in
    their order: each is checked against those starting within it, by start line."""
    order = sorted(range(len(inside)), key=lambda i: int(inside[i][1]))
    starts = [int(inside[i][1]) for i in order]
    leaf = [True] * len(inside)
    for i, d in enumerate(inside):
        s, e = int(d[1]), int(d[2])
        j = bisect.bisect_left(starts, s)
        while j < len(order) and starts[j] <= e:
            o = inside[order[j]]
            if o is not d and int(o[2]) <= e:
                leaf[i] = False
                break
            j += 1
    return [d for i, d in enumerate(inside) if leaf[i]]


def code_view_depth(k: int) -> int:
    """How many of the ranked chunks the code view reads definitions for."""
    return max(3 * k, 30)


def code_view(
    ranked: Sequence[tuple[Ranked, ChunkText, Sequence[Definition]]],
    terms: QueryTerms,
    k: int,
    *,
    config: RankingConfig = DEFAULT,
) -> list[SearchHit]:
    """Ranked chunks -> ranked definitions. ``ranked``: the best :func:`code_view_depth` chunks
    of :func:`rank`'s code view, each with its text and the definitions of
    ``config.code_kinds`` that overlap it, in line order.

    Per chunk, the innermost definitions that start in it (those the query names first, in the
    order it names them, then in line order), else the definition around it, else the chunk
    itself. A definition out of a chunk of several scores by how much of the query its own
    lines match (``config.code_split_decay``); each definition is listed once, at its best."""
    scored: list[
        tuple[float, int, tuple[Ranked, ChunkText, list[str], int, str | None, int, int, str | None]]
    ] = []
    seen: set[tuple[str, int]] = set()
    decay = config.code_split_decay
    named_at: dict[str, int] = {}

    def named(qualified: str) -> int:
        got = named_at.get(qualified)
        if got is None:
            got = named_at[qualified] = _named_at(qualified, terms, config)
        return got

    for r, row, defs in ranked:
        inside = [d for d in defs if d[1] >= row.start_line]
        leaves = _leaves(inside)
        if leaves:
            chosen = sorted(leaves, key=lambda d: (named(str(d[0])), d[1]))
        else:
            around = [d for d in defs if d[1] <= row.start_line and d[2] >= row.end_line]
            chosen = [min(around, key=lambda d: d[2] - d[1])] if around else []
        lines = row.text.splitlines()
        if not chosen:
            chosen = [(row.symbol, row.start_line, row.end_line, row.signature)]
        own = (
            [
                _own_match(
                    str(d[0] or ""),
                    lines[max(int(d[1]), row.start_line) - row.start_line : int(d[2]) - row.start_line + 1],
                    terms,
                )
                for d in chosen
            ]
            if len(chosen) > 1
            else [1.0]  # a chunk's one definition scores as the chunk: no own match needed
        )
        best = max(own) or 1.0
        for (qn, s_line, e_line, sig), mine in zip(chosen, own, strict=True):
            key = (row.path, int(s_line))
            if key in seen:
                continue
            seen.add(key)
            lo = max(int(s_line), row.start_line) - row.start_line
            score = r.code_score * (decay + (1.0 - decay) * mine / best) if len(chosen) > 1 else r.code_score
            scored.append((score, len(scored), (r, row, lines, lo, qn, int(s_line), int(e_line), sig)))
    scored.sort(key=lambda t: (-t[0], t[1]))
    out: list[SearchHit] = []
    for score, _n, (r, row, lines, lo, qn, s_line, e_line, sig) in scored[:k]:  # snippets of those listed
        text, at = snippet_at("\n".join(lines[lo:]), row.start_line + lo)
        out.append(
            SearchHit(
                path=row.path,
                start_line=s_line,
                end_line=e_line,
                symbol=qn,
                signature=sig,
                snippet=text,
                score=round(score, 6),
                language=row.language,
                ranks=dict(r.ranks),
                snippet_line=at,
            )
        )
    return out
