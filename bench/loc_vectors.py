"""Vectors for the localization sets' cached indexes, so `loc_full_bench.py --vectors` can score
nav with every leg (the shipped default) beside its lexical legs, paired, in one run.

Each instance's index (`<set>/idx/inst/<id>.db`) holds one base commit of its repository; most
chunks recur across the commits of one repository. `fill` embeds every distinct chunk (by nav's
own embedding key: content, path, symbol, signature) of a repository's instances once, with the
product's embedder (`load_embedder()`: the default model on the runtime this CPU chose), into one
cache per repository (`<set>/idx/vec/<repo>.sqlite`); it resumes where it stopped. The bench then
builds each instance's vector index from that cache through nav's own `VectorIndex`.

    PYTHONPATH=$PWD nice python bench/loc_vectors.py fill --set loc_full --threads 2
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

from navigator.vector_sync import embed_key
from semantic.embed import embedding_text, load_embedder, set_thread_limit

CORPORA = Path("/work/corpora")


def repo_key(db: Path) -> str:
    """An instance index's repository, from its file name (``owner__name-123.db``)."""
    return re.sub(r"-\d+$", "", db.stem).lower()


def cache_path(root: Path, db: Path) -> Path:
    """The vector cache of the repository an instance index belongs to."""
    return root / "idx" / "vec" / f"{repo_key(db)}.sqlite"


def open_cache(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, model TEXT NOT NULL, vec BLOB NOT NULL)"
    )
    return conn


def instance_keys(db: Path) -> list[tuple[int, str, str | None, str | None, str, str]]:
    """(chunk id, path, symbol, signature, text, embedding key) of every chunk of one index."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT c.id, f.path, c.symbol, c.signature, c.text, c.hash FROM chunks c JOIN files f ON f.id = c.file_id"
        ).fetchall()
    finally:
        conn.close()
    return [(i, p, s, g, t, embed_key(h, p, s, g)) for i, p, s, g, t, h in rows]


def vectors_for(cache: sqlite3.Connection, keys: list[str], model: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for start in range(0, len(keys), 900):
        part = keys[start : start + 900]
        marks = ",".join("?" * len(part))
        for k, m, blob in cache.execute(f"SELECT key, model, vec FROM v WHERE key IN ({marks})", part):
            if m == model:
                out[k] = np.frombuffer(blob, dtype=np.float32)
    return out


def fill(set_name: str, threads: int, batch: int, repos: set[str]) -> None:
    root = CORPORA / set_name
    dbs = sorted((root / "idx" / "inst").glob("*.db"))
    by_repo: dict[str, list[Path]] = {}
    for db in dbs:
        by_repo.setdefault(repo_key(db), []).append(db)
    set_thread_limit(threads)
    emb = load_embedder()
    model = emb.model_id
    print(f"model {model}; {len(dbs)} indexes, {len(by_repo)} repositories", file=sys.stderr, flush=True)
    for repo, repo_dbs in sorted(by_repo.items()):
        if repos and repo not in repos:
            continue
        cache = open_cache(cache_path(root, repo_dbs[0]))
        have = {k for (k,) in cache.execute("SELECT key FROM v WHERE model = ?", (model,))}
        todo: dict[str, str] = {}
        for db in repo_dbs:
            for _i, p, s, g, t, k in instance_keys(db):
                if k not in have and k not in todo:
                    todo[k] = embedding_text(p, s, g, t)
        items = sorted(todo.items(), key=lambda kv: len(kv[1]))
        print(f"{repo}: {len(have)} cached, {len(items)} to embed", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        for start in range(0, len(items), batch):
            part = items[start : start + batch]
            vecs = emb.embed_documents([t for _, t in part])
            cache.executemany(
                "INSERT OR REPLACE INTO v(key, model, vec) VALUES (?,?,?)",
                [(k, model, vecs[j].astype(np.float32).tobytes()) for j, (k, _) in enumerate(part)],
            )
            cache.commit()
            done = start + len(part)
            if done % (batch * 20) < batch or done == len(items):
                rate = done / max(time.perf_counter() - t0, 1e-9)
                print(f"  {repo}: {done}/{len(items)} ({rate:.1f}/s)", file=sys.stderr, flush=True)
        cache.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fill", help="embed every distinct chunk of a set's cached indexes once")
    f.add_argument("--set", choices=("loc_full", "loc"), required=True)
    f.add_argument("--threads", type=int, default=2)
    f.add_argument("--batch", type=int, default=64)
    f.add_argument("--repos", default="", help="comma-separated repository keys (owner__name, lower case)")
    args = ap.parse_args()
    if args.cmd == "fill":
        fill(args.set, args.threads, args.batch, {r for r in args.repos.lower().split(",") if r})


if __name__ == "__main__":
    main()
