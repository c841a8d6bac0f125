"""Issue 9 lever (measured, not kept): a file-level BM25 leg for issue localization.

Each file becomes one BM25 document (its chunks' indexed text, porter-stemmed like nav's
own FTS table), searched with nav's own query analysis; the files it ranks are fused with
nav's files view by RRF at several weights and k. Development split only (bench/README.md,
"Issue 9, third round"):

    PYTHONPATH=$PWD nice -n 5 python bench/archive/loc_filedoc.py --split dev --out /tmp/filedoc_dev.json
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import loc_bench as lb  # noqa: E402

from navigator.search import SemanticSearch  # noqa: E402
from semantic import analysis, fusion, lexical  # noqa: E402
from storage.query import IndexQueries  # noqa: E402

TOKENIZER = "porter unicode61 tokenchars '_'"


def file_documents(conn: sqlite3.Connection) -> tuple[sqlite3.Connection, dict[int, str]]:
    """An in-memory FTS5 table with one row per file: (its path's words, all its chunks' text)."""
    db = sqlite3.connect(":memory:")
    db.execute(f'CREATE VIRTUAL TABLE d USING fts5(path, body, tokenize="{TOKENIZER}")')
    real = dict(conn.execute("SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id"))
    docs: dict[str, list[str]] = defaultdict(list)
    heads: dict[str, str] = {}
    for rowid, path_words, sym, text in conn.execute("SELECT rowid, path, symbol, text FROM chunks_fts"):
        p = real.get(rowid)
        if p is not None:
            heads[p] = path_words
            docs[p].append(f"{sym or ''} {text or ''}")
    ids: dict[int, str] = {}
    for i, (p, parts) in enumerate(docs.items()):
        ids[i] = p
        db.execute("INSERT INTO d(rowid, path, body) VALUES (?,?,?)", (i, heads[p], " ".join(parts)))
    return db, ids


def file_search(db: sqlite3.Connection, ids: dict[int, str], store: IndexQueries, q: str, k: int = 50) -> list[str]:
    match = lexical.content_query(lexical.cap_terms(store, analysis.query_terms(q)))
    if not match:
        return []
    try:
        rows = db.execute("SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d, 2.0, 1.0) LIMIT ?", (match, k)).fetchall()
    except sqlite3.OperationalError:
        return []
    return [ids[int(r[0])] for r in rows]


def rrf_files(lists: list[list[str]], weights: list[float], k: int) -> list[str]:
    score: dict[str, float] = {}
    for files, w in zip(lists, weights, strict=True):
        for i, p in enumerate(files):
            score[p] = score.get(p, 0.0) + w / (k + i + 1)
    return sorted(score, key=lambda p: -score[p])


def collect(split: str) -> list[dict[str, Any]]:
    rows = []
    for store, inst in lb.at_base_commits(split):
        resp = SemanticSearch(store).search(inst["query"], k=50, legs=lb.LEXICAL)
        db, ids = file_documents(store.conn)
        rows.append(
            {
                "id": inst["id"],
                "gold": inst["gold_files"],
                "nav": list(dict.fromkeys(h.path for h in resp.items)),
                "filedoc": file_search(db, ids, store, inst["query"]),
            }
        )
        db.close()
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    def acc(files: list[str], gold: list[str], k: int) -> float:
        return 1.0 if set(files[:k]) & set(gold) else 0.0

    systems: dict[str, list[list[str]]] = defaultdict(list)
    for r in rows:
        no_tests = [p for p in r["filedoc"] if not fusion._TEST.search(p)]
        systems["nav"].append(r["nav"])
        systems["filedoc"].append(r["filedoc"])
        systems["filedoc, tests dropped"].append(no_tests)
        for w in (0.25, 0.5, 1.0):
            for k in (10, 30, 60):
                systems[f"nav + filedoc, RRF w {w} k {k}"].append(rrf_files([r["nav"], no_tests], [1.0, w], k))
    rng = random.Random(0)
    print("| system | Acc@1 | Acc@5 | Acc@10 | Δ Acc@5 vs nav [95% CI] |\n|---|---|---|---|---|")
    for name, lists in systems.items():
        cells = [statistics.fmean(acc(f, r["gold"], k) for f, r in zip(lists, rows, strict=True)) for k in (1, 5, 10)]
        d = [acc(f, r["gold"], 5) - acc(r["nav"], r["gold"], 5) for f, r in zip(lists, rows, strict=True)]
        means = sorted(statistics.fmean(rng.choices(d, k=len(d))) for _ in range(2000))
        print(f"| {name} | " + " | ".join(f"{c:.3f}" for c in cells) + f" | {statistics.fmean(d):+.3f} [{means[50]:+.3f}, {means[1949]:+.3f}] |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="dev", choices=["dev", "check"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--report-only", action="store_true", help="re-read --out instead of running")
    args = ap.parse_args()
    if args.report_only:
        rows = json.loads(Path(args.out).read_text())
    else:
        rows = collect(args.split)
        Path(args.out).write_text(json.dumps(rows))
    report(rows)


if __name__ == "__main__":
    main()
