"""Measure the exact leg on a real repository: completeness, cold start, warm latency, memory.

    python bench/bench_refs.py [--corpus DIR] [--language python] [--n 40] [--seed 0]

Default corpus: a copy of the installed ``requests`` package under bench/corpora/ (gitignored).

- completeness: for N random functions/methods, the references ``Navigator.references(name)``
  returns (name → symbol table → definition positions → server, merged) against the same
  server asked directly at the definition position (a separate pool, no nav in between);
  per function |api ∩ direct| / |direct|.
- cold start: a new Navigator's first ``references`` call (server start + ready + answer).
- warm ``refs`` latency p50/p95 through the API (name resolution and index freshness included).
- server memory: RSS of the server's process tree after the run.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import percentile as pct  # noqa: E402
from lsp.pool import Position, ServerPool  # noqa: E402
from lsp.positions import to_lsp  # noqa: E402
from navigator.api import Navigator  # noqa: E402


def default_corpus() -> Path:
    import requests

    src = Path(requests.__file__).parent
    dst = HERE / "corpora" / "requests"
    if not dst.exists():
        shutil.copytree(src, dst / "requests", ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--language", default="python")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bench_refs.json")
    args = ap.parse_args()
    root = (args.corpus or default_corpus()).resolve()

    nav = Navigator(root)
    report = nav.index()
    (lines,) = nav.store.conn.execute(
        "SELECT COALESCE(SUM(lines), 0) FROM files WHERE language = ?", (args.language,)
    ).fetchone()
    rows = [
        r for r in nav.store.symbols(kinds=("function", "method"), language=args.language, limit=100_000)
    ]
    names_seen: set[str] = set()
    picks = []
    rng = random.Random(args.seed)
    rng.shuffle(rows)
    for r in rows:
        q = r.definition.qualified_name
        if q in names_seen or r.definition.name.startswith("__"):
            continue
        names_seen.add(q)
        picks.append(r)
        if len(picks) >= args.n:
            break

    # cold start through the API
    t0 = time.perf_counter()
    first = nav.references(picks[0].definition.qualified_name, deadline_s=120)
    cold_s = time.perf_counter() - t0

    direct_pool = ServerPool()
    results = []
    latencies = []
    for r in picks:
        d = r.definition
        t = time.perf_counter()
        resp = nav.references(d.qualified_name, deadline_s=60)
        latencies.append((time.perf_counter() - t) * 1e3)
        api = {(h.path, h.line, h.col) for h in resp.items if h.provenance == ("lsp",)}
        text = (root / d.path).read_text(encoding="utf-8").splitlines()[d.name_span.start_line - 1]
        line0, ch = to_lsp(text, d.name_span.start_line, d.name_span.start_col)
        ans = direct_pool.query(root, args.language, "references", [Position(str(root / d.path), line0, ch)], deadline_s=60)
        direct = set()
        for loc in ans.locations:
            rel = Path(loc.path).relative_to(root).as_posix()
            lt = (root / rel).read_text(encoding="utf-8").splitlines()[loc.start_line]
            from lsp.positions import from_lsp

            direct.add((rel, *from_lsp(lt, loc.start_line, loc.start_character)))
        # None: no server answer to compare with (none usable, or it failed)
        recall = (len(api & direct) / len(direct) if direct else 1.0) if ans.answered else None
        results.append({"name": d.qualified_name, "api": len(api), "direct": len(direct), "recall": recall,
                        "complete": resp.complete, "reason": resp.reason, "direct_complete": ans.complete,
                        "direct_reason": ans.reason, "ms": round(latencies[-1], 1),
                        "source": resp.source})  # fmt: skip
        print(f"{len(results):3d} {d.qualified_name}: api {len(api)} direct {len(direct)} "
              f"{latencies[-1]:.0f} ms {resp.reason or ''}", file=sys.stderr, flush=True)

    # warm p50/p95 on a second pass (all servers warm, files open): as a library user gets
    # it (the index and the servers' view refreshed by a stat walk before each query) ...
    warm = []
    for r in picks:
        t = time.perf_counter()
        nav.references(r.definition.qualified_name, deadline_s=60)
        warm.append((time.perf_counter() - t) * 1e3)
    # ... and as the daemon gets it (its watcher reports changes: no walk per query)
    nav.refresh = False
    warm_daemon = []
    for r in picks:
        t = time.perf_counter()
        nav.references(r.definition.qualified_name, deadline_s=60)
        warm_daemon.append((time.perf_counter() - t) * 1e3)

    info = nav.exact.pool.session_info(nav.root, args.language) or {}
    rss = 0
    if info.get("pid"):
        proc = psutil.Process(info["pid"])
        rss = sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])
    direct_pool.close()
    nav.close()

    out = {
        "corpus": str(root),
        "files": report.files,
        "language": args.language,
        "functions": len(results),
        "functions_server_answered": sum(1 for x in results if x["recall"] is not None),
        "mean_recall_vs_direct": (
            statistics.mean(x["recall"] for x in results if x["recall"] is not None)
            if any(x["recall"] is not None for x in results) else None
        ),
        "functions_100pct": sum(1 for x in results if x["recall"] == 1.0),
        "api_sources": sorted({x["source"] or "-" for x in results}),
        "incomplete_responses": sum(1 for x in results if not x["complete"]),
        "cold_first_refs_s": round(cold_s, 2),
        "cold_first_complete": first.complete,
        "cold_first_reason": first.reason,
        "server_ready_after_s": None if info.get("ready_after_s") is None else round(info["ready_after_s"], 2),
        "lines": lines,
        "first_pass_ms_p50": round(statistics.median(latencies), 1),
        "warm_refs_ms_p50": round(pct(warm, 0.5), 1),
        "warm_refs_ms_p95": round(pct(warm, 0.95), 1),
        "warm_refs_daemon_mode_ms_p50": round(pct(warm_daemon, 0.5), 1),
        "warm_refs_daemon_mode_ms_p95": round(pct(warm_daemon, 0.95), 1),
        "first_pass_ms_p95": round(pct(latencies, 0.95), 1),
        "mean_hits": round(statistics.mean(x["direct"] for x in results), 1),
        "server_rss_mb": round(rss / 2**20, 1),
        "server": info.get("server"),
        "per_function": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, out)
    print(json.dumps({k: v for k, v in out.items() if k != "per_function"}, indent=1))
    misses = [x for x in results if x["recall"] is not None and x["recall"] < 1.0]
    for x in misses:
        print("MISS", x)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
