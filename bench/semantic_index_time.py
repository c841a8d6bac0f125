"""Time a full semantic index of one semble corpus: parse + SQLite, then embed every chunk.

    .venv/bin/python bench/semantic_index_time.py tokio

Writes a throwaway database under /tmp/embtime/ (the corpus is only read).
"""

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench.harness.data import SEMBLE_CORPORA  # noqa: E402
from navigator.indexer import index_root  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.embed import load_embedder  # noqa: E402
from storage.db import Store  # noqa: E402


def main(name: str) -> None:
    root = SEMBLE_CORPORA / name
    db = Path(f"/tmp/embtime/{name}.db")
    shutil.rmtree(db.parent, ignore_errors=True)
    db.parent.mkdir(parents=True)
    t0 = time.perf_counter()
    store = Store(db)
    report = index_root(root, store)
    t1 = time.perf_counter()
    search = SemanticSearch(store, embedder=load_embedder(None), vectors_dir=db.parent / "vec")
    sync = search.sync(batch_size=64)
    t2 = time.perf_counter()
    lines = store.conn.execute("SELECT sum(lines) FROM files").fetchone()[0]
    print(
        f"{name}: {lines} lines, {report.files} files, {sync.chunks} chunks; parse+index {t1 - t0:.1f} s; "
        f"embed {sync.embedded} chunks in {t2 - t1:.1f} s (model load included) = "
        f"{sync.embedded / (t2 - t1):.1f}/s; total {t2 - t0:.1f} s"
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", help="a semble repository exported under the corpora folder")
    main(ap.parse_args().name)
