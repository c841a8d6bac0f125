"""The vector index: FAISS over L2-normalized vectors (inner product = cosine), keyed by chunk id.

- Exact (``IndexIDMap2`` over ``IndexFlatIP``) while the index is small; an inverted-file
  index (``IndexIVFFlat``, inner product) above :data:`APPROX_THRESHOLD` vectors, with
  ``nprobe`` set for recall@10 >= 0.98 as measured on real code-chunk embeddings
  (see ``bench/README.md``).
- ``add`` / ``remove`` by chunk id. Each id also remembers the content hash its vector
  was made from, so a reused chunk id never keeps a stale vector.
- Persisted in one file (ids, hashes, model id, the serialized FAISS index) written to a
  temporary file and moved into place with ``os.replace``: a crash leaves the old file.
- Single-query search runs with one OpenMP thread (measured: ~10x faster under load).
"""

from __future__ import annotations

import io
import os
import tempfile
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

__all__ = ["APPROX_THRESHOLD", "VectorIndex"]

APPROX_THRESHOLD = 30_000
"""Above this many vectors the index switches to IVF. Measured here (bench/ann_recall.py,
real MiniLM chunk vectors grown with noise, real queries, one thread, loaded machine):
exact search costs 9 ms at 20k vectors, 39 ms at 50k and 65 ms at 100k, while IVF with
nlist = 4 sqrt(N) and nprobe = nlist / 8 keeps recall@10 at 0.987 / 0.993 / 0.999 for
1-6 ms. HNSW (M = 32) needed efSearch 128 for 0.92-0.97 and minutes to build."""
NPROBE_FRACTION = 8
"""nprobe = nlist / NPROBE_FRACTION (at least 8)."""

_FORMAT = 1
_HASHTABLE: int = faiss.DirectMap.Hashtable  # type: ignore[attr-defined]  # (faiss's stubs lack it)
"""An IVF index's id -> vector map that takes any ids (the default array wants 0..n-1)."""


class VectorIndex:
    """A FAISS index of unit vectors keyed by int64 chunk ids. Not thread-safe for writers;
    searches take a lock so one process can share it between threads."""

    def __init__(self, dim: int, model_id: str, *, approx_threshold: int = APPROX_THRESHOLD) -> None:
        self.dim = int(dim)
        self.model_id = model_id
        self.approx_threshold = approx_threshold
        self._index: Any = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
        self._hashes: dict[int, str] = {}
        self._approx = False
        self._lock = threading.Lock()

    # -- contents ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._hashes)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._hashes

    @property
    def approximate(self) -> bool:
        return self._approx

    def items(self) -> dict[int, str]:
        """chunk id -> content hash of its vector (a copy)."""
        return dict(self._hashes)

    def add(self, ids: Sequence[int], hashes: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Add (or replace) vectors for chunk ids."""
        if len(ids) != len(hashes) or len(ids) != len(vectors):
            raise ValueError(f"add: {len(ids)} ids, {len(hashes)} hashes, {len(vectors)} vectors")
        if not len(ids):
            return
        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        if vecs.shape[1] != self.dim:
            raise ValueError(f"add: vectors of dim {vecs.shape[1]}, index dim {self.dim}")
        present = [i for i in ids if i in self._hashes]
        if present:
            self.remove(present)
        with self._lock:
            self._index.add_with_ids(vecs, np.asarray(ids, dtype=np.int64))
            for i, h in zip(ids, hashes, strict=True):
                self._hashes[int(i)] = h

    def remove(self, ids: Iterable[int]) -> int:
        gone = [int(i) for i in ids if int(i) in self._hashes]
        if not gone:
            return 0
        with self._lock:
            arr = np.asarray(gone, dtype=np.int64)
            if self._approx and self._index.direct_map.type == _HASHTABLE:
                # an id -> vector map (``vectors_of``) is kept in step by an array selector only
                self._index.remove_ids(faiss.IDSelectorArray(len(arr), faiss.swig_ptr(arr)))
            else:
                self._index.remove_ids(faiss.IDSelectorBatch(arr))
            for i in gone:
                del self._hashes[i]
        return len(gone)

    def reconstruct_all(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Every (id, vector) pair, used to rebuild the index in another form."""
        ids = np.asarray(sorted(self._hashes), dtype=np.int64)
        if not self._approx:
            vecs = (
                np.vstack([self._index.reconstruct(int(i)) for i in ids])
                if len(ids)
                else np.zeros((0, self.dim), dtype=np.float32)
            )
            return ids, vecs.astype(np.float32)
        vecs = self.vectors_of([int(i) for i in ids])
        return ids, vecs

    def vectors_of(self, ids: Sequence[int]) -> npt.NDArray[np.float32]:
        """The stored vectors of chunk ids held (others skipped), in the given order. An IVF
        index keeps a hash map from id to vector from then on (its ids are not sequential,
        which the default direct map refuses)."""
        held = [int(i) for i in ids if i in self._hashes]
        if not held:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            if self._approx and self._index.direct_map.type != _HASHTABLE:
                self._index.set_direct_map_type(_HASHTABLE)
            return np.vstack([self._index.reconstruct(i) for i in held]).astype(np.float32)

    def rebuild(
        self, ids: npt.NDArray[np.int64], hashes: Sequence[str], vectors: npt.NDArray[np.float32]
    ) -> None:
        """Replace the whole index, choosing exact or IVF by size."""
        n = len(ids)
        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        if n > self.approx_threshold:
            nlist = int(4 * np.sqrt(n))
            quantizer = faiss.IndexFlatIP(self.dim)
            index: Any = faiss.IndexIVFFlat(quantizer, self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
            sample = vecs[np.random.default_rng(0).choice(n, size=min(n, 64 * nlist), replace=False)]
            index.train(sample)
            index.nprobe = max(8, nlist // NPROBE_FRACTION)
            self._approx = True
        else:
            index = faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim))
            self._approx = False
        if n:
            index.add_with_ids(vecs, np.asarray(ids, dtype=np.int64))
        with self._lock:
            self._index = index
            self._hashes = {int(i): h for i, h in zip(ids, hashes, strict=True)}

    def maybe_go_approximate(self) -> bool:
        """Switch to IVF once the index has grown past the threshold. Returns True if it did."""
        if self._approx or len(self) <= self.approx_threshold:
            return False
        ids, vecs = self.reconstruct_all()
        hashes = [self._hashes[int(i)] for i in ids]
        self.rebuild(ids, hashes, vecs)
        return True

    # -- search -----------------------------------------------------------------------------

    def search(
        self, query: npt.NDArray[np.float32], k: int, *, allowed: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest chunk ids to one unit query vector, best first.

        ``allowed`` restricts the search to those ids (path or language filters).
        """
        if not self._hashes or k <= 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        params = None
        if allowed is not None:
            if not len(allowed):
                return []
            sel = faiss.IDSelectorBatch(np.asarray(allowed, dtype=np.int64))
            params = (
                faiss.SearchParametersIVF(sel=sel, nprobe=self._index.nprobe)  # type: ignore[call-arg]
                if self._approx
                else faiss.SearchParameters(sel=sel)  # type: ignore[call-arg]
            )
        prev = faiss.omp_get_max_threads()
        with self._lock:
            faiss.omp_set_num_threads(1)
            try:
                scores, ids = self._index.search(q, min(k, len(self._hashes)), params=params)
            finally:
                faiss.omp_set_num_threads(prev)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    # -- persistence ------------------------------------------------------------------------

    def save(self, path: Path) -> None:
        """Write atomically: a temporary file in the same folder, then ``os.replace``. The folder
        must exist (``FileNotFoundError`` otherwise): a root deleted under a running daemon is not
        made again by its last save."""
        path = Path(path)
        with self._lock:
            ids = np.asarray(list(self._hashes), dtype=np.int64)
            hashes = np.asarray([self._hashes[int(i)] for i in ids], dtype=np.str_)
            blob = faiss.serialize_index(self._index)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(
                    fh,
                    format=np.asarray([_FORMAT]),
                    model=np.asarray([self.model_id]),
                    dim=np.asarray([self.dim]),
                    approx=np.asarray([int(self._approx)]),
                    ids=ids,
                    hashes=hashes,
                    index=blob,
                )
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path, *, approx_threshold: int = APPROX_THRESHOLD) -> VectorIndex | None:
        """Read a saved index; None when the file is missing or unreadable (then rebuild)."""
        try:
            data = Path(path).read_bytes()
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                if int(z["format"][0]) != _FORMAT:
                    return None
                self = cls(int(z["dim"][0]), str(z["model"][0]), approx_threshold=approx_threshold)
                self._index = faiss.deserialize_index(z["index"])
                self._approx = bool(int(z["approx"][0]))
                self._hashes = {int(i): str(h) for i, h in zip(z["ids"], z["hashes"], strict=True)}
        except (OSError, ValueError, KeyError, RuntimeError):
            return None
        if self._index.ntotal != len(self._hashes):
            return None
        return self
