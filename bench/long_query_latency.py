"""Warm search latency of 2,000-word queries against one-line ones, in-process, lexical legs.

    PYTHONPATH=$PWD python bench/long_query_latency.py INDEX.db TREE "one-line summary" [--rounds 15] \
        [--view files --view code --view code-fused] [--k 10]

The long query is the one-line summary followed by 2,000 words of TREE's README / change log
(as ``loc_bench.py --long-per-repo``), then a Python traceback naming two of TREE's files; each
round times the one-line query, the long query and the long query with a different summary
(so nothing is answered from a per-query cache). Prints p50/p95 and the long/one-line ratio,
in-process (``SemanticSearch.search``, lexical legs) and, with ``--daemon``, through TREE's
daemon (``Navigator.search`` over its socket; the index must be TREE/.nav).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from loc_bench import long_text  # noqa: E402

from bench.harness.stats import percentile as pct  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.ranking import DEFAULT  # noqa: E402
from storage.db import Store  # noqa: E402

LEXICAL = ("bm25", "symbols", "path", "refs")


def traceback_of(store: Store) -> str:
    rows = store.conn.execute(
        "SELECT f.path, s.name FROM symbols s JOIN files f ON f.id = s.file_id "
        "WHERE s.kind IN ('function', 'method') AND f.path LIKE '%.py' ORDER BY s.id LIMIT 2"
    ).fetchall()
    frames = "".join(
        f'  File "/usr/lib/python3.12/site-packages/{p}", line 10, in {n}\n    x = y()\n' for p, n in rows
    )
    return "\nTraceback (most recent call last):\n" + frames + "ValueError: boom\n"


def long_query(tree: Path, summary: str, words: int = 2000) -> str:
    """``loc_bench.long_text``, topped up from the tree's .rst/.md/.txt files when its README and
    change log are short (Django's README has 400 words)."""
    text = long_text(tree, summary, words)
    have = text.split()
    if len(have) < words:
        pool: list[str] = []
        for f in sorted(tree.glob("**/*.txt")) + sorted(tree.glob("**/*.rst")) + sorted(tree.glob("**/*.md")):
            pool.extend(f.read_text(errors="replace").split())
            if len(pool) > words:
                break
        text += " " + " ".join(pool[: words - len(have) + 1])
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("tree")
    ap.add_argument("query")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument(
        "--view",
        action="append",
        choices=("files", "code", "code-fused"),
        help="views timed in process, each round in turn (default: files); code-fused: the code view "
        "without the learned order (RankingConfig.code_order=None)",
    )
    ap.add_argument(
        "--daemon",
        action="store_true",
        help="also time Navigator.search through TREE's daemon (started here with NAV_DAEMON_NO_EMBED=1 and NAV_DAEMON_NO_WARM=1, stopped after)",
    )
    ap.add_argument(
        "--vectors",
        metavar="SET_ROOT",
        help="every leg: DB is an instance index of a localization set (SET_ROOT, e.g. /work/corpora/loc_full) "
        "whose vectors `loc_vectors.py fill` cached; times each view with and without the vector feedback leg "
        "(RankingConfig.vector_feedback 0.5 on long queries) against vector_feedback 0",
    )
    args = ap.parse_args()
    store = Store(Path(args.db))
    if args.vectors:
        with tempfile.TemporaryDirectory(prefix="nav-lql-") as vdir:
            every_leg_rounds(store, Path(args.db), Path(args.vectors), Path(vdir), args)
        store.close()
        return
    search = SemanticSearch(store)
    if args.daemon:
        from navigator.frontends.client import DaemonClient

        os.environ["NAV_DAEMON_NO_EMBED"] = "1"  # no background embedding beside the queries
        os.environ["NAV_DAEMON_NO_WARM"] = "1"  # nor language servers analysing the tree
        client = DaemonClient(Path(args.tree))
        try:
            client.connect()
            timed_rounds(
                "daemon",
                lambda q: client.search(q, k=50),
                queries_of(store, Path(args.tree), args.query),
                args.rounds,
            )
        finally:
            client.stop()
            client.close()
    queries = queries_of(store, Path(args.tree), args.query)
    fused = SemanticSearch(store, config=dataclasses.replace(DEFAULT, code_order=None), share_with=search)
    views = args.view or ["files"]
    runners: dict[str, Callable[[str], object]] = {}
    for view in views:
        engine, how = (fused, "code") if view == "code-fused" else (search, view)
        runners[view] = lambda q, engine=engine, how=how: engine.search(q, k=args.k, legs=LEXICAL, view=how)
    paired_rounds(f"in-process, k={args.k}", runners, queries, args.rounds)
    chunks = store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    print(f"{args.db}: {chunks} chunks")
    store.close()


def every_leg_rounds(store: Store, db: Path, set_root: Path, vdir: Path, args: argparse.Namespace) -> None:
    """:func:`paired_rounds` with every leg (the instance's vectors from the set's cache), each
    view without and with the vector feedback leg."""
    from loc_vectors import cache_path, open_cache, vectors_for

    from navigator.vector_sync import embed_key
    from semantic.embed import load_embedder, set_thread_limit
    from semantic.vectors import VectorIndex

    set_thread_limit(1)
    embedder = load_embedder()
    keys = {k.id: embed_key(k.hash, k.path, k.symbol, k.signature) for k in store.chunk_keys()}
    cache = open_cache(cache_path(set_root, db))
    try:
        vecs = vectors_for(cache, sorted(set(keys.values())), embedder.model_id)
    finally:
        cache.close()
    have = [i for i, k in keys.items() if k in vecs]
    if len(have) < len(keys):
        raise SystemExit(
            f"{db}: {len(keys) - len(have)} chunks have no cached vector: run loc_vectors.py fill"
        )
    off = dataclasses.replace(DEFAULT, vector_feedback=0.0)
    on = dataclasses.replace(DEFAULT, vector_feedback=0.5, vector_feedback_long_only=True)
    base = SemanticSearch(store, config=off, embedder=embedder, vectors_dir=vdir)
    index = VectorIndex(int(next(iter(vecs.values())).shape[0]), embedder.model_id)
    index.add(have, [keys[i] for i in have], np.vstack([vecs[keys[i]] for i in have]))
    index.maybe_go_approximate()
    index.save(base.vectors_path)
    base.sync(max_embed=0)
    fb = SemanticSearch(store, config=on, share_with=base)
    runners: dict[str, Callable[[str], object]] = {}
    for view in args.view or ["files"]:
        how = "code" if view.startswith("code") else "files"
        for name, engine in (("", base), (" +vprf", fb)):
            runners[view + name] = lambda q, engine=engine, how=how: engine.search(q, k=args.k, view=how)
    paired_rounds(
        f"in-process, every leg, k={args.k}",
        runners,
        queries_of(store, Path(args.tree), args.query),
        args.rounds,
    )
    print(f"{db}: {len(keys)} chunks, {len(have)} vectors")


def queries_of(store: Store, tree: Path, summary: str) -> dict[str, str]:
    tb = traceback_of(store)
    return {
        "one-line": summary,
        "2,000 words": long_query(tree, summary) + tb,
        "2,000 words, other summary": long_query(tree, "an unrelated summary about configuration loading")
        + tb,
    }


def timed_rounds(label: str, run: Callable[[str], object], queries: dict[str, str], rounds: int) -> None:
    """Warm once per query (caches of the index, not of the query), then ``rounds`` rounds."""
    for q in queries.values():
        run(q)
    times: dict[str, list[float]] = {name: [] for name in queries}
    for _ in range(rounds):
        for name, q in queries.items():
            t0 = time.perf_counter()
            run(q)
            times[name].append((time.perf_counter() - t0) * 1e3)
    base = statistics.median(times["one-line"])
    print(f"{label}: {len(queries['2,000 words'].split())} words, {rounds} rounds")
    for name, xs in times.items():
        med = statistics.median(xs)
        print(f"  {name}: p50 {med:.1f} ms, p95 {pct(xs, 0.95):.1f} ms, x{med / base:.1f} of one-line")


def paired_rounds(
    label: str, runners: dict[str, Callable[[str], object]], queries: dict[str, str], rounds: int
) -> None:
    """:func:`timed_rounds` of several views at once: each round runs every query in every view in
    turn, so the views share the machine's state; the ratios are of medians of the same rounds."""
    for run in runners.values():
        for q in queries.values():
            run(q)
    times: dict[tuple[str, str], list[float]] = {(v, n): [] for v in runners for n in queries}
    for _ in range(rounds):
        for name, q in queries.items():
            for view, run in runners.items():
                t0 = time.perf_counter()
                run(q)
                times[(view, name)].append((time.perf_counter() - t0) * 1e3)
    first = next(iter(runners))
    print(f"{label}: {len(queries['2,000 words'].split())} words, {rounds} rounds, views {list(runners)}")
    for name in queries:
        base = statistics.median(times[(first, name)])
        for view in runners:
            xs = times[(view, name)]
            med = statistics.median(xs)
            print(
                f"  {name} [{view}]: p50 {med:.1f} ms, p95 {pct(xs, 0.95):.1f} ms, x{med / base:.2f} of {first}"
            )


if __name__ == "__main__":
    main()
