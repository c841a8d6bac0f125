"""Score a learned fusion (issue 18) with the localization harness itself, on the cached indexes.

Two modes, both through :func:`loc_full_bench.run` (the same searches, metrics and baselines as
every other row of ``bench/README.md``; nothing is indexed: ``--cached-only``):

- ``--cv DIR``: development parts, the exact cross-validation: each development repository's
  instances scored with the model ``ranker_train.py --cv-models DIR`` trained without that
  repository (``DIR/<kind>-<owner>+<name>.json``);
- ``--model FILE``: the check parts (or any part), scored once with one model.

Reported per set, in both views (files: file Acc@1/5/10; code: fn Recall@5/10, and the rest):
the shipped ranking, the learned one, plain BM25 and ``bm25-code``, and the paired differences
learned − shipped and learned − BM25 with 2,000 seeded bootstrap resamples over instances.

    python bench/ranker_eval.py --cv /tmp/ranker_cv --kind chosen --split dev --out bench/results/issue18-ranker-cv-exact.json
    python bench/ranker_eval.py --model semantic/models/issue18.json --split check --out bench/results/issue18-ranker-check.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_full_bench import ALL_METRICS, SETS, run, split_ids  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import mean_ci  # noqa: E402

SYSTEMS = ("nav-files", "nav-code", "nav-files[learned]", "nav-code[learned]", "bm25", "bm25-code")
PAIRS = (
    ("nav-files[learned]", "nav-files"),
    ("nav-code[learned]", "nav-code"),
    ("nav-files[learned]", "bm25"),
    ("nav-code[learned]", "bm25"),
    ("nav-code[learned]", "bm25-code"),
    ("nav-files", "bm25"),
    ("nav-code", "bm25-code"),
)


def harness_args(name: str, split: str, repos: str, model: str) -> argparse.Namespace:
    return argparse.Namespace(
        set=name, split=split, sample=0, seed=1, repos=repos, rank=[],
        variant=[f"learned ranker={model!r}"], no_baselines=False, cached_only=True,
        build_only=False, trees="trees",
    )  # fmt: skip


def rows_of(name: str, split: str, *, cv: str, kind: str, model: str) -> tuple[list[dict[str, Any]], Any]:
    """The harness's rows (and, for one model, its files-view latency p50 per variant)."""
    if not cv:
        res = run(harness_args(name, split, "", model))
        return list(res["rows"]), res["latency_ms_p50"]
    root = SETS[name]
    repos = sorted({i["repo"] for i in split_ids(name, split, jsonl(root / "instances.jsonl"))})
    rows: list[dict[str, Any]] = []
    for repo in repos:
        fold = Path(cv) / f"{kind}-{repo.replace('/', '+')}.json"
        if not fold.exists():  # no cached instance of this repository in the dumps
            continue
        rows.extend(run(harness_args(name, split, repo.split("/")[1], str(fold)))["rows"])
    return rows, None


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "instances": len(rows),
        "summary": {
            s: {m: round(statistics.fmean(r[s][m] for r in rows), 3) for m in ALL_METRICS} for s in SYSTEMS
        },
        "paired": {
            f"{a} − {b}": {
                m: [round(x, 3) for x in mean_ci([r[a][m] - r[b][m] for r in rows])] for m in ALL_METRICS
            }
            for a, b in PAIRS
        },
    }


def render(res: dict[str, Any]) -> str:
    out = [f"Learned fusion, {res['part']} ({res['how']}); command: `{res['command']}`", ""]
    for name, part in res["sets"].items():
        lat = f"; files-view search p50 ms {part['latency_ms_p50']}" if part.get("latency_ms_p50") else ""
        out += [f"**{name} {res['part']}** ({part['instances']} instances{lat})", ""]
        out += ["| system | " + " | ".join(ALL_METRICS) + " |", "|---|" + "---|" * len(ALL_METRICS)]
        for s, v in part["summary"].items():
            out.append(f"| {s} | " + " | ".join(f"{v[m]:.3f}" for m in ALL_METRICS) + " |")
        for s, v in part["paired"].items():
            cells = (f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in (v[m] for m in ALL_METRICS))
            out.append(f"| {s} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cv", default="", help="the folds' models (ranker_train.py --cv-models)")
    ap.add_argument("--kind", default="chosen", help="which kind's fold models (--cv)")
    ap.add_argument("--model", default="", help="one model file for every instance")
    ap.add_argument("--split", choices=("dev", "check"), required=True)
    ap.add_argument("--sets", default="loc_full,loc")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if bool(args.cv) == bool(args.model):
        raise SystemExit("give exactly one of --cv DIR and --model FILE")
    res: dict[str, Any] = {
        "part": "development" if args.split == "dev" else "check",
        "how": f"leave-one-repository-out models {args.cv} ({args.kind})"
        if args.cv
        else f"model {args.model}",
        "command": "python " + " ".join(sys.argv),
        "sets": {},
    }
    for name in args.sets.split(","):
        rows, latency = rows_of(name, args.split, cv=args.cv, kind=args.kind, model=args.model)
        res["sets"][name] = {**summarize(rows), "latency_ms_p50": latency, "rows": rows}
    write_json(Path(args.out), res)
    text = render(res)
    Path(args.out).with_suffix(".md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
