"""Paired per-query NDCG@10 differences between two semble_bench.py result files (new − old),
with 95% bootstrap intervals, for every config both ran: finer than the per-repository pairing
``semble_bench.py --compare`` prints, for changes (a runtime, a model) that touch every query.

    python bench/paired_queries.py OLD.json NEW.json
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness.stats import bootstrap_ci  # noqa: E402


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit("usage: paired_queries.py OLD.json NEW.json")
    old, new = (json.loads(Path(p).read_text()) for p in sys.argv[1:])
    before = {r["repo"]: r for r in old["repos"]}
    repos = [r for r in new["repos"] if r["repo"] in before]
    for cfg in [c for c in new["configs"] if c in old["configs"]]:
        diffs: list[float] = []
        olds: list[float] = []
        for r in repos:
            for a, b in zip(before[r["repo"]]["per_query"][cfg], r["per_query"][cfg], strict=True):
                if a["query"] != b["query"]:
                    raise SystemExit(
                        f"{r['repo']}: the two runs have different queries ({a['query'][:60]!r})"
                    )
                olds.append(a["ndcg"])
                diffs.append(b["ndcg"] - a["ndcg"])
        lo, hi = bootstrap_ci(diffs, min_items=2)
        changed = sum(abs(d) > 1e-9 for d in diffs)
        print(
            f"{cfg:8s} {len(repos)} repos {len(diffs)} queries: {statistics.fmean(olds):.4f} -> "
            f"{statistics.fmean(olds) + statistics.fmean(diffs):.4f}  diff {statistics.fmean(diffs):+.4f} "
            f"[{lo:+.4f}, {hi:+.4f}]  queries changed: {changed}"
        )


if __name__ == "__main__":
    main()
