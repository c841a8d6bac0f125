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
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_bench import long_text  # noqa: E402
from loc_full_bench import parse_changes  # noqa: E402

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
        "--variant",
        action="append",
        default=[],
        help="'NAME FIELD=VALUE ...': each view also timed with these RankingConfig fields changed, "
        "in the same rounds (paired), e.g. 'notitle title_leg=False'",
    )
    args = ap.parse_args()
    store = Store(Path(args.db))
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
        for spec in args.variant:
            name, *assignments = spec.split()
            config = dataclasses.replace(engine.config, **parse_changes(assignments))
            other = SemanticSearch(store, config=config, share_with=search)
            runners[f"{view}[{name}]"] = lambda q, engine=other, how=how: engine.search(
                q, k=args.k, legs=LEXICAL, view=how
            )
    paired_rounds(f"in-process, k={args.k}", runners, queries, args.rounds)
    chunks = store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    print(f"{args.db}: {chunks} chunks")
    store.close()


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
