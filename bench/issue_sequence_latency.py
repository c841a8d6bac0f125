"""Pasted issues one after another on one checkout's index: search latency with the connection's
document-frequency memo against the same search with it emptied for each query, paired per query
(alternating which runs first), lexical legs, in-process.

    PYTHONPATH=$PWD python bench/issue_sequence_latency.py [--index DB] [--repo django/django]

Default: the 114 django issues of ``../shared/bench/loc_full`` (full problem statements) against
one django instance's cached index (built by ``loc_full_bench.py --build-only``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import storage.sqlite_queries as queries  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from storage.db import Store  # noqa: E402

LEXICAL = ("bm25", "symbols", "path", "refs")
LOC_FULL = Path("/work/corpora/loc_full")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, default=LOC_FULL / "idx/inst/django__django-11964.db")
    ap.add_argument("--repo", default="django/django")
    ap.add_argument("--instances", type=Path, default=LOC_FULL / "instances.jsonl")
    args = ap.parse_args()
    with args.instances.open() as fh:
        texts = [row["query"] for row in map(json.loads, fh) if row["repo"] == args.repo]
    store = Store(args.index)
    search = SemanticSearch(store)
    search.search("warm up the caches", k=50, legs=LEXICAL)
    remembering = queries.IndexReads._doc_freq_memo

    def forgetting(self: Any) -> dict[tuple[str, str], tuple[int, int]]:
        return {}

    times: dict[bool, list[float]] = {True: [], False: []}
    for i, text in enumerate(texts):
        for memo in (True, False) if i % 2 else (False, True):
            queries.IndexReads._doc_freq_memo = remembering if memo else forgetting  # type: ignore[method-assign]
            t0 = time.perf_counter()
            search.search(text, k=50, legs=LEXICAL)
            times[memo].append((time.perf_counter() - t0) * 1e3)
    queries.IndexReads._doc_freq_memo = remembering  # type: ignore[method-assign]
    store.close()
    ratios = [a / b for a, b in zip(times[True], times[False], strict=True)]
    rng = random.Random(1)
    boots = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    print(
        f"{len(texts)} {args.repo} issues in sequence on {args.index.name}: memo p50 "
        f"{statistics.median(times[True]):.1f} ms, emptied p50 {statistics.median(times[False]):.1f} ms, "
        f"ratio per query median {statistics.median(ratios):.3f} [{boots[50]:.3f}, {boots[1949]:.3f}]"
    )


if __name__ == "__main__":
    main()
