"""A churned full-text index before and after its merge (``Store.text_index_upkeep``), paired.

Each cached instance index of the localization sets (``loc_full_bench.py``'s
``<set>/idx/inst/<id>.db``: a copy of a working store moved from base commit to base commit, as a
user's index is updated run after run) is copied twice; one copy is merged. Per instance, in one
process, the instance's query runs on both copies alternately (files view, lexical legs, warm:
``--rounds`` each after one warm-up); reported: the FTS5 segments and bytes of each, the merge's
time, the median per-instance latency ratio (merged / as is) with a bootstrap 95% interval, and
whether both copies give the same top-50 lists in both views (they must: a merge moves postings).

    PYTHONPATH=$PWD python bench/fts_upkeep.py --set loc --split dev --out bench/results/fts-upkeep-loc-dev.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_full_bench import LEXICAL, SETS, split_ids  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.stats import bootstrap_ci  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from storage.db import Store  # noqa: E402

FTS = ("chunks_fts", "symbols_fts")


def shape(store: Store) -> dict[str, int]:
    c = store.conn
    return {
        "segments": sum(
            int(c.execute(f"SELECT count(DISTINCT segid) FROM {t}_idx").fetchone()[0]) for t in FTS
        ),
        "bytes": sum(
            int(c.execute(f"SELECT coalesce(sum(length(block)), 0) FROM {t}_data").fetchone()[0]) for t in FTS
        ),
    }


def lists(search: SemanticSearch, query: str) -> list[list[tuple[str, int, float]]]:
    return [
        [
            (h.path, h.start_line, round(h.score, 9))
            for h in search.search(query, k=50, legs=LEXICAL, view=v).items
        ]
        for v in ("files", "code")
    ]


def one(db: Path, query: str, rounds: int, tmp: Path) -> dict[str, Any]:
    a, b = tmp / "as-is.db", tmp / "merged.db"
    shutil.copyfile(db, a)
    shutil.copyfile(db, b)
    sa, sb = Store(a), Store(b)
    try:
        before = shape(sb)
        t0 = time.perf_counter()
        merged = sb.text_index_upkeep(1 << 30, budget_s=float("inf"))
        merge_s = time.perf_counter() - t0
        after = shape(sb)
        qa, qb = SemanticSearch(sa), SemanticSearch(sb)
        same = lists(qa, query) == lists(qb, query)  # also the warm-up
        ta: list[float] = []
        tb: list[float] = []
        for n in range(rounds):
            for search, out in ((qa, ta), (qb, tb)) if n % 2 == 0 else ((qb, tb), (qa, ta)):
                t = time.perf_counter()
                search.search(query, k=50, legs=LEXICAL)
                out.append((time.perf_counter() - t) * 1e3)
        return {
            "merged": merged,
            "merge_s": round(merge_s, 3),
            "before": before,
            "after": after,
            "same_lists": same,
            "ms_as_is": round(statistics.median(ta), 2),
            "ms_merged": round(statistics.median(tb), 2),
        }
    finally:
        sa.close()
        sb.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=tuple(SETS), default="loc")
    ap.add_argument("--split", choices=("dev", "check"), default="dev")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    root = SETS[args.set]
    insts = [
        i
        for i in split_ids(args.set, args.split, list(jsonl(root / "instances.jsonl")))
        if (root / "idx" / "inst" / f"{i['id']}.db").exists()
    ]
    rows = []
    with tempfile.TemporaryDirectory(prefix="nav-fts-upkeep-") as tmp:
        for n, inst in enumerate(insts):
            r = {
                "id": inst["id"],
                **one(root / "idx" / "inst" / f"{inst['id']}.db", inst["query"], args.rounds, Path(tmp)),
            }
            rows.append(r)
            print(f"[{n + 1}/{len(insts)}] {inst['id']}: {r['before']['segments']}->{r['after']['segments']} segments, "
                  f"{r['ms_as_is']:.1f} -> {r['ms_merged']:.1f} ms, same={r['same_lists']}", file=sys.stderr, flush=True)  # fmt: skip
    ratios = [r["ms_merged"] / r["ms_as_is"] for r in rows]
    med = statistics.median
    summary = {
        "set": args.set,
        "split": args.split,
        "instances": len(rows),
        "same_lists": sum(r["same_lists"] for r in rows),
        "segments_median": [
            med(r["before"]["segments"] for r in rows),
            med(r["after"]["segments"] for r in rows),
        ],
        "fts_mb_median": [
            round(med(r["before"]["bytes"] for r in rows) / 1e6, 1),
            round(med(r["after"]["bytes"] for r in rows) / 1e6, 1),
        ],  # fmt: skip
        "merge_s_median": med(r["merge_s"] for r in rows),
        "merge_s_max": max(r["merge_s"] for r in rows),
        "p50_ms": [round(med(r["ms_as_is"] for r in rows), 1), round(med(r["ms_merged"] for r in rows), 1)],
        "ratio_median": round(med(ratios), 3),
        "ratio_median_ci": [round(x, 3) for x in bootstrap_ci(ratios, statistic=statistics.median)],
        "command": "python bench/fts_upkeep.py " + " ".join(sys.argv[1:]),
    }
    Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
