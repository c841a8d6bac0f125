"""The default model on ONNX Runtime with int8 weights (:class:`OnnxInt8Embedder`): exported once
from the installed sentence-transformers model into the user's cache (:func:`embed_cache_dir`),
checked against torch's vectors on probe texts before it is used, then run without torch.
:func:`semantic.embed.load_embedder` chooses it; bench/README.md has the figures.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from semantic.embed import (
    DEFAULT_MAX_SEQ_LENGTH,
    QUERY_THREADS,
    RUNTIME_ENV,
    EmbedError,
    Vectors,
    bounded_threads,
    default_model_path,
    dir_fingerprint,
    import_torch_within_limit,
    normalize,
    quiet_loading,
    st_model_id,
    thread_limit,
)
from semantic.runtime_speed import cpu_key, read_speed, speed_texts, time_runs, torch_faster

log = logging.getLogger("nav.embed")

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
    key = f"{model_path.name}-{dir_fingerprint(model_path)}-ort{_version('onnxruntime')}"
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
    return normalize(summed / np.clip(m.sum(axis=1), 1e-9, None))


def _export_int8(model_path: Path, out_dir: Path, max_seq_length: int) -> float:
    """:func:`_export_int8_unbounded` within the process's thread limit (the daemon's one
    thread holds for the export too)."""
    import_torch_within_limit()
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
            out = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
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
        with quiet_loading():
            base = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()
        hf_tok = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)

        # The reference for the check, computed before the export (which leaves the model
        # changed): torch through transformers' own tokenizer, to compare int8 through ours.
        enc = hf_tok(
            list(_PROBE_TEXTS), padding=True, truncation=True, max_length=max_seq_length, return_tensors="pt"
        )
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
        try:
            speed = {cpu_key(): measure_runtimes(model_path, tmp / _ONNX_FILE, max_seq_length)}
        except Exception as exc:  # the export is sound without it; the choice stays int8
            log.warning("could not time the runtimes on this CPU: %s", str(exc)[:200])
            speed = {}
        os.replace(tmp / _ONNX_FILE, out_dir / _ONNX_FILE)
        meta = {"min_probe_cosine": round(worst, 5), "versions": _export_versions(), "speed": speed}
        (tmp / _ONNX_META).write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp / _ONNX_META, out_dir / _ONNX_META)
        return worst
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


def measure_runtimes(model_path: Path, onnx_file: Path, max_seq_length: int) -> dict[str, float]:
    """Chunks per second of each runtime on this CPU, as nav embeds documents (torch through
    sentence-transformers, int8 one text per call), one thread each
    (:func:`semantic.runtime_speed.time_runs`). Loads torch: a few seconds, made once per export
    and CPU (the export has torch loaded anyway)."""
    import_torch_within_limit()
    import torch
    from sentence_transformers import SentenceTransformer

    texts = speed_texts()
    with quiet_loading():
        st = SentenceTransformer(str(model_path), device="cpu", local_files_only=True)
    st.max_seq_length = max_seq_length
    runner = _OrtRunner(onnx_file, _tokenizer(model_path, max_seq_length), threads=1)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return time_runs(
            {
                "torch": lambda: st.encode(
                    texts, batch_size=32, convert_to_numpy=True, show_progress_bar=False
                ),
                "onnx-int8": lambda: runner.encode(texts, batch_size=ONNX_BATCH, threads=1),
            },
            len(texts),
        )
    finally:
        torch.set_num_threads(before)


def measured_speed(folder: Path) -> dict[str, float] | None:
    """The runtimes' chunks per second measured on this CPU for the export in ``folder``, if any."""
    return read_speed(folder / _ONNX_META)


def torch_measured_faster(folder: Path) -> dict[str, float] | None:
    """The speeds, when this CPU timed torch clearly faster than the int8 export in ``folder``
    (:func:`semantic.runtime_speed.torch_faster`); else None."""
    speed = measured_speed(folder)
    return speed if speed is not None and torch_faster(speed) else None


def _record_speed(folder: Path, model_path: Path, max_seq_length: int) -> None:
    """Time the runtimes on this CPU for an export made without (another CPU, an older nav) and
    add it to its meta file, replaced whole; logged and skipped when that fails."""
    tmp = folder / f"{_ONNX_META}.{os.getpid()}-{threading.get_ident()}"
    try:
        speed = measure_runtimes(model_path, folder / _ONNX_FILE, max_seq_length)
        meta = json.loads((folder / _ONNX_META).read_text(encoding="utf-8"))
        if not isinstance(meta.get("speed"), dict):
            meta["speed"] = {}
        meta["speed"][cpu_key()] = speed
        tmp.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(tmp, folder / _ONNX_META)
    except Exception as exc:  # loading torch, timing, writing: each means "not measured"
        log.warning("could not time the runtimes on this CPU: %s", str(exc)[:200])
        tmp.unlink(missing_ok=True)  # a full disk leaves no half-written meta file behind


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


def onnx_int8_folder(
    model_path: Path | None = None, *, cache_dir: Path | None = None, measured: bool = True
) -> Path | None:
    """Where the int8 export of the model is (or will be made, on first use of the model), when
    ONNX Runtime can run it and (``measured``) this CPU did not time torch faster than the
    export (:func:`torch_measured_faster`); else None, with a log line saying why. Cheap:
    nothing is imported or exported here (a small meta file is read), so choosing the runtime
    (and the model id) never loads a model."""
    if not _installed("onnxruntime"):
        log.warning(
            "onnxruntime is not installed: embedding with torch, about half as fast "
            f"(pip install onnxruntime onnx; {RUNTIME_ENV}=torch silences this)"
        )
        return None
    folder = _onnx_dir(model_path or default_model_path(), cache_dir)
    if _exported(folder):
        faster = torch_measured_faster(folder) if measured else None
        if faster is not None:
            log.info(
                "embedding with torch: on this CPU it embedded %.1f chunks/s against int8's %.1f "
                f"(one thread, measured at export; {RUNTIME_ENV}=onnx-int8 chooses int8)",
                faster["torch"],
                faster["onnx-int8"],
            )
            return None
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
        log.warning(
            "embedding with torch: cannot write the ONNX export under %s (set NAV_CACHE_DIR)", folder.parent
        )
        return None
    error = _failed_here.get(folder) or _recorded_failure(folder)
    if error is not None:
        log.warning("embedding with torch: the ONNX export of the model failed before (%s)", error)
        return None
    return folder


def prepare_onnx_int8(
    model_path: Path | None = None,
    *,
    max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
    cache_dir: Path | None = None,
) -> Path | None:
    """The folder holding a checked int8 ONNX export of the model, made now if missing (some
    seconds, once per model and onnxruntime version; ``scripts/setup.sh`` makes it at install
    time) and its runtimes timed on this CPU if they were not; None, with a log line saying
    why, when ONNX Runtime cannot be used (not installed, or the export failed: recorded, and
    tried again only when the packages involved change). An export this CPU timed torch faster
    than is still returned: :func:`onnx_int8_folder` is what chooses."""
    path = model_path or default_model_path()
    folder = onnx_int8_folder(path, cache_dir=cache_dir, measured=False)
    if folder is None or not _ensure_export(folder, path, max_seq_length):
        return None
    if measured_speed(folder) is None:
        with _prepare_lock:
            if measured_speed(folder) is None:
                _record_speed(folder, path, max_seq_length)
    return folder


def runtime_choice(model_path: Path | None = None, *, cache_dir: Path | None = None) -> str:
    """One line saying which runtime embeds on this CPU and why (``scripts/setup.sh`` prints it)."""
    path = model_path or default_model_path()
    folder = onnx_int8_folder(path, cache_dir=cache_dir, measured=False)
    if folder is None or not _exported(folder):
        return "torch (no ONNX int8 export)"
    speed = measured_speed(folder)
    if speed is None:
        return "onnx-int8 (not timed on this CPU)"
    rates = f"{speed['onnx-int8']:.1f} chunks/s int8 against {speed['torch']:.1f} torch, one thread"
    chosen = "torch" if torch_faster(speed) else "onnx-int8"
    return f"{chosen} ({rates}, this CPU)"


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
        faster = torch_measured_faster(folder)
        if faster is not None:
            log.info(
                "torch embedded %.1f chunks/s against int8's %.1f on this CPU: nav embeds with torch from "
                "the next start (this process keeps int8, whose model id is out)",
                faster["torch"],
                faster["onnx-int8"],
            )
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

                with ThreadPoolExecutor(
                    max_workers=min(n, len(texts)), thread_name_prefix="nav-embed"
                ) as pool:
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
        self._model_id = st_model_id(self._path, model_path is not None, self._max_seq_length) + ":ort-int8"

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
