"""A learned within-file ranker for the code view (issue 18).

The function ceiling (bench/README.md, "Where the function ceiling is"): an oracle picking out of
today's code-view candidates plus every definition of the files view's top 5 files reaches
function Recall@10 0.832 (full issue text) / 0.718 (one-line), against the shipped code view's
0.490 / 0.347. This asks whether a model over many per-definition signals at once can rank that
pool.

``dump``: for each cached instance of a part (``loc_full_bench.py --build-only``), the pool and
signals nav's code view orders by (``navigator/code_order.py``: the fused code view's first 50
definitions plus every definition, of every language, and ``<module>`` of the files view's
first ``--files`` files; nav's code-view rank, its file's rank in both views, its own match by
word share, IDF and BM25, named by the query, traceback frames, quoted literals, the reference
graph, size, kind, non-source) and each candidate's label (a gold function). The shipped model
(``navigator/models/code_order.json``) was trained (stop 28) on rows of this code's earlier
form, which pooled Python's definitions alone.
``dump-mined``: the same for mined history pairs. ``train``: LightGBM LambdaMART (and, with
``--linear``, logistic regression) on the development parts, leave one repository out, or on mined
pairs only; function Recall@5/@10 of the learned top 10 against the shipped code view on the same
instances, paired, 2,000 seeded bootstrap resamples. ``check``: the check parts once, with the
setting chosen on development.

    PYTHONPATH=$PWD python bench/within_file.py dump --set loc_full [--split check]
    PYTHONPATH=$PWD:/tmp/rtrain OMP_NUM_THREADS=1 python bench/within_file.py train --mined only --linear \
        --mined-file bench/corpora/within/mined-py200.jsonl.gz --out bench/results/issue18-within-file.json

Trainers: ``pip install --target /tmp/rtrain lightgbm scikit-learn`` (numpy from nav's venv).
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_full_bench import LEXICAL, SETS, split_ids  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.metrics import acc_at_k, recall_at_k  # noqa: E402
from bench.harness.stats import bootstrap_ci  # noqa: E402
from navigator.code_order import CODE_DEPTH, FEATURES, POOL_FILES, candidates, load_model  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.analysis import query_terms  # noqa: E402
from semantic.lexical import cap_terms  # noqa: E402
from semantic.ranking import DEFAULT  # noqa: E402
from storage.db import Store  # noqa: E402

OUT = HERE / "corpora" / "within"


def instance_rows(store: Store, inst: dict[str, Any], n_files: int = POOL_FILES) -> dict[str, Any]:
    """One instance's pool, signals and labels, plus nav's fused code-view list: the product's
    own pool and signals (:func:`navigator.code_order.candidates`, every language's definitions)
    over the fused views of one search's legs, each at depth ``CODE_DEPTH``."""
    fused = dataclasses.replace(DEFAULT, code_order=None)
    search = SemanticSearch(store, config=fused)
    query = inst["query"]
    files_hits = search.search(query, k=CODE_DEPTH, legs=LEXICAL).items
    code_hits = search.search(query, k=CODE_DEPTH, legs=LEXICAL, view="code").items
    terms = cap_terms(store, query_terms(query, config=fused), config=fused)
    pool = candidates(store, terms, query, files_hits, code_hits, pool_files=n_files)
    gold = set(inst["gold_functions"])
    nav = list(
        dict.fromkeys(c.key for c in sorted((c for c in pool if c.hit), key=lambda c: c.signals["code_rank"]))
    )
    return {
        "id": inst["id"],
        "repo": inst["repo"],
        "gold": inst["gold_functions"],
        "nav": nav[:10],
        "files": list(dict.fromkeys(h.path for h in files_hits))[:10],
        "gold_files": sorted(inst.get("gold_files") or {g.split("::", 1)[0] for g in inst["gold_functions"]}),
        "rows": [
            {"name": c.key, "y": int(c.key in gold), "x": [c.signals[f] for f in FEATURES]} for c in pool
        ],
    }


def dump(args: argparse.Namespace) -> None:
    root = SETS[args.set]
    insts = [
        i
        for i in split_ids(args.set, args.split, list(jsonl(root / "instances.jsonl")))
        if (root / "idx" / "inst" / f"{i['id']}.base.json").exists()
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"{args.set}-{args.split}.jsonl.gz"
    with gzip.open(out, "wt") as fh:
        for n, inst in enumerate(insts):
            store = Store(root / "idx" / "inst" / f"{inst['id']}.db")
            try:
                got = instance_rows(store, inst, args.files)
            finally:
                store.close()
            got["set"] = args.set
            fh.write(json.dumps(got) + "\n")
            print(
                f"[{n + 1}/{len(insts)}] {inst['id']}: pool {len(got['rows'])}", file=sys.stderr, flush=True
            )
    print(out)


def dump_mined(args: argparse.Namespace) -> None:
    """The same rows for mined (fix-commit message -> changed definitions) pairs
    (``mining/mine_pairs.py``; no repository of SWE-bench, SWE-bench-Live or semble's set): one
    working tree per repository moved to each pair's parent, the index updated. Python pairs
    only unless ``--all-languages``; ``--only`` a comma-separated subset of repositories."""
    from loc_bench import checkout
    from mining.hard_negatives import CORPUS, tree_for

    from navigator.indexer import index_root

    pairs = [json.loads(line) for line in Path(args.pairs).read_text().splitlines() if line.strip()]
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    only = {r for r in args.only.split(",") if r}
    for p in pairs:
        if only and p["repo"] not in only:
            continue
        if args.all_languages or any(f.endswith(".py") for f in p["positive_files"]):
            by_repo[str(p["repo"])].append(p)
    OUT.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    rng = random.Random(args.seed)
    with gzip.open(out, "wt") as fh:
        for repo in sorted(by_repo):
            chosen = rng.sample(by_repo[repo], min(args.per_repo, len(by_repo[repo])))
            tree = tree_for(repo, Path(args.mirror_root))
            store = Store(CORPUS / "idx" / (repo.replace("/", "-") + ".db"))
            kept = 0
            try:
                for pair in sorted(chosen, key=lambda p: str(p["date"])):  # small moves
                    try:
                        checkout(tree, str(pair["parent"]))
                        index_root(tree, store)
                        inst = {
                            "id": pair["id"],
                            "repo": repo,
                            "query": pair["query"],
                            "gold_functions": pair["positive_functions"],
                        }
                        got = instance_rows(store, inst, args.files)
                    except Exception as exc:  # noqa: BLE001 - one pair's failure is logged, the rest go on
                        print(f"{repo} {pair['id']}: {type(exc).__name__}: {str(exc)[:200]}", file=sys.stderr)
                        continue
                    got["set"] = "mined"
                    fh.write(json.dumps(got) + "\n")
                    kept += 1
            finally:
                store.close()
            print(f"{repo}: {kept} of {len(chosen)} pairs", file=sys.stderr, flush=True)
    print(out)


_RANKS = [n for n, f in enumerate(FEATURES) if f.endswith(("_rank", "_pos", "_rank_in_file"))]


def _linear_x(xs: Any) -> Any:
    """A linear model's view of the rows: ranks (100 = absent) as 1 / (1 + rank)."""
    out = xs.astype(float).copy()
    out[:, _RANKS] = 1.0 / (1.0 + out[:, _RANKS])
    return out


class _Linear:
    """Logistic regression over standardized signals (pointwise): a weight per signal."""

    def __init__(self, c: float) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        self.model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))

    def fit(self, xs: Any, ys: Any) -> _Linear:
        self.model.fit(_linear_x(xs), ys)
        return self

    def predict(self, xs: Any) -> Any:
        return self.model.decision_function(_linear_x(xs))


def _fit(train: list[dict[str, Any]], params: dict[str, Any]) -> Any:
    import numpy as np

    xs, ys, groups = [], [], []
    for inst in train:
        if not any(r["y"] for r in inst["rows"]):
            continue  # nothing to learn from an instance whose gold is not in the pool
        xs.extend(r["x"] for r in inst["rows"])
        ys.extend(r["y"] for r in inst["rows"])
        groups.append(len(inst["rows"]))
    if params.get("model") == "linear":
        return _Linear(params["c"]).fit(np.array(xs), np.array(ys))
    import lightgbm as lgb

    model = lgb.LGBMRanker(
        objective="lambdarank",
        n_estimators=params["trees"],
        num_leaves=params["leaves"],
        learning_rate=params["lr"],
        min_child_samples=20,
        lambdarank_truncation_level=20,
        verbose=-1,
        n_jobs=1,
    )
    model.fit(np.array(xs), np.array(ys), group=groups)
    return model


def _ranked(model: Any, inst: dict[str, Any]) -> list[str]:
    import numpy as np

    scores = model.predict(np.array([r["x"] for r in inst["rows"]]))
    return [inst["rows"][i]["name"] for i in sorted(range(len(scores)), key=lambda i: -scores[i])]


def _read(path: Path) -> list[dict[str, Any]]:
    """The rows of a dump; of one still being written (or cut off), the lines it has, said so."""
    out: list[dict[str, Any]] = []
    try:
        with gzip.open(path, "rt") as fh:
            for line in fh:
                out.append(json.loads(line))
    except (EOFError, json.JSONDecodeError) as exc:
        print(f"{path}: cut off after {len(out)} rows ({type(exc).__name__}); using those", file=sys.stderr)
    return out


def _parts(split: str, dumps: str) -> list[dict[str, Any]]:
    """Both sets' dumps of one part (those written so far)."""
    paths = [OUT / f"{part}-{split}{dumps}.jsonl.gz" for part in ("loc_full", "loc")]
    return [d for path in paths if path.exists() for d in _read(path)]


def _mined(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The mined rows of ``--mined-file`` (comma-separated), of ``--mined-repos`` only if given."""
    mined = [m for f in args.mined_file.split(",") for m in _read(Path(f))]
    repos = set(filter(None, getattr(args, "mined_repos", "").split(",")))
    return [m for m in mined if m["repo"] in repos] if repos else mined


def _summary(per: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for part in ("loc_full", "loc"):
        rows = [p for p in per if p["set"] == part]
        for metric in ("fn@5", "fn@10", "file@1", "file@5"):
            if not rows or f"nav {metric}" not in rows[0]:
                continue
            diffs = [p[f"learned {metric}"] - p[f"nav {metric}"] for p in rows]
            lo, hi = bootstrap_ci(diffs)
            summary[f"{part} {metric}"] = {
                "nav": round(sum(p[f"nav {metric}"] for p in rows) / len(rows), 3),
                "learned": round(sum(p[f"learned {metric}"] for p in rows) / len(rows), 3),
                "diff": round(sum(diffs) / len(diffs), 3),
                "ci": [round(lo, 3), round(hi, 3)],
                "n": len(rows),
            }
            if f"shipped {metric}" in rows[0]:  # against the order nav ships now
                diffs = [p[f"learned {metric}"] - p[f"shipped {metric}"] for p in rows]
                lo, hi = bootstrap_ci(diffs)
                summary[f"{part} {metric} vs shipped"] = {
                    "shipped": round(sum(p[f"shipped {metric}"] for p in rows) / len(rows), 3),
                    "diff": round(sum(diffs) / len(diffs), 3),
                    "ci": [round(lo, 3), round(hi, 3)],
                }
    return summary


def _shipped(inst: dict[str, Any]) -> list[str]:
    """The rows in the order of the model nav ships (``navigator/models/code_order.json``)."""
    model = load_model()
    scores = model.scores([dict(zip(FEATURES, r["x"], strict=True)) for r in inst["rows"]])
    return [inst["rows"][i]["name"] for i in sorted(range(len(scores)), key=lambda i: -scores[i])]


def _scored(model: Any, inst: dict[str, Any]) -> dict[str, Any]:
    learned = _ranked(model, inst)
    shipped = _shipped(inst)
    got = {
        "id": inst["id"],
        "set": inst["set"],
        **{f"nav fn@{k}": recall_at_k(inst["nav"], inst["gold"], k) for k in (5, 10)},
        **{f"shipped fn@{k}": recall_at_k(shipped, inst["gold"], k) for k in (5, 10)},
        **{f"learned fn@{k}": recall_at_k(learned, inst["gold"], k) for k in (5, 10)},
    }
    if "files" in inst:  # files ordered by their best learned definition, then the files view's
        files = list(dict.fromkeys([n.split("::", 1)[0] for n in learned[:20]] + inst["files"]))
        for k in (1, 5):
            got[f"nav file@{k}"] = acc_at_k(inst["files"], inst["gold_files"], k)
            got[f"learned file@{k}"] = acc_at_k(files, inst["gold_files"], k)
    return got


def check(args: argparse.Namespace) -> None:
    """The check parts, once: one model with the setting chosen on development (trained on the
    mined pairs, plus every development instance with ``--mined add``), scored on instances no
    choice looked at."""
    mined = _mined(args)
    train_on = mined + (_parts("dev", args.dumps) if args.mined == "add" else [])
    params: dict[str, Any] = (
        {"model": "linear", "c": args.c}
        if args.c
        else {"trees": args.trees, "leaves": args.leaves, "lr": 0.05}
    )
    model = _fit(train_on, params)
    data = _parts("check", args.dumps)
    per = [_scored(model, inst) for inst in data]
    results = {"part": "check", "training": args.mined, "mined": len(mined), "trained_on": len(train_on),
               "params": params, "features": FEATURES, **_summary(per), "per_instance": per}  # fmt: skip
    if isinstance(model, _Linear):  # what would ship: a weight per signal over standardized values
        scaler, logit = model.model[0], model.model[-1]
        results["model"] = {
            "rank_features": [FEATURES[n] for n in _RANKS],
            "transform": "rank features as 1 / (1 + rank), then (x - mean) / scale",
            "mean": dict(zip(FEATURES, map(float, scaler.mean_), strict=True)),
            "scale": dict(zip(FEATURES, map(float, scaler.scale_), strict=True)),
            "weight": dict(zip(FEATURES, map(float, logit.coef_[0]), strict=True)),
            "intercept": float(logit.intercept_[0]),
        }
    print(
        json.dumps({k: v for k, v in results.items() if k not in ("per_instance", "features", "model")}),
        flush=True,
    )
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


def train(args: argparse.Namespace) -> None:
    data = _parts("dev", args.dumps)
    mined: list[dict[str, Any]] = _mined(args) if args.mined != "none" else []
    grid: list[dict[str, Any]] = [
        {"trees": t, "leaves": lv, "lr": 0.05} for t in (50, 150) for lv in (3, 7, 15)
    ]
    if args.linear:
        grid += [{"model": "linear", "c": c} for c in (0.01, 0.1, 1.0)]
    results: dict[str, Any] = {
        "instances": len(data),
        "mined": len(mined),
        "training": args.mined,
        "features": FEATURES,
        "settings": [],
    }
    repos = sorted({d["repo"] for d in data})
    for params in grid:
        per: list[dict[str, Any]] = []
        only = _fit(mined, params) if args.mined == "only" else None
        for repo in repos:
            model = only if only is not None else _fit([d for d in data if d["repo"] != repo] + mined, params)
            per.extend(_scored(model, inst) for inst in data if inst["repo"] == repo)
        summary: dict[str, Any] = {"params": params, **_summary(per)}
        results["settings"].append(summary)
        print(json.dumps(summary), flush=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--set", choices=tuple(SETS), required=True)
    d.add_argument("--split", choices=("dev", "check"), default="dev")
    d.add_argument(
        "--files", type=int, default=5, help="the files view's first N files give all their definitions"
    )
    m = sub.add_parser("dump-mined")
    m.add_argument("--pairs", default=str(HERE / "corpora" / "mining" / "pairs.jsonl"))
    m.add_argument("--mirror-root", default="/work/.mirror")
    m.add_argument("--per-repo", type=int, default=40, help="pairs drawn per repository (seeded)")
    m.add_argument("--seed", type=int, default=18)
    m.add_argument("--files", type=int, default=5)
    m.add_argument("--out", default=str(OUT / "mined.jsonl.gz"))
    m.add_argument("--all-languages", action="store_true", help="every language's pairs, not only Python's")
    m.add_argument("--only", default="", help="comma-separated owner/name subset")
    t = sub.add_parser("train")
    t.add_argument("--out", default=str(HERE / "results" / "issue18-within-file.json"))
    t.add_argument("--mined-file", default=str(OUT / "mined.jsonl.gz"))
    t.add_argument(
        "--mined",
        choices=("none", "add", "only"),
        default="none",
        help="mined pairs: not used, added to every fold's training data, or the only training data",
    )
    t.add_argument("--linear", action="store_true", help="also three linear (logistic) settings")
    t.add_argument(
        "--mined-repos", default="", help="only the mined pairs of these repositories (comma-separated)"
    )
    c = sub.add_parser("check", help="score the check parts once, with a setting chosen on development")
    c.add_argument("--mined-file", required=True)
    c.add_argument("--mined", choices=("only", "add"), default="only")
    c.add_argument("--trees", type=int, default=50)
    c.add_argument("--leaves", type=int, default=3)
    c.add_argument("--c", type=float, default=0.0, help="a linear model with this C instead of trees")
    c.add_argument("--out", required=True)
    for sp in (t, c):
        sp.add_argument("--dumps", default="", help="the sets' dump suffix (a copy kept under another name)")
    args = ap.parse_args()
    {"dump": dump, "dump-mined": dump_mined, "train": train, "check": check}[args.cmd](args)


if __name__ == "__main__":
    main()
