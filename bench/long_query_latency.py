"""Warm search latency of 2,000-word queries against one-line ones, in-process, lexical legs.

    PYTHONPATH=$PWD python bench/long_query_latency.py INDEX.db TREE "one-line summary" [--rounds 15]

The long query is the one-line summary followed by 2,000 words of TREE's README / change log
(as ``loc_bench.py --long-per-repo``), then a Python traceback naming two of TREE's files; each
round times the one-line query, the long query and the long query with a different summary
(so nothing is answered from a per-query cache). Prints p50/p95 and the long/one-line ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_bench import long_text  # noqa: E402

from navigator.search import SemanticSearch  # noqa: E402
from storage.db import Store  # noqa: E402

LEXICAL = ("bm25", "symbols", "path", "refs")


def traceback_of(store: Store) -> str:
    rows = store.conn.execute(
        "SELECT f.path, s.name FROM symbols s JOIN files f ON f.id = s.file_id "
        "WHERE s.kind IN ('function', 'method') AND f.path LIKE '%.py' ORDER BY s.id LIMIT 2"
    ).fetchall()
    frames = "".join(f'  File "/usr/lib/python3.12/site-packages/{p}", line 10, in {n}\n    x = y()\n' for p, n in rows)
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


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("tree")
    ap.add_argument("query")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    store = Store(Path(args.db))
    search = SemanticSearch(store)
    tb = traceback_of(store)
    long_a = long_query(Path(args.tree), args.query) + tb
    long_b = long_query(Path(args.tree), "an unrelated summary about configuration loading") + tb
    queries = {"one-line": args.query, "2,000 words": long_a, "2,000 words, other summary": long_b}
    for q in queries.values():
        search.search(q, k=50, legs=LEXICAL)  # warm: caches of the index, not of the query
    times: dict[str, list[float]] = {name: [] for name in queries}
    for _ in range(args.rounds):
        for name, q in queries.items():
            t0 = time.perf_counter()
            search.search(q, k=50, legs=LEXICAL)
            times[name].append((time.perf_counter() - t0) * 1e3)
    base = statistics.median(times["one-line"])
    chunks = store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    print(f"{args.db}: {chunks} chunks, {len(long_a.split())} words, {args.rounds} rounds")
    for name, xs in times.items():
        med = statistics.median(xs)
        print(f"  {name}: p50 {med:.1f} ms, p95 {pct(xs, 0.95):.1f} ms, x{med / base:.1f} of one-line")
    store.close()


if __name__ == "__main__":
    main()
