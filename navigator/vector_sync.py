"""The vectors of one index kept in step with its chunks, without a search ever waiting.

:class:`VectorSync` is what :class:`navigator.search.SemanticSearch` is built on:

- :meth:`VectorSync.sync` embeds the chunks that have no vector yet. Vectors are cached in
  SQLite by (model id, embedding key): the key hashes the chunk's content hash with its header
  (path, symbol, signature), so an unchanged chunk is never embedded twice and a revert or
  branch switch costs only chunks never seen before.
- :meth:`VectorSync.refresh` is what a search does instead of embedding: it drops vectors of
  changed chunks, adds vectors another process has cached, and counts what exists. The model is
  loaded only to encode a query, and only when vectors exist.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semantic.embed import Embedder, embedding_text, load_embedder, runtime_of
from semantic.vectors import VectorIndex
from storage.db import Store

log = logging.getLogger(__name__)

__all__ = ["SyncProgress", "SyncReport", "VectorSync", "embed_key"]

SyncProgress = Callable[[int, int], None]
"""Called as ``progress(embedded_so_far, to_embed)`` during :meth:`SemanticSearch.sync`."""


def eta_note(missing: int, rate: float | None) -> str:
    """ ", about 3 min more at 9.8 chunks/s measured here" for ``missing`` chunks at ``rate``
    (chunks per second measured on this machine), or "" without a rate."""
    if not rate or missing <= 0:
        return ""
    left = missing / rate
    about = (
        f"{left:.0f} s" if left < 90 else f"{left / 60:.0f} min" if left < 5400 else f"{left / 3600:.1f} h"
    )
    return f", about {about} more at {rate:.1f} chunks/s measured here"


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
        self.batches = 0
        self.timed: tuple[int, float] = (0, 0.0)
        """(texts, seconds) the model took on this machine, every batch but the first (which
        pays for loading the model): the rate the rest of the vectors will come at."""


class VectorSync:
    """One index's vectors: the model, the FAISS index, its file, and syncing them with the
    chunks. Sync methods; one writer at a time (a lock shared by instances over one index)."""

    def __init__(
        self,
        store: Store,
        *,
        embedder: Embedder | None = None,
        model: str | Path | None = None,
        vectors_dir: Path | None = None,
        share_with: VectorSync | None = None,
    ) -> None:
        """``share_with``: another instance over the same index (another thread's SQLite
        connection) whose model, vectors and lock this one uses too."""
        self.store = store
        self._vectors_dir = Path(vectors_dir) if vectors_dir else store.path.parent
        if vectors_dir:  # a folder the caller chose is made; `.nav` never is here (a deleted root stays gone)
            self._vectors_dir.mkdir(parents=True, exist_ok=True)
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
                    self._add_cached(
                        index, {i: k for i, k in keys.items() if have.get(i) != k}, index.model_id
                    )
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

    def _timed(self, texts: int, seconds: float) -> None:
        shared = self._shared
        shared.batches += 1
        if shared.batches > 1:
            n, took = shared.timed
            shared.timed = (n + texts, took + seconds)

    def embed_runtime(self) -> str | None:
        """The runtime this index's embedder runs on (:func:`semantic.embed.runtime_of`), once
        one was chosen here, or its last complete sync's after the model was released (None
        before either: choosing is left to the first search or sync)."""
        emb, synced = self._shared.embedder, self._shared.synced
        if emb is not None:
            return runtime_of(emb.model_id)
        return runtime_of(str(synced[1])) if synced is not None else None

    def embed_rate(self) -> float | None:
        """Chunks per second the model embeds on this machine, as measured by this process's
        batches so far (None before a second batch: the first pays for loading the model)."""
        n, took = self._shared.timed
        return n / took if n and took > 0 else None

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
            began = time.perf_counter()
            vecs = emb.embed_documents([t for _, t in batch])
            self._timed(len(batch), time.perf_counter() - began)
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
