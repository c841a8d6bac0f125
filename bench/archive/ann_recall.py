"""Recall@10 of approximate FAISS indexes against exact search, on real MiniLM embeddings.

Base vectors: every cached chunk embedding of the default model in the bench indexes
(``bench/corpora/.idx/<slug>/*.db``), replicated with Gaussian noise up to each size N
(``x + sigma * g``, renormalized) because no corpus here has 100k+ chunks. Queries: the
benchmark's real queries encoded by the same model. Latency: one query at a time, one
OpenMP thread, as :class:`semantic.vectors.VectorIndex` searches.

    python bench/archive/ann_recall.py --sizes 20000,50000,100000,200000
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import time
from pathlib import Path

import faiss
import numpy as np

HERE = Path(__file__).resolve().parents[1]  # bench/ (this one-off is kept in bench/archive/)
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from semble_bench import BENCH, CORPORA  # noqa: E402

from semantic.embed import load_embedder  # noqa: E402


def real_vectors(model_id: str, slug: str) -> np.ndarray:
    vecs = []
    for db in sorted((CORPORA / ".idx" / slug).glob("*.db")):
        conn = sqlite3.connect(db)
        for (blob,) in conn.execute("SELECT vector FROM embeddings WHERE model = ?", (model_id,)):
            vecs.append(np.frombuffer(blob, dtype=np.float32))
        conn.close()
    return np.vstack(vecs)


def grow(base: np.ndarray, n: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    idx = rng.integers(0, len(base), size=n)
    x = base[idx] + sigma * rng.standard_normal((n, base.shape[1]), dtype=np.float32)
    x[: len(base)] = base[: min(n, len(base))]
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def timed_search(index: faiss.Index, q: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    out = np.zeros((len(q), k), dtype=np.int64)
    t = time.perf_counter()
    for i in range(len(q)):
        _, ids = index.search(q[i : i + 1], k)
        out[i] = ids[0]
    return out, (time.perf_counter() - t) * 1000 / len(q)


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(f) & set(t)) / len(t) for f, t in zip(found, truth, strict=True)]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20000,50000,100000,200000")
    ap.add_argument("--sigma", type=float, default=0.02)
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args()
    faiss.omp_set_num_threads(1)
    emb = load_embedder(None)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", emb.model_id)
    base = real_vectors(emb.model_id, slug)
    texts = []
    for ann in sorted((BENCH / "annotations").glob("*.json")):
        if (CORPORA / ann.stem).exists():
            texts.extend(q["query"] for q in json.loads(ann.read_text()))
    texts = texts[: args.queries]
    q = np.vstack([emb.embed_query(t) for t in texts]).astype(np.float32)
    print(f"{len(base)} real chunk vectors ({emb.model_id}), {len(q)} real queries, sigma {args.sigma}")
    rng = np.random.default_rng(0)
    print("| N | exact ms | IVF nlist | nprobe | recall@10 | ms | HNSW M | efSearch | recall@10 | ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        x = grow(base, n, args.sigma, rng)
        flat = faiss.IndexFlatIP(x.shape[1])
        flat.add(x)
        truth, exact_ms = timed_search(flat, q, 10)
        nlist = int(4 * np.sqrt(n))
        quant = faiss.IndexFlatIP(x.shape[1])
        ivf = faiss.IndexIVFFlat(quant, x.shape[1], nlist, faiss.METRIC_INNER_PRODUCT)
        ivf.train(x[rng.choice(n, size=min(n, 64 * nlist), replace=False)])
        ivf.add(x)
        hnsw = faiss.IndexHNSWFlat(x.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
        hnsw.hnsw.efConstruction = 80
        t = time.perf_counter()
        hnsw.add(x)
        build = time.perf_counter() - t
        rows = []
        for nprobe, ef in ((max(1, nlist // 64), 16), (max(8, nlist // 16), 32), (nlist // 8, 64), (nlist // 4, 128)):
            ivf.nprobe = nprobe
            f_ivf, ms_ivf = timed_search(ivf, q, 10)
            hnsw.hnsw.efSearch = ef
            f_h, ms_h = timed_search(hnsw, q, 10)
            rows.append(
                f"| {n} | {exact_ms:.2f} | {nlist} | {nprobe} | {recall(f_ivf, truth):.3f} | {ms_ivf:.2f} | 32 "
                f"(build {build:.0f} s) | {ef} | {recall(f_h, truth):.3f} | {ms_h:.2f} |"
            )
        print("\n".join(rows), flush=True)


if __name__ == "__main__":
    main()
