"""The files view fused (RRF) with the file order of the learned code view (first appearance of
each file among its hits), on the development parts only (issue 18, stop 30; not kept).

    PYTHONPATH=$PWD python bench/archive/file_fusion.py --out /tmp/filefuse-dev.json

Per instance: the files view's and the code view's first 50 hits (lexical legs, as
`loc_full_bench.py`); then, for each weight of the code view's order and RRF constant, file
Acc@1/5/10 of the fused order minus the files view's, paired, 2,000 seeded resamples.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE.parent))

from loc_full_bench import LEXICAL, SETS, split_ids  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.metrics import acc_at_k, distinct  # noqa: E402
from bench.harness.stats import mean_ci  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from storage.db import Store  # noqa: E402


def dump(set_name: str) -> list[dict[str, Any]]:
    root = SETS[set_name]
    rows = []
    for inst in split_ids(set_name, "dev", jsonl(root / "instances.jsonl")):
        db = root / "idx" / "inst" / f"{inst['id']}.db"
        if not db.exists():
            continue
        store = Store(db)
        try:
            s = SemanticSearch(store)
            views = {v: s.search(inst["query"], k=50, legs=LEXICAL, view=v) for v in ("files", "code")}
        finally:
            store.close()
        rows.append(
            {"id": inst["id"], "gold": inst["gold_files"]}
            | {v: distinct([(h.path, h.start_line, h.end_line) for h in r.items]) for v, r in views.items()}
        )
    return rows


def fused(row: dict[str, Any], weight: float, k0: int) -> list[str]:
    score: dict[str, float] = {}
    for view, w in (("files", 1.0), ("code", weight)):
        for i, f in enumerate(row[view][:50]):
            score[f] = score.get(f, 0.0) + w / (k0 + i + 1)
    return sorted(score, key=lambda f: -score[f])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    data = {s: dump(s) for s in ("loc_full", "loc")}
    Path(args.out).write_text(json.dumps(data))
    for set_name, rows in data.items():
        print(f"{set_name} development ({len(rows)})")
        for weight in (0.25, 0.5, 1.0, 2.0):
            for k0 in (2, 10, 60):
                cells = []
                for k in (1, 5, 10):
                    m, lo, hi = mean_ci(
                        [
                            acc_at_k(fused(r, weight, k0), r["gold"], k) - acc_at_k(r["files"], r["gold"], k)
                            for r in rows
                        ]
                    )
                    cells.append(f"file@{k} {m:+.3f} [{lo:+.3f}, {hi:+.3f}]")
                print(f"  code weight {weight}, k {k0}: " + "  ".join(cells))


if __name__ == "__main__":
    main()
