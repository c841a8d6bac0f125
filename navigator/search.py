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
import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

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
from semantic.embed import Embedder, embedding_text, load_embedder
from semantic.fusion import ChunkMeta, Ranked
from semantic.lexical import (
    QueryTerms,
    bm25_chunks,
    cap_terms,
    doc_freqs,
    named_files,
    query_terms,
    symbol_chunks,
)
from semantic.ranking import DEFAULT, RankingConfig
from semantic.vectors import VectorIndex
from storage.db import Store
from storage.errors import IndexDamagedError, IndexIOError, StorageError
from storage.query import Scope
from storage.tokens import fts_query

log = logging.getLogger(__name__)

__all__ = ["LEGS", "VIEWS", "SemanticSearch", "SyncReport", "embed_key", "feedback_words"]
# ``feedback_words`` and ``VIEWS`` live in navigator.pipeline (the pipeline's pure core); named here too.

LEGS = ("bm25", "vector", "symbols", "path")

SyncProgress = Callable[[int, int], None]
"""Called as ``progress(embedded_so_far, to_embed)`` during :meth:`SemanticSearch.sync`."""


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


def embed_key(content_hash: str, path: str, symbol: str | None, signature: str | None) -> str:
    """The cache key of a chunk's vector: its content and the header it is embedded with."""
    h = hashlib.blake2b(digest_size=16)
    for part in (content_hash, path, symbol or "", signature or ""):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class SyncReport:
    chunks: int
    """Chunks in the index."""
    vectors: int
    """Chunks with a vector after the sync."""
    embedded: int
    """Texts run through the model in this sync."""
    from_cache: int
    removed: int
    seconds: float

    @property
    def complete(self) -> bool:
        return self.vectors >= self.chunks


_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


class _Shared:
    """What instances over the same index share: the model, the vectors, one lock."""

    def __init__(self, *, embedder: Embedder | None, model: str | Path | None) -> None:
        self.embedder = embedder
        self.model = model
        self.index: VectorIndex | None = None
        self.lock = threading.RLock()
        self.synced: tuple[object, ...] | None = None
        """(chunks signature, model id, vectors) of the last complete sync."""
        self.in_flight: set[str] = set()
        """Embedding keys a sync is embedding right now (outside the lock)."""
        self.refreshed: tuple[tuple[object, ...], tuple[int, int]] | None = None
        """(state, (vectors, chunks)) of the last search-time refresh."""
        self.keys: tuple[tuple[object, ...], dict[int, str]] | None = None
        """(chunks signature, chunk id -> embedding key): recomputed only when chunks change."""
        self.file_stamp: tuple[int, int] | None = None
        """(mtime_ns, size) of the vectors file this process last loaded or wrote."""


class SemanticSearch:
    """Search over one index database. Sync methods; one writer at a time (a lock)."""

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
        self.store = store
        self._vectors_dir = Path(vectors_dir) if vectors_dir else store.path.parent
        if vectors_dir:  # a folder the caller chose is made; `.nav` never is here (a deleted root stays gone)
            self._vectors_dir.mkdir(parents=True, exist_ok=True)
        self.config = config if depth is None else dataclasses.replace(config, depth=depth)
        self.depth = self.config.depth
        self._path_cache: tuple[tuple[int, float], PathIndex] | None = None
        if share_with is not None:
            self._shared: _Shared = share_with._shared
        else:
            self._shared = _Shared(embedder=embedder, model=model)
        self._lock = self._shared.lock

    @property
    def _index(self) -> VectorIndex | None:
        return self._shared.index

    # -- resources ---------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._shared.embedder is None:
                self._shared.embedder = load_embedder(self._shared.model)
            return self._shared.embedder

    @property
    def model_loaded(self) -> bool:
        """Whether the embedding model shared by every instance over this index is in memory."""
        return self._shared.embedder is not None

    def release_model(self) -> bool:
        """Drop the embedding model shared by every instance over this index (it loads again on
        next use); False when none is loaded or a sync is embedding right now."""
        with self._lock:
            if self._shared.embedder is None or self._shared.in_flight:
                return False
            self._shared.embedder = None
            return True

    @property
    def vectors_path(self) -> Path:
        slug = _SLUG.sub("_", self.embedder.model_id)[:80]
        return self._vectors_dir / f"vectors-{slug}.npz"

    def _vector_index(self) -> VectorIndex:
        """The shared vector index, created empty (which loads the model for its dimension)
        when there is neither a saved index nor a cached vector."""
        with self._lock:
            index = self._existing_index()
            if index is None:
                index = self._shared.index = VectorIndex(self.embedder.dim, self.embedder.model_id)
            return index

    def _existing_index(self) -> VectorIndex | None:
        """The shared vector index without loading the model: the saved file, else an empty
        index sized by a vector cached in SQLite, else None (no vectors exist at all)."""
        with self._lock:
            if self._shared.index is None:
                model_id = self.embedder.model_id  # known without loading the model
                loaded = self._load_file(model_id)
                if loaded is None:
                    dim = self.store.vector_dim(model_id)
                    loaded = VectorIndex(dim, model_id) if dim is not None else None
                self._shared.index = loaded
            return self._shared.index

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            st = self.vectors_path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def _load_file(self, model_id: str) -> VectorIndex | None:
        stamp = self._file_stamp()
        loaded = VectorIndex.load(self.vectors_path) if stamp is not None else None
        if loaded is None or loaded.model_id != model_id:
            return None
        self._shared.file_stamp = stamp
        return loaded

    # -- sync --------------------------------------------------------------------------------

    def _signature(self) -> tuple[object, ...]:
        """Cheap fingerprint of the chunks table: any index run that changes a file changes it."""
        return tuple(self.store.index_signature())

    def _chunk_keys(self) -> dict[int, str]:
        return {k.id: embed_key(k.hash, k.path, k.symbol, k.signature) for k in self.store.chunk_keys()}

    def vector_coverage(self) -> tuple[int, int]:
        """(chunks with a current vector, chunks), without embedding or loading the model."""
        return self.refresh()

    def refresh(self) -> tuple[int, int]:
        """What a search does instead of embedding. Never runs or loads the model.

        - When another process saved newer vectors (``nav index --embed``, a daemon), load them.
        - When the chunks changed (an index run) or vectors were loaded: drop vectors of changed
          or deleted chunks and add vectors cached in SQLite (a revert, a branch switch back).
        - Count the chunks that have a current vector.

        Returns (chunks with a current vector, chunks). A query pays for this only when
        something changed: the chunks' embedding keys are kept until the chunks change."""
        with self._lock:
            signature = self._signature()
            cached = self._shared.keys
            keys_changed = cached is None or cached[0] != signature
            if cached is None or keys_changed:
                cached = self._shared.keys = (signature, self._chunk_keys())
            keys = cached[1]
            reloaded = False
            index = self._existing_index()
            stamp = self._file_stamp()
            if index is not None and stamp is not None and stamp != self._shared.file_stamp:
                fresh = self._load_file(index.model_id)
                if fresh is not None:
                    index = self._shared.index = fresh
                    reloaded = True
            size = len(index) if index is not None else -1
            state = (*signature, size, stamp)
            last = self._shared.refreshed
            if last is not None and last[0] == state and not reloaded:
                return last[1]
            if index is None:
                coverage = (0, len(keys))
            else:
                if keys_changed or reloaded or last is None:
                    have = index.items()
                    index.remove([i for i, k in have.items() if keys.get(i) != k])
                    have = index.items()
                    self._add_cached(index, {i: k for i, k in keys.items() if have.get(i) != k}, index.model_id)
                have = index.items()
                coverage = (sum(1 for i, k in keys.items() if have.get(i) == k), len(keys))
                size = len(index)
            self._shared.refreshed = ((*signature, size, stamp), coverage)
            return coverage

    def sync(
        self,
        *,
        budget_s: float | None = None,
        max_embed: int | None = None,
        batch_size: int = 64,
        progress: SyncProgress | None = None,
        save: bool = True,
    ) -> SyncReport:
        """Bring the vectors in step with the chunks table.

        Removes vectors of deleted or changed chunks, adds cached vectors, and embeds
        the rest (texts sorted by length so a batch pads little). ``budget_s`` /
        ``max_embed`` bound the embedding work; what is left stays missing and a later
        sync continues.

        The shared lock is held only to plan and to add finished vectors, never while the
        model runs: a search in another thread waits milliseconds, not an embedding slice.
        Chunks another thread is embedding right now are skipped, not embedded twice.
        """
        t0 = time.perf_counter()
        with self._lock:
            emb = self.embedder
            model_id = emb.model_id
            index = self._vector_index()
            signature = self._signature()
            if self._shared.synced == (signature, model_id, len(index)):
                # Nothing changed since the last complete sync: skip reading every chunk.
                return SyncReport(len(index), len(index), 0, 0, 0, time.perf_counter() - t0)
            keys = self._chunk_keys()
            have = index.items()
            stale = [i for i, k in have.items() if keys.get(i) != k]
            removed = index.remove(stale)
            missing = {i: k for i, k in keys.items() if have.get(i) != k}
            from_cache = self._add_cached(index, missing, model_id)
            todo: dict[str, list[int]] = {}
            for i, k in missing.items():
                if i not in index and k not in self._shared.in_flight:
                    todo.setdefault(k, []).append(i)
            if (max_embed is not None and max_embed <= 0) or (budget_s is not None and budget_s <= 0):
                todo = {}
            items = self._texts(todo, max_embed)
            claimed = {k for k, _ in items}
            self._shared.in_flight |= claimed
        embedded = 0
        try:
            if items:
                embedded = self._embed_items(index, items, todo, model_id, t0, budget_s, batch_size, progress)
        finally:
            changed = bool(removed or from_cache or embedded)
            with self._lock:
                self._shared.in_flight -= claimed
                if changed:
                    index.maybe_go_approximate()
                have = index.items()
                complete = all(have.get(i) == k for i, k in keys.items())
                self._shared.synced = (signature, model_id, len(index)) if complete else None
                vectors = sum(1 for i, k in keys.items() if have.get(i) == k)
            if changed and save:
                # Outside the shared lock: the index snapshots itself under its own lock and the
                # file is written atomically, so a search never waits for the disk.
                index.save(self.vectors_path)
                with self._lock:
                    self._shared.file_stamp = self._file_stamp()  # our own write: nothing to reload
        return SyncReport(
            chunks=len(keys),
            vectors=vectors,
            embedded=embedded,
            from_cache=from_cache,
            removed=removed,
            seconds=time.perf_counter() - t0,
        )

    def _add_cached(self, index: VectorIndex, missing: dict[int, str], model_id: str) -> int:
        if not missing:
            return 0
        by_key: dict[str, list[int]] = {}
        for i, k in missing.items():
            by_key.setdefault(k, []).append(i)
        keys = list(by_key)
        added = 0
        dim = index.dim
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            ids: list[int] = []
            hashes: list[str] = []
            vecs: list[np.ndarray] = []
            for h, v in self.store.fetch_vectors(model_id, part).items():
                if int(v.shape[0]) != dim:
                    continue
                for cid in by_key[h]:
                    ids.append(cid)
                    hashes.append(h)
                    vecs.append(v)
            if ids:
                index.add(ids, hashes, np.vstack(vecs))
                added += len(ids)
        return added

    def _texts(self, todo: dict[str, list[int]], max_embed: int | None) -> list[tuple[str, str]]:
        """(key, text to embed) for one representative chunk per key, shortest first."""
        if not todo:
            return []
        rep = {ids[0]: k for k, ids in todo.items()}
        rows = self.store.chunks_by_ids(list(rep))
        items = sorted(
            ((rep[cid], embedding_text(r.path, r.symbol, r.signature, r.text)) for cid, r in rows.items()),
            key=lambda kv: len(kv[1]),
        )
        return items[:max_embed] if max_embed is not None else items

    def _embed_items(
        self,
        index: VectorIndex,
        items: list[tuple[str, str]],
        todo: dict[str, list[int]],
        model_id: str,
        t0: float,
        budget_s: float | None,
        batch_size: int,
        progress: SyncProgress | None,
    ) -> int:
        """Run the model over ``items`` in batches (no lock held), caching each batch in
        SQLite and adding it to the shared index under the lock."""
        total = len(items)
        done = 0
        emb = self.embedder
        for start in range(0, total, batch_size):
            if budget_s is not None and start > 0 and time.perf_counter() - t0 > budget_s:
                break
            batch = items[start : start + batch_size]
            vecs = emb.embed_documents([t for _, t in batch])
            self.store.push_vectors(model_id, {k: vecs[j] for j, (k, _) in enumerate(batch)})
            ids: list[int] = []
            hashes: list[str] = []
            rows_v: list[np.ndarray] = []
            for j, (k, _) in enumerate(batch):
                for cid in todo[k]:
                    ids.append(cid)
                    hashes.append(k)
                    rows_v.append(vecs[j])
            with self._lock:
                index.add(ids, hashes, np.vstack(rows_v))
            done += len(batch)
            if progress is not None:
                progress(done, total)
        return done

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
            lambda: bm25_chunks(store, terms, limit=limit, paths=paths, languages=languages, weights=cfg.bm25_weights),
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
        return {i: ChunkMeta(p.id, p.path, p.symbol, p.start_line) for i, p in self.store.chunk_places(ids).items()}

    def _first_chunks(self, paths: Sequence[str]) -> dict[str, int]:
        return self.store.first_chunks(paths)

    def _chunk_hits(self, ranked: Sequence[Ranked]) -> list[SearchHit]:
        rows = self.store.chunks_by_ids([r.id for r in ranked])
        return [chunk_hit(r, rows[r.id]) for r in ranked if r.id in rows]

    def _code_hits(self, ranked: Sequence[Ranked], terms: QueryTerms, k: int) -> list[SearchHit]:
        """The code view (:func:`navigator.pipeline.code_view`) of the ranked chunks, with the
        definitions of ``config.code_kinds`` that overlap each of the best."""
        code_kinds = self.config.code_kinds
        top = ranked[: code_view_depth(k)]
        read: list[tuple[Ranked, ChunkText, Sequence[Definition]]] = []
        for start in range(0, len(top), 50):
            part = top[start : start + 50]
            rows = self.store.chunks_by_ids([r.id for r in part])
            for r in part:
                row = rows.get(r.id)
                if row is None:
                    continue
                defs = self.store.definitions_in(
                    row.path, kinds=code_kinds, start_line=row.start_line, end_line=row.end_line
                )
                read.append((r, row, list(defs)))
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
                        f"vectors for {have}/{total} chunks ({pct:.0f}%); "
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
        if problems:
            notes.extend(problems)
            complete, reason = False, "; ".join(problems)
        chunk_legs = {name: ids for name, ids in chunk_legs.items() if name in legs}
        if "path" not in legs:
            path_leg = []
        cand = {i for ids in chunk_legs.values() for i in ids}
        meta = self._meta(list(cand))
        reps = self._first_chunks(unlisted(path_leg, meta, config=cfg))
        meta.update(self._meta([i for i in reps.values() if i not in meta]))
        cands = Candidates(chunk_legs, meta, path_leg, reps)
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

        ranked = rank(cands, terms, k=k, view=view, config=cfg, feedback=prf)
        if problems:  # the feedback leg's, when the index failed under it
            notes.extend(p for p in problems if p not in notes)
            complete, reason = False, "; ".join(problems)
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
