"""Warm in-process search latency with the query encoded on 1 torch thread vs all of them.

    PYTHONPATH=$PWD python bench/query_threads.py PATH   # PATH: a root indexed with `nav index --embed`
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from navigator.search import SemanticSearch  # noqa: E402
from semantic.embed import SentenceTransformerEmbedder, thread_limit  # noqa: E402
from semantic.onnx_int8 import OnnxInt8Embedder  # noqa: E402
from storage.db import Store  # noqa: E402

QUERIES = [
    "where is a file's rows replaced in the database", "who starts the language server", "retry a failed request",
    "how are vectors saved to disk", "parse a python file into chunks", "the daemon's idle timeout",
    "what happens when the model cannot be loaded", "rank files by their best chunks", "watch the tree for changes",
    "format a hit for the terminal",
]  # fmt: skip


def main() -> None:
    store = Store(Path(sys.argv[1]) / ".nav" / "index.db")
    search = SemanticSearch(store)
    search.search("warm up", k=10)
    emb = search.embedder
    if not isinstance(emb, (SentenceTransformerEmbedder, OnnxInt8Embedder)):
        raise SystemExit("needs the default model (on torch or ONNX Runtime)")
    print("vectors/chunks", search.refresh(), type(emb).__name__, "threads", thread_limit())
    for threads in (1, thread_limit()):
        emb._query_threads = threads
        ms = []
        for _ in range(2):
            for q in QUERIES:
                t = time.perf_counter()
                search.search(q, k=10)
                ms.append((time.perf_counter() - t) * 1e3)
        ms.sort()
        print(f"query threads {threads}: p50 {statistics.median(ms):.0f} ms, p95 {ms[int(0.95 * len(ms)) - 1]:.0f} ms (n={len(ms)})")


if __name__ == "__main__":
    main()
