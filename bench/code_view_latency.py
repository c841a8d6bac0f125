"""Query latency of the code view's learned order against the fused code view and the files
view, paired, over the queries of a localization set (issue 18's budget: p50 <= 50 ms for a
one-line query, <= 200 ms for a 2,000-word issue).

Each instance's cached index (``loc_full_bench.py --build-only``) is opened once; its query runs
once in each view to warm the index's caches (not the query's: the pool's split lines are kept
per file, so the first run of a query pays for its files), then ``--reps`` rounds, each running
the three views in turn. Per instance the median of the rounds; reported: p50 / p95 over the
instances, per view, and the median of the per-instance ratios learned / fused, all from the
same runs. ``--cold``: the learned view's first run on each index, before any other query
(its files' lines split for the first time), as a separate column. ``--versus FIELD=VALUE ...``:
the files and code views of that ranking too, in the same rounds (``files-vs``, ``code-vs``), and
the median per-instance ratios shipped / versus.

    PYTHONPATH=$PWD python bench/code_view_latency.py --set loc --split check --out bench/results/x.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_full_bench import LEXICAL, SETS, parse_changes, split_ids  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.stats import percentile  # noqa: E402
from navigator import code_lines  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.ranking import DEFAULT  # noqa: E402
from storage.db import Store  # noqa: E402


def _ms(run: Any) -> float:
    t0 = time.perf_counter()
    run()
    return (time.perf_counter() - t0) * 1e3


def time_instance(
    store: Store, q: str, k: int, reps: int, versus: dict[str, Any] | None = None
) -> tuple[float, dict[str, list[float]]]:
    """The learned view's first run on this index, and ``reps`` rounds of the three views (five
    with ``versus``)."""
    learned = SemanticSearch(store)
    fused = SemanticSearch(store, config=dataclasses.replace(DEFAULT, code_order=None), share_with=learned)
    code_lines.clear_kept()  # the pool's kept lines are of this index only
    views = {
        "files": lambda: learned.search(q, k=k, legs=LEXICAL),
        "code-fused": lambda: fused.search(q, k=k, legs=LEXICAL, view="code"),
        "code": lambda: learned.search(q, k=k, legs=LEXICAL, view="code"),
    }
    if versus:
        other = SemanticSearch(store, config=dataclasses.replace(DEFAULT, **versus), share_with=learned)
        views["files-vs"] = lambda: other.search(q, k=k, legs=LEXICAL)
        views["code-vs"] = lambda: other.search(q, k=k, legs=LEXICAL, view="code")
    views["files"]()  # the index's caches (path index, vocabulary), not the learned view's
    cold = _ms(views["code"])
    for run in views.values():
        run()
    times: dict[str, list[float]] = {v: [] for v in views}
    for _ in range(reps):
        for v, run in views.items():
            times[v].append(_ms(run))
    return cold, times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=tuple(SETS), required=True)
    ap.add_argument("--split", choices=("dev", "check"), default="check")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--limit", type=int, default=0, help="the first N instances only")
    ap.add_argument("--versus", nargs="*", default=[], help="FIELD=VALUE ...: a second ranking, same rounds")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    root = SETS[args.set]
    insts = [
        i
        for i in split_ids(args.set, args.split, list(jsonl(root / "instances.jsonl")))
        if (root / "idx" / "inst" / f"{i['id']}.db").exists()
    ]
    if args.limit:
        insts = insts[: args.limit]
    versus = parse_changes(args.versus) if args.versus else None
    per: list[dict[str, Any]] = []
    for n, inst in enumerate(insts):
        q = inst["query"]
        store = Store(root / "idx" / "inst" / f"{inst['id']}.db")
        try:
            cold, times = time_instance(store, q, args.k, args.reps, versus)
        finally:
            store.close()
        row = {"id": inst["id"], "words": len(q.split()), "code cold": cold}
        row.update({v: statistics.median(xs) for v, xs in times.items()})
        per.append(row)
        print(
            f"[{n + 1}/{len(insts)}] {inst['id']}: "
            + " ".join(f"{v}={row[v]:.1f}" for v in (*times, "code cold")),
            file=sys.stderr,
            flush=True,
        )
    summary = {
        v: {
            "p50": round(percentile([r[v] for r in per], 0.5), 1),
            "p95": round(percentile([r[v] for r in per], 0.95), 1),
        }
        for v in ("files", "code-fused", "code", "code cold", *(("files-vs", "code-vs") if versus else ()))
    }
    ratio = statistics.median(r["code"] / r["code-fused"] for r in per)
    if versus:
        summary["shipped_over_versus_median_ratio"] = {
            v: round(statistics.median(r[v] / r[f"{v}-vs"] for r in per), 3) for v in ("files", "code")
        }
    res = {
        "set": args.set,
        "split": args.split,
        "instances": len(per),
        "k": args.k,
        "reps": args.reps,
        "words_p50": statistics.median(r["words"] for r in per),
        "ms": summary,
        "learned_over_fused_median_ratio": round(ratio, 2),
        "command": "python " + " ".join(sys.argv),
        "per_instance": per,
    }
    print(json.dumps({k: v for k, v in res.items() if k != "per_instance"}))
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
