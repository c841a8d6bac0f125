"""Cost of the embedders, same process, interleaved: seconds per 1,000 chunks (real chunks of a
semble development repository, embedded as nav embeds them) and query-encoding latency (semble's
queries for that repository), each model in turn, ``--rounds`` times; medians over rounds.

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD python bench/static/embed_cost.py --repo flask \
        --models m2v=bench/corpora/static/minilm-m2v-256,m2v-ft=bench/corpora/static/minilm-m2v-256-ft,minilm-int8=default
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from bench.harness.data import SEMBLE, SEMBLE_CORPORA, semble_queries, semble_repos  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import percentile  # noqa: E402
from semantic.embed import StaticEmbedder, embedding_text, load_embedder, set_thread_limit  # noqa: E402
from semantic.languages import detect_language  # noqa: E402
from semantic.parse import parse_source  # noqa: E402


def repo_chunks(name: str, limit: int) -> list[str]:
    repo = next(r for r in semble_repos(SEMBLE) if r["name"] == name)
    root = SEMBLE_CORPORA / name / (repo.get("benchmark_root") or "")
    texts: list[str] = []
    for f in sorted(root.rglob("*")):
        lang = detect_language(str(f)) if f.is_file() else None
        if lang is None:
            continue
        rel = str(f.relative_to(root))
        for c in parse_source(rel, f.read_text(errors="replace"), lang).chunks:
            texts.append(embedding_text(rel, c.symbol, c.signature, c.text))
        if len(texts) >= limit:
            break
    return texts[:limit]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", default="flask")
    ap.add_argument(
        "--models", required=True, help="name=DIR,... (DIR 'default': MiniLM on its default runtime)"
    )
    ap.add_argument("--chunks", type=int, default=1000, help="chunks per round for a static model")
    ap.add_argument("--slow-chunks", type=int, default=100, help="chunks per round for a transformer")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    set_thread_limit(1)
    models = dict(p.split("=", 1) for p in args.models.split(","))
    embedders = {n: load_embedder(None if d == "default" else d) for n, d in models.items()}
    texts = repo_chunks(args.repo, args.chunks)
    queries = [q["query"] for q in semble_queries(args.repo, SEMBLE)]
    for e in embedders.values():  # load every model before timing
        e.embed_documents(texts[:2])
        e.embed_query("warm up")
    per1000: dict[str, list[float]] = {n: [] for n in embedders}
    query_ms: dict[str, list[float]] = {n: [] for n in embedders}
    for _ in range(args.rounds):
        for n, e in embedders.items():
            part = texts if isinstance(e, StaticEmbedder) else texts[: args.slow_chunks]
            t0 = time.perf_counter()
            e.embed_documents(part)
            per1000[n].append(1000 * (time.perf_counter() - t0) / len(part))
            for q in queries:
                t0 = time.perf_counter()
                e.embed_query(q)
                query_ms[n].append((time.perf_counter() - t0) * 1e3)
    res = {
        "repo": args.repo,
        "models": models,
        "chunks": len(texts),
        "queries": len(queries),
        "rounds": args.rounds,
        "s_per_1000_chunks_median": {n: round(statistics.median(v), 2) for n, v in per1000.items()},
        "query_encode_ms_p50": {n: round(percentile(v, 0.5), 2) for n, v in query_ms.items()},
        "query_encode_ms_p95": {n: round(percentile(v, 0.95), 2) for n, v in query_ms.items()},
    }
    lines = [
        f"embedding cost, same process, interleaved, {args.rounds} rounds ({args.repo}: {len(texts)} chunks, {len(queries)} queries; one thread)",
        "",
        "| model | s per 1,000 chunks (median of rounds) | query encode p50 ms | p95 ms |",
        "|---|---|---|---|",
    ]
    for n in embedders:
        lines.append(
            f"| {n} | {res['s_per_1000_chunks_median'][n]} | {res['query_encode_ms_p50'][n]} | {res['query_encode_ms_p95'][n]} |"
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        write_json(Path(args.out), res)
        Path(args.out).with_suffix(".md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
