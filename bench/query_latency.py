"""Warm search latency (query encoding included) over semble's queries, on the bench indexes.

    .venv/bin/python bench/query_latency.py flask requests click pydantic gin tokio

Needs the indexes that `semble_bench.py` leaves in bench/corpora/.idx/ (MiniLM, 128 tokens).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench.harness.data import SEMBLE_CORPORA, semble_queries  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.embed import load_embedder  # noqa: E402
from storage.db import Store  # noqa: E402


def main(names: list[str]) -> None:
    embedder = load_embedder(None)
    idx = SEMBLE_CORPORA / ".idx" / "st_all-MiniLM-L6-v2_b772cb8ab1_128"
    for name in names:
        store = Store(idx / f"{name}.db")
        search = SemanticSearch(store, embedder=embedder, vectors_dir=idx / f"{name}.vectors")
        search.search("warm up", k=10)
        queries = semble_queries(name)
        times = []
        for q in queries:
            t = time.perf_counter()
            search.search(q["query"], k=10)
            times.append((time.perf_counter() - t) * 1000)
        p90 = sorted(times)[int(0.9 * (len(times) - 1))]
        print(f"{name}: p50 {statistics.median(times):.1f} ms, p90 {p90:.1f} ms over {len(times)} queries")
        store.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="+", help="semble repositories with a MiniLM bench index")
    main(ap.parse_args().names)
