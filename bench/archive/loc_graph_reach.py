"""Issue 9 diagnostic: could the reference graph lift function recall?

Of the gold functions the code view (``view="code"``, lexical legs) leaves out of its top 10,
how many are callees (definitions of names referenced inside a hit; names defined at most 5
times) or callers (definitions holding a reference to a hit's name) of its top N hits, and how
many candidates that neighbourhood holds. Development split only (bench/README.md, "Issue 9,
third round"):

    PYTHONPATH=$PWD nice -n 5 python bench/archive/loc_graph_reach.py --split dev --top 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import loc_bench as lb  # noqa: E402

from navigator.search import SemanticSearch  # noqa: E402
from storage.db import Store  # noqa: E402


def innermost(defs: lb.Defs, path: str, line: int) -> str | None:
    around = [(e - s, qn) for s, e, qn in defs.by_path.get(path, []) if s <= line <= e]
    return f"{path}::{min(around)[1]}" if around else None


def neighbours(store: Store, defs: lb.Defs, spans: list[tuple[str, int, int]]) -> tuple[list[str], list[str]]:
    conn = store.conn
    file_id = {str(p): int(i) for p, i in conn.execute("SELECT path, id FROM files")}
    path_of = {i: p for p, i in file_id.items()}
    by_name: dict[str, list[str]] = defaultdict(list)
    for path, items in defs.by_path.items():
        for _s, _e, qn in items:
            by_name[qn.rsplit(".", 1)[-1]].append(f"{path}::{qn}")
    callees: list[str] = []
    callers: list[str] = []
    for path, start, end in spans:
        fid = file_id.get(path)
        if fid is None:
            continue
        sql = "SELECT DISTINCT name FROM refs WHERE file_id = ? AND line BETWEEN ? AND ?"
        for (name,) in conn.execute(sql, (fid, start, end)):
            found = by_name.get(name, [])
            if 0 < len(found) <= 5:
                callees.extend(found)
        name = (innermost(defs, path, start) or "").rsplit("::", 1)[-1].rsplit(".", 1)[-1]
        if name and name != "<module>":
            for other, line in conn.execute("SELECT file_id, line FROM refs WHERE name = ? LIMIT 200", (name,)):
                p = path_of.get(int(other))
                holder = innermost(defs, p, int(line)) if p and p.endswith(".py") else None
                if holder:
                    callers.append(holder)
    return list(dict.fromkeys(callees)), list(dict.fromkeys(callers))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="dev", choices=["dev", "check"])
    ap.add_argument("--top", type=int, default=5, help="code-view hits whose neighbours are taken")
    args = ap.parse_args()
    out: list[dict[str, Any]] = []
    for store, inst in lb.at_base_commits(args.split):
        code = SemanticSearch(store).search(inst["query"], k=50, legs=lb.LEXICAL, view="code")
        defs = lb.Defs(store.conn)
        spans = [(h.path, h.start_line, h.end_line) for h in code.items]
        fns = lb.function_list(spans, defs, exact=True)
        callees, callers = neighbours(store, defs, spans[: args.top])
        top10 = set(fns[:10])
        missed = [g for g in inst["gold_functions"] if g not in top10 and not g.endswith("<module>")]
        out.append({"id": inst["id"], "missed": missed, "fns": fns, "callees": callees, "callers": callers})
    total = sum(len(r["missed"]) for r in out)
    print(f"{len(out)} instances; gold functions (not <module>) missed by the code view's top 10: {total}")
    for key in ("callees", "callers"):
        hit = sum(1 for r in out for g in r["missed"] if g in r[key])
        size = statistics.median(len(r[key]) for r in out)
        print(f"  among the {key} of its top {args.top} hits: {hit} (median {size} candidates per instance)")
    tail = sum(1 for r in out for g in r["missed"] if g in r["fns"])
    print(f"  already at ranks 11-50 of the code view: {tail}")


if __name__ == "__main__":
    main()
