"""Run nav's search on semble's code-search benchmark (../shared/bench/semble/).

NDCG@10 over ranked files (a chunk list reduced to distinct files in rank order; a target
with a line span matches a chunk whose lines overlap it; relevant + secondary, binary
gains), overall, by category and by language, for nav's fused search and each leg alone,
all in the same run; plus cold index time, embedding time and query p50/p90 per repo.

Corpora: ``bench/corpora/<name>/`` (see the benchmark's README; never committed).

    python bench/semble_bench.py --languages python --model default
    python bench/semble_bench.py --repos flask,click --model bench/corpora/models/minilm-static-256

Indexes live in ``bench/corpora/.idx/<model-slug>/<repo>.db`` and are reused (the
embedding cache makes a re-run cheap); ``--cold`` deletes them first.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from navigator.indexer import index_root  # noqa: E402
from navigator.search import SemanticSearch, SyncReport  # noqa: E402
from semantic.embed import DEFAULT_MAX_SEQ_LENGTH, load_embedder  # noqa: E402
from storage.db import Store  # noqa: E402

BENCH = Path(os.environ.get("NAV_SEMBLE", HERE.parent.parent / "shared" / "bench" / "semble"))
if not BENCH.exists():
    BENCH = Path("/work/shared/bench/semble")
CORPORA = HERE / "corpora"

CONFIGS: dict[str, tuple[str, ...]] = {
    "fused": ("bm25", "vector", "symbols", "path"),
    "lexical": ("bm25", "symbols", "path"),
    "bm25": ("bm25",),
    "vector": ("vector",),
    "symbols": ("symbols",),
}

# semble's published NDCG@10 (all 63 repos; by language where published).
SEMBLE = {
    "overall": 0.854,
    "architecture": 0.803,
    "semantic": 0.846,
    "symbol": 0.958,
    "python": 0.867,
    "typescript": 0.706,
    "go": 0.895,
    "rust": 0.856,
    "java": 0.849,
    "c": 0.741,
    "cpp": 0.915,
}


def ndcg10(files: list[str], chunks: list[tuple[str, int, int]], targets: list[Any]) -> float:
    """NDCG@10 over distinct files; ``chunks`` are (path, start, end) of the returned list."""
    whole: set[str] = set()
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for t in targets:
        if isinstance(t, str):
            whole.add(t)
        else:
            spans[t["path"]].append((int(t.get("start_line", 0)), int(t.get("end_line", 10**9))))
    n_targets = len(whole | set(spans))
    if not n_targets:
        return 0.0

    def relevant(path: str) -> bool:
        if path in whole:
            return True
        for p, s, e in chunks:
            if p == path and any(s <= te and e >= ts for ts, te in spans.get(path, ())):
                return True
        return False

    dcg = sum(1.0 / math.log2(i + 2) for i, f in enumerate(files[:10]) if relevant(f))
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(n_targets, 10)))
    return dcg / idcg


class QueryMemo:
    """The embedder with memoized query vectors: the first config (``fused``) pays for the
    encoding and is the one timed; the other configs reuse the vector."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self._memo: dict[str, Any] = {}

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed_documents(self, texts: Any) -> Any:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        if text not in self._memo:
            self._memo[text] = self.inner.embed_query(text)
        return self._memo[text]


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def run_repo(
    repo: dict[str, Any],
    model: str | None,
    cold: bool,
    configs: list[str],
    max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
    cold_index: bool = False,
) -> dict[str, Any]:
    name = repo["name"]
    broot = repo.get("benchmark_root") or ""
    root = CORPORA / name / broot
    prefix = (broot.strip("/") + "/") if broot else ""
    queries = json.loads((BENCH / "annotations" / f"{name}.json").read_text())
    embedder = load_embedder(model, max_seq_length=max_seq_length)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder.model_id)
    db = CORPORA / ".idx" / slug / f"{name}.db"
    if cold:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        shutil.rmtree(db.parent / f"{name}.vectors", ignore_errors=True)
    db.parent.mkdir(parents=True, exist_ok=True)
    index_s = None
    if cold_index:
        # Cold parse + SQLite into a throwaway database; the persistent one keeps its vectors.
        tmp = db.parent / f"{name}.cold.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        cold_store = Store(tmp)
        t0 = time.perf_counter()
        index_root(root, cold_store)
        index_s = time.perf_counter() - t0
        cold_store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
    store = Store(db)
    t0 = time.perf_counter()
    report = index_root(root, store)
    if index_s is None:
        index_s = time.perf_counter() - t0
    vec_dir = db.parent / f"{name}.vectors"
    search = SemanticSearch(store, embedder=QueryMemo(embedder), vectors_dir=vec_dir)
    t0 = time.perf_counter()
    if any("vector" in CONFIGS[c] for c in configs):
        sync = search.sync(batch_size=64)
    else:  # lexical configs only: nothing to embed
        chunks = int(store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        sync = SyncReport(chunks, 0, 0, 0, 0, 0.0)
    embed_s = time.perf_counter() - t0
    lines = int(store.conn.execute("SELECT coalesce(sum(lines),0) FROM files").fetchone()[0])
    per_config: dict[str, list[dict[str, Any]]] = {}
    latencies: list[float] = []
    search.search("warm up the model", k=5)
    for cfg in configs:
        rows = []
        for q in queries:
            t = time.perf_counter()
            resp = search.search(q["query"], k=30, legs=CONFIGS[cfg])
            ms = (time.perf_counter() - t) * 1000
            if cfg == "fused":
                latencies.append(ms)
            chunks = [(prefix + h.path, h.start_line, h.end_line) for h in resp.items]
            files = list(dict.fromkeys(p for p, _, _ in chunks))
            score = ndcg10(files, chunks, list(q["relevant"]) + list(q.get("secondary", [])))
            rows.append({"query": q["query"], "category": q["category"], "ndcg": score, "top": files[:3]})
        per_config[cfg] = rows
    store.close()
    return {
        "repo": name,
        "language": repo["language"],
        "files": report.files,
        "chunks": sync.chunks,
        "lines": lines,
        "index_s": round(index_s, 2),
        "embed_s": round(embed_s, 2),
        "embedded": sync.embedded,
        "chunks_per_s": round(sync.embedded / embed_s, 1) if sync.embedded and embed_s > 0 else None,
        "p50_ms": round(pct(latencies, 0.5), 1),
        "p90_ms": round(pct(latencies, 0.9), 1),
        "queries": len(queries),
        "ndcg": {cfg: round(statistics.mean(r["ndcg"] for r in rows), 4) for cfg, rows in per_config.items()},
        "per_query": per_config,
    }


def summarize(results: list[dict[str, Any]], configs: list[str]) -> dict[str, dict[str, float]]:
    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        for cfg in configs:
            for q in r["per_query"][cfg]:
                for g in ("overall", q["category"], r["language"]):
                    groups[g][cfg].append(q["ndcg"])
    return {g: {cfg: round(statistics.mean(v), 4) for cfg, v in d.items()} for g, d in groups.items()}


def table(results: list[dict[str, Any]], summary: dict[str, dict[str, float]], configs: list[str]) -> str:
    head = "| repo | lang | files | lines | chunks | index s | embed s | q p50 ms | q p90 ms | " + " | ".join(configs) + " |"
    out = [head, "|" + "---|" * (9 + len(configs))]
    for r in results:
        out.append(
            f"| {r['repo']} | {r['language']} | {r['files']} | {r['lines']} | {r['chunks']} | {r['index_s']} | "
            f"{r['embed_s']} | {r['p50_ms']} | {r['p90_ms']} | " + " | ".join(f"{r['ndcg'][c]:.3f}" for c in configs) + " |"
        )
    out.append("")
    out.append("| group | n | " + " | ".join(configs) + " | semble |")
    out.append("|" + "---|" * (3 + len(configs)))
    counts: dict[str, int] = defaultdict(int)
    for r in results:
        for q in r["per_query"][configs[0]]:
            counts["overall"] += 1
            counts[q["category"]] += 1
            counts[r["language"]] += 1
    for g in ["overall", "architecture", "semantic", "symbol", *sorted({r["language"] for r in results})]:
        if g in summary:
            sem = SEMBLE.get(g)
            out.append(
                f"| {g} | {counts[g]} | " + " | ".join(f"{summary[g].get(c, float('nan')):.3f}" for c in configs)
                + f" | {sem if sem is not None else '-'} |"
            )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", default="", help="comma-separated repo names")
    ap.add_argument("--languages", default="python", help="comma-separated languages (when --repos is empty)")
    ap.add_argument("--model", default="default", help="'default' (MiniLM) or a local model directory")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--max-seq-length", type=int, default=DEFAULT_MAX_SEQ_LENGTH, help="transformer tokens per chunk")
    ap.add_argument("--cold", action="store_true", help="delete the bench indexes (and their vectors) first")
    ap.add_argument("--cold-index", action="store_true", help="time a cold index run into a throwaway database")
    ap.add_argument("--out", default=str(HERE / "results" / "semble.json"))
    ap.add_argument("--merge", default="", help="comma-separated result files to combine into --out (no run)")
    args = ap.parse_args()
    if args.merge:
        parts = [json.loads(Path(f).read_text()) for f in args.merge.split(",")]
        configs = parts[0]["configs"]
        results = [r for part in parts for r in part["repos"]]
        write(Path(args.out), parts[0]["model"], configs, results, parts[0].get("max_seq_length"))
        return
    repos = json.loads((BENCH / "repos.json").read_text())
    if args.repos:
        wanted = args.repos.split(",")
        chosen = [r for r in repos if r["name"] in wanted]
    else:
        langs = set(args.languages.split(","))
        chosen = [r for r in repos if r["language"] in langs]
    chosen = [r for r in chosen if (CORPORA / r["name"]).exists()]
    configs = args.configs.split(",")
    model = None if args.model == "default" else args.model
    results = []
    for repo in chosen:
        r = run_repo(repo, model, args.cold, configs, args.max_seq_length, args.cold_index)
        results.append(r)
        print(
            f"{r['repo']:12s} {r['language']:10s} chunks={r['chunks']:6d} index={r['index_s']:6.1f}s "
            f"embed={r['embed_s']:7.1f}s p50={r['p50_ms']:6.1f}ms "
            + " ".join(f"{c}={r['ndcg'][c]:.3f}" for c in configs),
            flush=True,
        )
    write(Path(args.out), args.model, configs, results, args.max_seq_length)


def write(out: Path, model: str, configs: list[str], results: list[dict[str, Any]], seq: int | None) -> None:
    summary = summarize(results, configs)
    text = table(results, summary, configs)
    print(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"model": model, "max_seq_length": seq, "configs": configs, "summary": summary, "repos": results}, indent=1
        )
    )
    out.with_suffix(".md").write_text(f"model: {model}, max_seq_length {seq}\n\n{text}\n")


if __name__ == "__main__":
    main()
