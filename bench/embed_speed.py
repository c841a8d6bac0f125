"""Embedding speed of the default model, interleaved in one process on the same chunk texts.

Takes chunk texts (exactly what search embeds) from a bench index and times each setting
on the same texts, alternating rounds so machine load hits every setting alike; prints the
median round's chunks/s and its ratio to the first setting.

Two comparisons:

* ``--lengths 128,256``: max_seq_length of the torch path;
* ``--runtimes torch,torch-int8,onnx,onnx-int8`` (at ``--lengths``' first value): the runtime,
  each at every ``--threads`` count, with the cosine of each runtime's vectors to torch's
  on the same chunks (mean / min). ``torch-int8`` is torch's dynamic int8 quantization of
  the Linear layers (per-tensor and per-channel), ``onnx`` the plain fp32 ONNX export, and
  ``onnx-int8`` nav's default (:class:`semantic.onnx_int8.OnnxInt8Embedder`; ``onnx-int8@16``: with
  batches of 16 instead of one text per call).

    python bench/embed_speed.py --db bench/corpora/.idx/<slug>/flask.db --n 128 --rounds 3 --lengths 128,256
    python bench/embed_speed.py --db /work/corpora/semble/.idx/lexical/flask.db --n 256 --rounds 5 \\
        --runtimes torch,torch-int8,torch-int8-pc,onnx,onnx-int8 --threads 1,2
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from semantic.embed import (  # noqa: E402
    SentenceTransformerEmbedder,
    bounded_threads,
    default_model_path,
    embedding_text,
    thread_limit,
)
from semantic.onnx_int8 import (  # noqa: E402
    ONNX_BATCH,
    OnnxInt8Embedder,
    _OrtRunner,
    _tokenizer,
    export_fp32,
    prepare_onnx_int8,
)
from storage.db import Store  # noqa: E402

Encode = Callable[[list[str]], Any]


def _torch_int8(seq: int, per_channel: bool) -> Encode:
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(default_model_path()), device="cpu", local_files_only=True)
    model.max_seq_length = seq
    spec: Any = (
        {torch.nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig}
        if per_channel
        else {torch.nn.Linear}
    )
    q = torch.ao.quantization.quantize_dynamic(model, spec, dtype=torch.qint8)
    return lambda texts: q.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)


def _onnx_fp32(folder: Path, seq: int) -> Encode:
    """The fp32 ONNX export (made here next to the int8 one, from the installed model)."""
    from transformers import AutoModel, AutoTokenizer

    fp32 = folder / "bench-fp32.onnx"
    if not fp32.exists():
        path = default_model_path()
        base = AutoModel.from_pretrained(str(path), local_files_only=True).eval()
        export_fp32(base, AutoTokenizer.from_pretrained(str(path), local_files_only=True), fp32)
    runner = _OrtRunner(fp32, _tokenizer(default_model_path(), seq))
    return lambda texts: runner.encode(texts, batch_size=32)


def runtimes(names: list[str], seq: int) -> dict[str, Encode]:
    out: dict[str, Encode] = {}
    for name in names:
        if name == "torch":
            out[name] = SentenceTransformerEmbedder(max_seq_length=seq).embed_documents
        elif name in ("torch-int8", "torch-int8-pc"):
            out[name] = _torch_int8(seq, per_channel=name.endswith("-pc"))
        elif name in ("onnx", "onnx-int8") or name.startswith("onnx-int8@"):
            folder = prepare_onnx_int8(max_seq_length=seq)
            if folder is None:
                raise SystemExit("ONNX Runtime cannot be used here (see the log line above)")
            batch = int(name.partition("@")[2] or ONNX_BATCH)  # onnx-int8@16: another batch size
            out[name] = (
                _onnx_fp32(folder, seq)
                if name == "onnx"
                else OnnxInt8Embedder(folder, max_seq_length=seq, batch_size=batch).embed_documents
            )
        else:
            raise SystemExit(
                f"--runtimes: unknown {name[:100]!r}; choose from torch,torch-int8,torch-int8-pc,onnx,onnx-int8"
            )
    return out


def timed(
    settings: dict[str, Encode], texts: list[str], rounds: int, threads: int
) -> tuple[dict[str, float], dict[str, Any]]:
    """Median seconds per round of each setting (rounds interleaved) and its last vectors."""
    import torch  # noqa: F401 - loaded before bounded_threads, which bounds only a loaded torch

    spent: dict[str, list[float]] = {k: [] for k in settings}
    vecs: dict[str, Any] = {}
    with bounded_threads(threads):
        for f in settings.values():
            f(texts[:8])
        for _ in range(rounds):
            for k, f in settings.items():
                t = time.perf_counter()
                vecs[k] = np.asarray(f(texts), dtype=np.float32)
                spent[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in spent.items()}, vecs


def rss(args: argparse.Namespace) -> None:
    """Each runtime in a fresh process of this script: load it, embed the chunks once on one
    thread, print the peak RSS and whether torch got imported."""
    import subprocess

    for name in (args.runtimes or "torch,onnx-int8").split(","):
        cmd = [sys.executable, __file__, "--db", args.db, "--n", str(args.n), "--lengths", args.lengths]
        out = subprocess.run([*cmd, "--rss-of", name], capture_output=True, text=True, check=True).stdout
        print(f"{name:16s} {out.strip().splitlines()[-1]}", flush=True)


def rss_of(name: str, texts: list[str], seq: int) -> None:
    import resource

    encode = runtimes([name], seq)[name]
    with bounded_threads(1):
        encode(texts)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"peak RSS {peak} MB, torch imported: {'torch' in sys.modules}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lengths", default="128,256")
    ap.add_argument("--runtimes", default="", help="compare runtimes at the first length (see above)")
    ap.add_argument(
        "--threads", default="", help="comma-separated thread counts (default: nav's thread_limit())"
    )
    ap.add_argument("--rss", action="store_true", help="peak RSS of each runtime alone, one process each")
    ap.add_argument("--rss-of", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss:
        rss(args)
        return
    store = Store(Path(args.db))
    ids = [int(r[0]) for r in store.conn.execute("SELECT id FROM chunks")]
    random.Random(0).shuffle(ids)
    rows = store.chunks_by_ids(ids[: args.n])
    texts = [embedding_text(r.path, r.symbol, r.signature, r.text) for r in rows.values()]
    lengths = [int(x) for x in args.lengths.split(",")]
    tok = _tokenizer(default_model_path(), 100_000)
    tok.no_padding()
    ntok = sorted(len(e.ids) for e in tok.encode_batch(texts))
    print(
        f"{len(texts)} chunks from {args.db}; tokens p50={ntok[len(ntok) // 2]} p90={ntok[int(len(ntok) * 0.9)]} "
        f">128: {sum(n > 128 for n in ntok) / len(ntok):.0%} >256: {sum(n > 256 for n in ntok) / len(ntok):.0%}"
    )
    if args.rss_of:
        rss_of(args.rss_of, texts, lengths[0])
        return
    if args.runtimes:
        settings = runtimes(args.runtimes.split(","), lengths[0])
    else:
        settings = {
            f"max_seq_length {n}": SentenceTransformerEmbedder(max_seq_length=n).embed_documents
            for n in lengths
        }
    first = next(iter(settings))
    for threads in [int(x) for x in args.threads.split(",")] if args.threads else [thread_limit()]:
        medians, vecs = timed(settings, texts, args.rounds, threads)
        for k in settings:
            cos = (vecs[k] * vecs[first]).sum(axis=1)
            print(
                f"threads {threads} {k:16s} {len(texts) / medians[k]:7.1f} chunks/s  x{medians[first] / medians[k]:.2f}"
                f"  cosine to {first}: mean {cos.mean():.4f} min {cos.min():.4f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
