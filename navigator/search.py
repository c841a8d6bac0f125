"""Natural-language and identifier search over the index: BM25 + vectors + symbol names + paths.

:class:`SemanticSearch` keeps the vector index in step with the ``chunks`` table and
answers ``search(text, k=…, paths=…, languages=…)`` with a fused, ranked list of chunks.

Freshness and speed:

- The lexical legs (BM25, symbol names, paths) work as soon as the indexer has run.
- :meth:`SemanticSearch.sync` embeds the chunks that have no vector yet. Vectors are
  cached in SQLite by (model id, embedding key): the key hashes the chunk's content hash
  with its header (path, symbol, signature), so an unchanged chunk is never embedded
  twice and a revert or branch switch costs only chunks never seen before.
- A search never embeds chunks and never waits for the model: it drops vectors of
  changed chunks, adds vectors another process has cached, and answers with what exists.
  The model is loaded only to encode the query, and only when vectors exist; while
  vectors are missing the response says ``complete=False`` and how many. Embedding
  happens in ``nav index --embed``, the daemon's background loop or :meth:`sync`.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from navigator.code_order import CODE_DEPTH, ORDER_KINDS, learned_code_view, load_model
from navigator.pipeline import (
    VIEWS,
    Candidates,
    ChunkText,
    Definition,
    Feedback,
    PathIndex,
    chunk_hit,
    code_view,
    code_view_depth,
    feedback_words,
    path_candidates,
    rank,
    unlisted,
)
from navigator.results import Response, SearchHit
from navigator.vector_sync import SyncProgress, SyncReport, VectorSync, embed_key, eta_note
from semantic.analysis import QueryTerms, query_terms
from semantic.embed import Embedder
from semantic.fusion import ChunkMeta, Ranked
from semantic.history import history_files
from semantic.lexical import (
    bm25_chunks,
    cap_terms,
    content_query,
    doc_freqs,
    identifier_chunks,
    symbol_chunks,
)
from semantic.path_leg import named_files
from semantic.ranking import DEFAULT, RankingConfig
from storage.db import Store
from storage.errors import IndexDamagedError, IndexIOError, StorageError
from storage.query import HistoryQueries, KindedDefinition, Scope
from storage.tokens import fts_query

log = logging.getLogger(__name__)

__all__ = ["LEGS", "VIEWS", "SemanticSearch", "SyncProgress", "SyncReport", "embed_key", "feedback_words"]
# ``feedback_words`` and ``VIEWS`` live in navigator.pipeline (the pipeline's pure core), the
# vectors' part (``SyncReport``, ``embed_key``) in navigator.vector_sync; named here too.

LEGS = ("bm25", "vector", "symbols", "path")
_WITH_BM25 = ("ident", "title", "title_symbols")
"""Legs of a long query's names and title: lexical, they run when the ``bm25`` leg is asked for."""

_T = TypeVar("_T")


def _leg_or_problem(leg: str, run: Callable[[], _T], empty: _T, problems: list[str] | None) -> _T:
    """A lexical leg's answer; the index failing under it (locked, a table missing), ``empty``
    with why appended to ``problems``: a failed leg makes the answer incomplete, never silently
    empty and complete. Damage and I/O errors go up, for the Navigator reopens or rebuilds the
    index and asks again; so does any error when the caller keeps no ``problems``."""
    try:
        return run()
    except (IndexDamagedError, IndexIOError):
        raise
    except StorageError as exc:
        if problems is None:
            raise
        log.warning("%s leg failed: %s", leg, exc)
        problems.append(f"{leg} leg unavailable: {exc}")
        return empty


class SemanticSearch(VectorSync):
    """Search over one index database: its vectors (:class:`navigator.vector_sync.VectorSync`)
    and lexical legs, fused by the pipeline core (:mod:`navigator.pipeline`). Sync methods; one
    writer at a time (a lock)."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None = None,
        model: str | Path | None = None,
        vectors_dir: Path | None = None,
        depth: int | None = None,
        share_with: SemanticSearch | None = None,
        config: RankingConfig = DEFAULT,
    ) -> None:
        """``share_with``: another instance over the same index (another thread's SQLite
        connection) whose model, vectors and lock this one uses too. ``config``: how this
        instance ranks (``depth``, when given, replaces ``config.depth``)."""
        super().__init__(
            store, embedder=embedder, model=model, vectors_dir=vectors_dir, share_with=share_with
        )
        self.config = config if depth is None else dataclasses.replace(config, depth=depth)
        self.depth = self.config.depth
        self._path_cache: tuple[tuple[int, float], PathIndex] | None = None
        self.history: HistoryQueries | None = store if isinstance(store, HistoryQueries) else None
        """Where the history leg reads past commits (``RankingConfig.history_leg``): the index."""

    # -- search ------------------------------------------------------------------------------

    def _path_index(self) -> PathIndex:
        """The indexed files as the path leg reads them, read again when a file changes."""
        key = self.store.files_signature()
        if self._path_cache is None or self._path_cache[0] != key:
            self._path_cache = (key, PathIndex.of(self.store.file_paths()))
        return self._path_cache[1]

    def _allowed_ids(self, paths: Sequence[str] | None, languages: Sequence[str] | None) -> list[int] | None:
        if not paths and not languages:
            return None
        return self.store.chunk_ids(Scope.of(paths, languages))

    def legs(
        self,
        terms: QueryTerms,
        *,
        paths: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        use_vectors: bool = True,
        problems: list[str] | None = None,
        depth: int | None = None,
        bm25_scores: dict[int, float] | None = None,
    ) -> tuple[dict[str, list[int]], list[str]]:
        """Every leg's ranked candidates: ({leg: [chunk id, ...]}, path leg files).

        A model that cannot encode the query drops the vector leg and appends why to ``problems``;
        so does the index failing under a lexical leg (see :func:`_leg_or_problem`).
        ``bm25_scores``, when given, receives the BM25 scores of the best ``config.prf_base`` chunks
        (the feedback leg adds to them)."""
        store = self.store
        cfg = self.config
        depth = max(self.depth, depth or 0)
        files = self._path_index()
        named = named_files(list(files.words), terms.paths, index=files.basenames) if terms.paths else []
        limit = depth if bm25_scores is None else max(depth, cfg.prf_base)
        bm25: list[tuple[int, float]] = _leg_or_problem(
            "bm25",
            lambda: bm25_chunks(
                store, terms, limit=limit, paths=paths, languages=languages, weights=cfg.bm25_weights
            ),
            [],
            problems,
        )
        if bm25_scores is not None:
            bm25_scores.update(bm25)
        symbols: list[tuple[int, float]] = _leg_or_problem(
            "symbols",
            lambda: symbol_chunks(
                store,
                terms,
                limit=depth,
                paths=paths,
                languages=languages,
                named=named,
                skip_kinds=cfg.word_skip_kinds,
            ),
            [],
            problems,
        )
        out: dict[str, list[int]] = {"bm25": [i for i, _ in bm25[:depth]], "symbols": [i for i, _ in symbols]}
        if cfg.identifier_leg and terms.long:
            out["ident"] = _leg_or_problem(
                "ident",
                lambda: identifier_chunks(
                    store, terms, limit=depth, paths=paths, languages=languages, weights=cfg.bm25_weights
                ),
                [],
                problems,
            )
        if cfg.title_leg and terms.long and terms.title:
            out.update(self._title_legs(terms.title, depth, paths, languages, problems))

        index = self._index
        if use_vectors and index is not None and len(index):
            allowed = self._allowed_ids(paths, languages)
            try:
                qv = self.embedder.embed_query(terms.text)  # bounded threads: see SentenceTransformerEmbedder
            except Exception as exc:  # a broken model must not take lexical search down
                log.warning("query encoding failed: %s", exc)
                if problems is not None:
                    problems.append(f"vector leg unavailable: {exc}")
            else:
                out["vector"] = [i for i, _ in index.search(qv, depth, allowed=allowed)]
        keep = None
        if paths or languages:
            keep = set(store.file_paths(Scope.of(paths, languages))).__contains__
        return out, path_candidates(files, terms, depth=depth, keep=keep, config=cfg)

    def _title_legs(
        self,
        title: str,
        depth: int,
        paths: Sequence[str] | None,
        languages: Sequence[str] | None,
        problems: list[str] | None,
    ) -> dict[str, list[int]]:
        """A long query's ``title`` and ``title_symbols`` legs (``RankingConfig.title_leg``): its
        title searched as a short query by BM25 and by symbol names (:func:`semantic.analysis.issue_title` keeps
        only a line that analyses as a short query with words)."""
        store, cfg = self.store, self.config
        short = query_terms(title, config=cfg)
        bm25: list[tuple[int, float]] = _leg_or_problem(
            "title",
            lambda: bm25_chunks(
                store, short, limit=depth, paths=paths, languages=languages, weights=cfg.bm25_weights
            ),
            [],
            problems,
        )
        symbols: list[tuple[int, float]] = _leg_or_problem(
            "title_symbols",
            lambda: symbol_chunks(
                store, short, limit=depth, paths=paths, languages=languages, skip_kinds=cfg.word_skip_kinds
            ),
            [],
            problems,
        )
        return {"title": [i for i, _ in bm25], "title_symbols": [i for i, _ in symbols]}

    def _history_leg(
        self,
        terms: QueryTerms,
        depth: int,
        paths: Sequence[str] | None,
        languages: Sequence[str] | None,
        problems: list[str] | None,
    ) -> list[str]:
        """The file-level ``history`` leg (``RankingConfig.history_leg``): files credited by the past
        commits whose messages match the query's BM25 MATCH (:func:`semantic.history.history_files`)."""
        cfg, source = self.config, self.history
        if source is None:
            return []
        match = content_query(terms)
        if not match:
            return []
        commits: list[tuple[float, list[str]]] = _leg_or_problem(
            "history",
            lambda: source.history_commits(
                match,
                limit=cfg.history_commits,
                max_files=cfg.history_max_files,
                scope=Scope.of(paths, languages),
            ),
            [],
            problems,
        )
        return history_files(commits, limit=depth)

    def _feedback_leg(
        self,
        terms: QueryTerms,
        top: Sequence[int],
        bm25_scores: dict[int, float],
        depth: int,
        paths: Sequence[str] | None,
        languages: Sequence[str] | None,
    ) -> list[int]:
        """The ``prf`` leg (see :func:`feedback_words`): BM25 over the query's words and the words
        its first ranking's best chunks share. FTS5's BM25 is a sum over the MATCH's terms, so
        the query's part is the ``bm25`` leg's own scores (its best ``config.prf_base``) and only
        the shared words are searched again: the query's common words are not read twice."""
        cfg = self.config
        if len(top) < cfg.prf_min_docs:
            return []
        store = self.store
        docs = store.chunk_words(list(top))
        picked = feedback_words(
            docs,
            terms,
            lambda words, cap: doc_freqs(store, words, cap=cap, config=cfg),
            self._chunk_count,
            config=cfg,
        )
        if not picked:
            return []
        shared_only = dataclasses.replace(terms, match=fts_query(" ".join(picked)))
        total = dict(bm25_scores)
        extra = bm25_chunks(
            store, shared_only, limit=cfg.prf_base, paths=paths, languages=languages, weights=cfg.bm25_weights
        )
        for cid, score in extra:
            total[cid] = total.get(cid, 0.0) + score
        return sorted(total, key=lambda c: (-total[c], c))[:depth]

    def _chunk_count(self) -> int:
        return self.store.chunk_count()

    def _meta(self, ids: Sequence[int]) -> dict[int, ChunkMeta]:
        return {
            i: ChunkMeta(p.id, p.path, p.symbol, p.start_line)
            for i, p in self.store.chunk_places(ids).items()
        }

    def _first_chunks(self, paths: Sequence[str]) -> dict[str, int]:
        return self.store.first_chunks(paths)

    def _chunk_hits(self, ranked: Sequence[Ranked]) -> list[SearchHit]:
        rows = self.store.chunks_by_ids([r.id for r in ranked])
        return [chunk_hit(r, rows[r.id]) for r in ranked if r.id in rows]

    def _code_hits(
        self,
        ranked: Sequence[Ranked],
        terms: QueryTerms,
        k: int,
        definitions: dict[str, list[KindedDefinition]] | None = None,
    ) -> list[SearchHit]:
        """The code view (:func:`navigator.pipeline.code_view`) of the ranked chunks, with the
        definitions of ``config.code_kinds`` that overlap each of the best. ``definitions``: the
        files' definitions read so far (of those kinds and the learned order's), added to."""
        code_kinds = self.config.code_kinds
        top = ranked[: code_view_depth(k)]
        rows = self.store.chunks_by_ids([r.id for r in top])
        found = [(r, rows[r.id]) for r in top if r.id in rows]
        memo: dict[str, list[KindedDefinition]] = {} if definitions is None else definitions
        missing = list(dict.fromkeys(row.path for _r, row in found if row.path not in memo))
        if missing:
            got = self.store.definitions_of(missing, kinds=tuple(dict.fromkeys((*code_kinds, *ORDER_KINDS))))
            memo.update({p: got.get(p, []) for p in missing})
        read: list[tuple[Ranked, ChunkText, Sequence[Definition]]] = [
            (
                r,
                row,
                [
                    (d.qualified_name, d.start_line, d.end_line, d.signature)
                    for d in memo[row.path]
                    if d.kind in code_kinds and d.end_line >= row.start_line and d.start_line <= row.end_line
                ],
            )
            for r, row in found
        ]
        return code_view(read, terms, k, config=self.config)

    def search(
        self,
        text: str,
        *,
        k: int = 10,
        paths: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        legs: Sequence[str] = LEGS,
        view: str = "files",
        embed_budget_s: float | None = None,
    ) -> Response[SearchHit]:
        """Fused search. ``legs`` selects which legs run (all by default; for benchmarks).

        ``view="files"`` (default): the best chunk of each file first, files ranked — where to
        look. ``view="code"``: the definitions to read or edit, ranked on their own, so two
        functions of one file can both lead; each hit is one definition (its lines, name and
        signature). Every leg takes at least ``k`` candidates; when the legs together find
        fewer than ``k``, the response has fewer items and says so in its notes.

        Never embeds chunks (see the module's doc); ``embed_budget_s`` is accepted and
        ignored, for callers written when a search could embed."""
        t0 = time.perf_counter()
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"search text must be a non-empty string, got {text!r}")
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if view not in VIEWS:
            raise ValueError(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
        notes: list[str] = []
        complete = True
        reason: str | None = None
        use_vectors = "vector" in legs
        if use_vectors:
            try:
                have, total = self.refresh()
            except Exception as exc:  # a broken vector file must not take lexical search down
                log.warning("vector refresh failed: %s", exc)
                notes.append(f"vector leg unavailable: {exc}")
                complete, reason, use_vectors = False, f"vector leg unavailable: {exc}", False
            else:
                use_vectors = have > 0
                if have < total:
                    pct = 100.0 * have / max(total, 1)
                    complete = False
                    reason = (
                        f"vectors for {have}/{total} chunks ({pct:.0f}%){eta_note(total - have, self.embed_rate())}; "
                        "the rest is searched by BM25, symbol names and paths; run `nav index --embed`"
                    )
        cfg = self.config
        problems: list[str] = []
        plain = query_terms(text, config=cfg)
        terms = _leg_or_problem(
            "long-query word weights", lambda: cap_terms(self.store, plain, config=cfg), plain, problems
        )
        feedback = bool(cfg.prf_terms) and "bm25" in legs and not terms.long
        bm25_scores: dict[int, float] | None = {} if feedback else None
        chunk_legs, path_leg = self.legs(
            terms,
            paths=paths,
            languages=languages,
            use_vectors=use_vectors,
            problems=problems,
            depth=k,
            bm25_scores=bm25_scores,
        )
        history: list[str] = []
        if cfg.history_leg and "bm25" in legs:
            history = self._history_leg(terms, max(self.depth, k), paths, languages, problems)
        if problems:
            notes.extend(problems)
            complete, reason = False, "; ".join(problems)
        # a long query's ``ident`` and title legs are lexical: they run with the ``bm25`` leg
        chunk_legs = {
            n: ids for n, ids in chunk_legs.items() if n in legs or (n in _WITH_BM25 and "bm25" in legs)
        }
        if "path" not in legs:
            path_leg = []
        cand = {i for ids in chunk_legs.values() for i in ids}
        meta = self._meta(list(cand))
        reps = self._first_chunks(unlisted(path_leg, meta, config=cfg))
        meta.update(self._meta([i for i in reps.values() if i not in meta]))
        cands = Candidates(chunk_legs, meta, path_leg, reps, history)
        prf: Feedback | None = None
        if bm25_scores is not None:
            scores = bm25_scores

            def prf(best: Sequence[int]) -> tuple[list[int], dict[int, ChunkMeta]]:
                ids: list[int] = _leg_or_problem(
                    "prf",
                    lambda: self._feedback_leg(terms, best, scores, max(self.depth, k), paths, languages),
                    [],
                    problems,
                )
                return ids, self._meta([i for i in ids if i not in cands.meta])

        learned = view == "code" and cfg.code_order is not None
        if learned:  # both views of one set of legs (the feedback leg runs once, for both)
            files_ranked = rank(cands, terms, k=max(k, CODE_DEPTH), view="files", config=cfg, feedback=prf)
            ranked = rank(cands, terms, k=k, view="code", config=cfg)
        else:
            ranked = rank(cands, terms, k=k, view=view, config=cfg, feedback=prf)
        if problems:  # the feedback leg's, when the index failed under it
            notes.extend(p for p in problems if p not in notes)
            complete, reason = False, "; ".join(problems)
        if learned:
            model = load_model(None if cfg.code_order == "learned" else cfg.code_order)
            none: list[SearchHit] = []
            definitions: dict[str, list[KindedDefinition]] = {}  # read once for both
            failed_before = len(problems)
            hits = _leg_or_problem(
                "code order",
                lambda: learned_code_view(
                    self.store,
                    terms,
                    text,
                    self._chunk_hits(files_ranked),
                    self._code_hits(ranked, terms, max(k, CODE_DEPTH), definitions),
                    k,
                    model=model,
                    definitions=definitions,
                ),
                none,
                problems,
            )
            if len(problems) > failed_before:  # the order failed under the index: the fused code view
                notes.extend(p for p in problems if p not in notes)
                complete, reason = False, "; ".join(problems)
                hits = self._code_hits(ranked, terms, k)
        else:
            hits = self._code_hits(ranked, terms, k) if view == "code" else self._chunk_hits(ranked)
        if len(hits) < k:
            notes.append(f"{len(hits)} results: every match of every leg is listed (k={k} asked)")
        return Response(
            items=tuple(hits),
            complete=complete,
            reason=reason,
            source="index",
            elapsed_ms=(time.perf_counter() - t0) * 1000.0,
            notes=tuple(notes),
        )
