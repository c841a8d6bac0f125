"""Train the learned fusion (issue 18) on the development parts only, choose by cross-validation
grouped by repository, and write a model file :mod:`semantic.learned` reads.

Input: the feature dumps of ``ranker_features.py`` (``bench/corpora/ranker/<set>-dev.jsonl.gz``
for ``loc_full`` and ``loc``). Two models per view (``files``: one row per candidate file, label
gold file; ``chunks``: one row per candidate chunk, label holds a gold function):

- ``linear``: logistic regression on standardized features (scikit-learn, training only), class
  weights balanced, ``C`` chosen by CV;
- ``lgbm``: LightGBM LambdaMART (``objective=lambdarank``, one query a group), leaves, trees,
  learning rate and minimum leaf size chosen by CV.

CV: leave one repository out over the development repositories of both sets (14). The metric of
a fold is the harness's, computed on the dumped candidates: files ranked by the model give file
Acc@1/5/10; chunks ranked by the model, each mapped to its definitions as the harness does, give
function Recall@5/10 (close to, not exactly, the code view's, which splits a chunk into its
definitions: the exact figures come from ``loc_full_bench.py`` with ``ranker=`` a model file,
which ``--cv-models DIR`` writes per fold). The criterion per view is the mean over both sets
(each set weighing the same) of file@1+file@5+file@10 (files) or fn@5+fn@10 (chunks).

    PYTHONPATH=/tmp/ranker_pkgs:$PWD python bench/ranker_train.py --out bench/results/issue18-ranker-cv.json \
        --model-out semantic/models/issue18.json --cv-models /tmp/ranker_cv
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.harness.metrics import acc_at_k, recall_at_k  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import mean_ci  # noqa: E402

DUMPS = HERE / "corpora" / "ranker"
SETS = ("loc_full", "loc")
FILE_METRICS = ("file@1", "file@5", "file@10")
FN_METRICS = ("fn@5", "fn@10")
LINEAR_GRID = [{"C": c} for c in (0.01, 0.1, 1.0, 10.0)]
LGBM_GRID = [
    {"num_leaves": nl, "n_estimators": ne, "learning_rate": lr, "min_child_samples": mc}
    for nl, ne, lr, mc in itertools.product((3, 7), (30, 100), (0.05,), (50, 200))
]


def load(part: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in SETS:
        path = DUMPS / f"{name}-{part}.jsonl.gz"
        with gzip.open(path, "rt") as fh:
            out.extend(json.loads(line) for line in fh)
    return out


def matrix(insts: Sequence[dict[str, Any]], view: str) -> tuple[np.ndarray, np.ndarray, list[int]]:
    xs = [np.asarray(i[view]["rows"], dtype=np.float64).reshape(-1, len(i[view]["names"])) for i in insts]
    ys = [np.asarray(i[view]["label"], dtype=np.int64) for i in insts]
    return np.vstack(xs), np.concatenate(ys), [len(y) for y in ys]


def metrics(inst: dict[str, Any], view: str, scores: Sequence[float]) -> dict[str, float]:
    """The harness's metrics of one instance's candidates ranked by ``scores``."""
    order = sorted(range(len(scores)), key=lambda j: (-scores[j], j))
    if view == "files":
        files = [inst["files"]["keys"][j] for j in order]
        gold = set(inst["gold_files"])
        return {m: acc_at_k(files, gold, int(m.split("@")[1])) for m in FILE_METRICS}
    fns: list[str] = []
    for j in order:
        for f in inst["chunks"]["fns"][j]:
            if f not in fns:
                fns.append(f)
    gold = set(inst["gold_functions"])
    return {m: recall_at_k(fns, gold, int(m.split("@")[1])) for m in FN_METRICS}


def nav_scores(inst: dict[str, Any], view: str) -> list[float]:
    """The shipped ranking's order as scores (minus its rank)."""
    names = inst[view]["names"]
    col = names.index("nav_file_rank" if view == "files" else "nav_code_rank")
    return [-row[col] for row in inst[view]["rows"]]


def fit(kind: str, params: dict[str, Any], x: np.ndarray, y: np.ndarray, groups: list[int]) -> Any:
    if kind == "linear":
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler().fit(x)
        model = LogisticRegression(C=params["C"], class_weight="balanced", max_iter=2000)
        model.fit(scaler.transform(x), y)
        return ("linear", scaler, model)
    import lightgbm as lgb

    model = lgb.LGBMRanker(
        objective="lambdarank",
        n_jobs=1,
        verbose=-1,
        random_state=18,
        deterministic=True,
        force_row_wise=True,
        **params,
    )
    model.fit(x, y, group=groups)
    return ("lgbm", None, model)


def predict(fitted: Any, x: np.ndarray) -> np.ndarray:
    kind, scaler, model = fitted
    if kind == "linear":
        return np.asarray(model.decision_function(scaler.transform(x)))
    return np.asarray(model.predict(x))


def export(fitted: Any, names: Sequence[str]) -> dict[str, Any]:
    """A fitted model as :mod:`semantic.learned`'s JSON (a linear model's weights, or LightGBM's
    trees as flat node arrays)."""
    kind, scaler, model = fitted
    if kind == "linear":
        return {
            "kind": "linear",
            "features": list(names),
            "mean": [round(float(v), 8) for v in scaler.mean_],
            "scale": [round(float(v), 8) for v in scaler.scale_],
            "coef": [round(float(v), 8) for v in model.coef_[0]],
            "intercept": round(float(model.intercept_[0]), 8),
        }
    trees = [flatten(info["tree_structure"]) for info in model.booster_.dump_model()["tree_info"]]
    return {"kind": "trees", "features": list(names), "trees": trees}


def flatten(root: dict[str, Any]) -> dict[str, list[Any]]:
    """One LightGBM tree (``dump_model``'s nested nodes) as flat arrays: internal node ``i``
    splits on ``feature[i] <= threshold[i]``; a child ``< 0`` is leaf ``~child``."""
    out: dict[str, list[Any]] = {"feature": [], "threshold": [], "left": [], "right": [], "leaf": []}

    def walk(node: dict[str, Any]) -> int:
        if "leaf_value" in node:
            out["leaf"].append(float(node["leaf_value"]))
            return ~(len(out["leaf"]) - 1)
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {node.get('decision_type')!r}")
        i = len(out["feature"])
        out["feature"].append(int(node["split_feature"]))
        out["threshold"].append(float(node["threshold"]))
        out["left"].append(0)
        out["right"].append(0)
        out["left"][i] = walk(node["left_child"])
        out["right"][i] = walk(node["right_child"])
        return i

    walk(root)
    return out


def set_means(rows: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per set, the mean of each metric over its instances."""
    return {
        s: {m: statistics.fmean(r[m] for r in rows if r["set"] == s) for m in keys}
        for s in SETS
        if any(r["set"] == s for r in rows)
    }


def criterion(rows: list[dict[str, Any]], keys: Sequence[str]) -> float:
    means = set_means(rows, keys)
    return statistics.fmean(sum(v.values()) for v in means.values())


def cross_validate(
    insts: list[dict[str, Any]], view: str, kind: str, params: dict[str, Any],
    on_fold: Callable[[str, Any], None] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """Leave one repository out: per held-out instance, its metrics under the model trained on
    every other repository."""
    keys = FILE_METRICS if view == "files" else FN_METRICS
    rows: list[dict[str, Any]] = []
    for repo in sorted({i["repo"] for i in insts}):
        train = [i for i in insts if i["repo"] != repo]
        test = [i for i in insts if i["repo"] == repo]
        x, y, g = matrix(train, view)
        fitted = fit(kind, params, x, y, g)
        if on_fold is not None:
            on_fold(repo, fitted)
        for inst in test:
            xt, _, _ = matrix([inst], view)
            got = metrics(inst, view, predict(fitted, xt).tolist()) if len(xt) else dict.fromkeys(keys, 0.0)
            base = metrics(inst, view, nav_scores(inst, view)) if len(xt) else dict.fromkeys(keys, 0.0)
            rows.append({"id": inst["id"], "set": inst["set"], "repo": repo, **got, "nav": base})
    return rows


def paired(rows: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, dict[str, list[float]]]:
    return {
        s: {
            m: [round(v, 3) for v in mean_ci([r[m] - r["nav"][m] for r in rows if r["set"] == s])]
            for m in keys
        }
        for s in SETS
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the CV results (JSON; a .md beside it)")
    ap.add_argument("--model-out", default="", help="write the chosen kind's final model here")
    ap.add_argument(
        "--kind", choices=("linear", "lgbm"), default="", help="the kind to write (default: CV's best)"
    )
    ap.add_argument(
        "--cv-models", default="", help="write each fold's model of both kinds here (for loc_full_bench)"
    )
    args = ap.parse_args()
    dev = load("dev")
    names = {v: dev[0][v]["names"] for v in ("files", "chunks")}
    res: dict[str, Any] = {
        "part": "development (CV, leave one repository out)",
        "instances": {s: sum(1 for i in dev if i["set"] == s) for s in SETS},
        "repositories": sorted({i["repo"] for i in dev}),
        "features": names,
        "grid": {"linear": LINEAR_GRID, "lgbm": LGBM_GRID},
        "views": {},
    }
    best: dict[str, dict[str, dict[str, Any]]] = {}
    t0 = time.perf_counter()
    for view in ("files", "chunks"):
        keys = FILE_METRICS if view == "files" else FN_METRICS
        res["views"][view] = {}
        best[view] = {}
        for kind, grid in (("linear", LINEAR_GRID), ("lgbm", LGBM_GRID)):
            trials = []
            for params in grid:
                rows = cross_validate(dev, view, kind, params)
                trials.append((criterion(rows, keys), params, rows))
                print(f"{view} {kind} {params}: {trials[-1][0]:.4f}", file=sys.stderr, flush=True)
            score, params, rows = max(trials, key=lambda t: t[0])
            nav_rows = [{"set": r["set"], **r["nav"]} for r in rows]
            best[view][kind] = {"params": params, "criterion": score}
            res["views"][view][kind] = {
                "params": params,
                "criterion": round(score, 4),
                "nav_criterion": round(criterion(nav_rows, keys), 4),
                "trials": [{"params": p, "criterion": round(c, 4)} for c, p, _ in trials],
                "cv": {s: {m: round(v, 3) for m, v in d.items()} for s, d in set_means(rows, keys).items()},
                "nav": {
                    s: {m: round(v, 3) for m, v in d.items()} for s, d in set_means(nav_rows, keys).items()
                },
                "paired": paired(rows, keys),
                "rows": rows,
            }
    res["cv_seconds"] = round(time.perf_counter() - t0, 1)
    kinds = {v: args.kind or max(best[v], key=lambda k: best[v][k]["criterion"]) for v in best}
    res["chosen"] = kinds
    if args.cv_models:  # each fold's model of each kind, both views, for the exact CV in loc_full_bench
        out_dir = Path(args.cv_models)
        out_dir.mkdir(parents=True, exist_ok=True)
        for kind in ("linear", "lgbm"):
            models: dict[str, dict[str, Any]] = {}
            for view in ("files", "chunks"):

                def keep(repo: str, fitted: Any, view: str = view, models: dict[str, Any] = models) -> None:
                    models.setdefault(repo, {})[view] = export(fitted, names[view])

                cross_validate(dev, view, kind, best[view][kind]["params"], on_fold=keep)
            for repo, views in models.items():
                path = out_dir / f"{kind}-{repo.replace('/', '+')}.json"
                path.write_text(json.dumps({"format": "nav-ranker", "version": 1, "held_out": repo, **views}))
    if args.model_out:
        t1 = time.perf_counter()
        model: dict[str, Any] = {
            "format": "nav-ranker",
            "version": 1,
            "trained_on": "loc_full development + loc one-line development (bench/ranker_train.py)",
            "instances": res["instances"],
        }
        for view in ("files", "chunks"):
            x, y, g = matrix(dev, view)
            kind = kinds[view]
            model[view] = {**export(fit(kind, best[view][kind]["params"], x, y, g), names[view]),
                           "params": best[view][kind]["params"]}  # fmt: skip
        Path(args.model_out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.model_out).write_text(json.dumps(model, separators=(",", ":")) + "\n")
        res["model"] = {
            "path": args.model_out,
            "bytes": Path(args.model_out).stat().st_size,
            "train_seconds": round(time.perf_counter() - t1, 1),
        }
    write_json(Path(args.out), res)
    Path(args.out).with_suffix(".md").write_text(render(res) + "\n")
    print(render(res))


def render(res: dict[str, Any]) -> str:
    out = [
        f"Learned fusion, {res['part']}: instances {res['instances']}, {len(res['repositories'])} repositories; "
        f"CV {res['cv_seconds']} s; chosen {res['chosen']}; model {res.get('model')}",
        "",
        "| view | model | params | set | metric | nav | model | model − nav [95% CI] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for view, kinds in res["views"].items():
        for kind, v in kinds.items():
            for s, d in v["cv"].items():
                for m, val in d.items():
                    diff = v["paired"][s][m]
                    out.append(
                        f"| {view} | {kind} | {v['params']} | {s} dev | {m} | {v['nav'][s][m]:.3f} | {val:.3f} | "
                        f"{diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}] |"
                    )
    return "\n".join(out)


if __name__ == "__main__":
    main()
