"""Pair ``semble_bench.py`` result files that differ only in the embedding model (same queries,
same code, same lexical legs), per query: NDCG@10 of each config, the paired difference of every
model against each one before it (and of each vector config against the lexical legs) with a 95% bootstrap interval (2,000 resamples over queries, seed 0),
and the cost: embedding chunks/s (sum of chunks / sum of seconds) and query p50 (median of the
repositories' p50, first config timed).

    python bench/static/compare_semble.py --label DEV m2v=a.json m2v-ft=b.json minilm=c.json --out x.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import mean_ci  # noqa: E402


def per_query(res: dict[str, Any], cfg: str) -> dict[tuple[str, str], float]:
    return {(r["repo"], q["query"]): float(q["ndcg"]) for r in res["repos"] for q in r["per_query"][cfg]}


def compare(named: dict[str, dict[str, Any]], configs: list[str]) -> dict[str, Any]:
    names = list(named)
    base = names[0]  # whose query set is the reference
    repos = sorted({r["repo"] for res in named.values() for r in res["repos"]})
    for name, res in named.items():
        have = sorted(r["repo"] for r in res["repos"])
        if have != repos:
            raise SystemExit(f"{name}: repositories {have} differ from the others' {repos}")
    out: dict[str, Any] = {"models": names, "repos": repos, "ndcg": {}, "paired": {}, "cost": {}}
    for cfg in configs:
        if cfg == "lexical":  # the same legs for every model: no pairs (they are 0), only the figure
            lex = {n: per_query(res, cfg) for n, res in named.items()}
            out["ndcg"][cfg] = {n: round(statistics.fmean(lex[n].values()), 4) for n in names}
            continue
        scores = {n: per_query(res, cfg) for n, res in named.items()}
        keys = sorted(scores[base])
        out["ndcg"][cfg] = {n: round(statistics.fmean(scores[n][k] for k in keys), 4) for n in names}
        for j, n in enumerate(names):
            for m in names[:j]:  # every model against each one before it
                d, lo, hi = mean_ci([scores[n][k] - scores[m][k] for k in keys])
                out["paired"][f"{cfg}: {n} − {m}"] = [round(d, 4), round(lo, 4), round(hi, 4)]
        if cfg != "lexical" and "lexical" in configs:
            for n in names:
                lex = per_query(named[n], "lexical")
                d, lo, hi = mean_ci([scores[n][k] - lex[k] for k in keys])
                out["paired"][f"{n}: {cfg} − lexical"] = [round(d, 4), round(lo, 4), round(hi, 4)]
        out["queries"] = len(keys)
    for n, res in named.items():
        chunks = sum(r["embedded"] for r in res["repos"])
        secs = sum(r["embed_s"] for r in res["repos"])
        out["cost"][n] = {
            "embedded_chunks": chunks,
            "embed_s": round(secs, 1),
            "s_per_1000_chunks": round(1000 * secs / chunks, 2) if chunks else None,
            "query_p50_ms_median": round(statistics.median(r["p50_ms"] for r in res["repos"]), 1),
        }
    return out


def render(label: str, out: dict[str, Any]) -> str:
    names = out["models"]
    lines = [
        f"semble's benchmark, {label} set: {len(out['repos'])} repositories, {out['queries']} queries, NDCG@10",
        "",
    ]
    lines.append("| config | " + " | ".join(names) + " |")
    lines.append("|---|" + "---|" * len(names))
    for cfg, v in out["ndcg"].items():
        lines.append(f"| {cfg} | " + " | ".join(f"{v[n]:.3f}" for n in names) + " |")
    lines += ["", "| paired (per query) | Δ [95% CI] |", "|---|---|"]
    for k, (d, lo, hi) in out["paired"].items():
        lines.append(f"| {k} | {d:+.3f} [{lo:+.3f}, {hi:+.3f}] |")
    lines += [
        "",
        "| model | chunks embedded | embed s | s per 1,000 chunks | query p50 ms (median of repos) |",
        "|---|---|---|---|---|",
    ]
    for n, c in out["cost"].items():
        lines.append(
            f"| {n} | {c['embedded_chunks']} | {c['embed_s']} | {c['s_per_1000_chunks']} | {c['query_p50_ms_median']} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="name=result.json; the first is the baseline")
    ap.add_argument("--label", required=True, help="DEV or CHECK")
    ap.add_argument("--configs", default="fused,vector,lexical")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    named = {}
    for part in args.runs:
        name, _, path = part.partition("=")
        named[name] = json.loads(Path(path).read_text(encoding="utf-8"))
    out = compare(named, args.configs.split(","))
    out["label"] = args.label
    out["inputs"] = {p.partition("=")[0]: p.partition("=")[2] for p in args.runs}
    text = render(args.label, out)
    print(text)
    if args.out:
        write_json(Path(args.out), out)
        Path(args.out).with_suffix(".md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
