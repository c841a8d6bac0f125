"""Train the learned fusion (issue 18) on the development parts only, choose by cross-validation
grouped by repository, and write a model file :mod:`semantic.learned` reads.

Input: the feature dumps of ``ranker_features.py`` (``bench/corpora/ranker/<set>-dev.jsonl.gz``
for ``loc_full`` and ``loc``). Two models per view (``files``: one row per candidate file, label
gold file; ``chunks``: one row per candidate chunk, label holds a gold function):

- ``linear``: logistic regression on standardized features (scikit-learn, training only), class
  weights balanced, ``C`` chosen by CV;
- ``pairwise``: a linear RankNet, logistic regression on the feature differences of (gold, other)
  pairs among nav's best ``depth`` candidates of a query, each query weighing the same;
- ``lgbm``: LightGBM LambdaMART (``objective=lambdarank``, one query a group; and XE-NDCG,
  ``rank_xendcg``), leaves, trees and minimum leaf size chosen by CV;
- ``lgbm-res``: the same, boosted from nav's own score (``init_score`` = ``offset`` times the log
  of nav's file or code-view score): trees that learn corrections to the shipped ranking.

Models are exported to :mod:`semantic.learned`'s JSON; the final one is checked to score as the
trained one.

CV: leave one repository out over the development repositories of both sets (14). The metric of
a fold is the harness's, computed on the dumped candidates: files ranked by the model give file
Acc@1/5/10 (exactly the harness's); chunks ranked by the model, each chunk's code-view
definitions at the chunk's score times their share, give function Recall@5/10 (the harness's
exactly for the shipped ranking; with a model, within about 0.015 of it, as the code view keeps
a definition at its first chunk). The reported figures come from the harness itself:
``ranker_eval.py --cv DIR`` over the per-fold models ``--cv-models DIR`` writes. The criterion
per view is the mean over both sets (each set weighing the same) of file@1+file@5+file@10
(files) or fn@5+fn@10 (chunks). The hyper-parameters are chosen on the same folds (not nested):
the CV figures of the chosen models are optimistic.

    PYTHONPATH=$PWD python bench/ranker_train.py --out bench/results/issue18-ranker-cv.json \
        --model-out bench/results/issue18-ranker-model.json --cv-models /tmp/ranker_cv
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import math
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
OFFSET_FEATURE: dict[str, int] = {}
"""Each view's column of nav's own score (log), which a boosted-from-nav model starts from."""
SETS = ("loc_full", "loc")
FILE_METRICS = ("file@1", "file@5", "file@10")
FN_METRICS = ("fn@5", "fn@10")
LINEAR_GRID = [{"C": c} for c in (0.01, 0.1, 1.0, 10.0)]
PAIRWISE_GRID = [{"C": c, "depth": d} for c in (0.01, 0.1, 1.0) for d in (20, 50)]
LGBM_GRID = [
    {"num_leaves": nl, "n_estimators": ne, "learning_rate": lr, "min_child_samples": mc}
    for nl, ne, lr, mc in itertools.product((3, 7), (30, 100), (0.05,), (50, 200))
] + [  # XE-NDCG, said to be steadier than LambdaMART on few queries
    {
        "objective": "rank_xendcg",
        "num_leaves": nl,
        "n_estimators": ne,
        "learning_rate": 0.05,
        "min_child_samples": 50,
    }
    for nl, ne in itertools.product((3, 7), (30, 100))
]
LGBM_RES_GRID = [  # boosted from nav's own score: the trees learn corrections to the shipped ranking
    {"num_leaves": nl, "n_estimators": ne, "learning_rate": 0.05, "min_child_samples": mc, "offset": off}
    for nl, ne, mc, off in itertools.product((3, 7), (30, 100), (50, 200), (1.0, 3.0))
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
    # the code view: each chunk's definitions at its score times their share, best first, each
    # once (ties in the order the view lists them: chunks best first, then line order)
    top = max(scores) if len(scores) else 0.0
    leaves = [
        (-math.exp(scores[j] - top) * share, pos, n, name)
        for pos, j in enumerate(order[:150])
        for n, (name, share) in enumerate(inst["chunks"]["fns"][j])
    ]
    leaves.sort()
    fns: list[str] = []
    for *_, f in leaves:
        if f not in fns:
            fns.append(f)
    gold = set(inst["gold_functions"])
    return {m: recall_at_k(fns, gold, int(m.split("@")[1])) for m in FN_METRICS}


def ceiling(insts: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """What any re-ranking of these candidates can reach, per set: an oracle that puts every
    positive first (file Acc@k; function Recall@k over the code view's definitions)."""
    out: dict[str, dict[str, float]] = {}
    for s in SETS:
        part = [i for i in insts if i["set"] == s]
        if not part:
            continue
        f = [metrics(i, "files", [float(v) for v in i["files"]["label"]]) for i in part]
        c = [metrics(i, "chunks", [float(v) for v in i["chunks"]["label"]]) for i in part]
        out[s] = {m: round(statistics.fmean(r[m] for r in f), 3) for m in FILE_METRICS}
        out[s].update({m: round(statistics.fmean(r[m] for r in c), 3) for m in FN_METRICS})
    return out


def nav_scores(inst: dict[str, Any], view: str) -> list[float]:
    """The shipped ranking's order as scores (minus its rank)."""
    names = inst[view]["names"]
    if view == "files":
        col = names.index("nav_file_rank")
        return [-row[col] for row in inst[view]["rows"]]
    col = names.index("nav_code")  # log of nav's code-view score: exp() is the score itself
    return [row[col] for row in inst[view]["rows"]]


def pairs(
    x: np.ndarray, y: np.ndarray, groups: list[int], depth: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RankNet's pairs for a linear model: per query, every positive against every negative among
    the shipped ranking's best ``depth`` candidates (the rows are in nav's order), as differences
    of both signs, each query weighing the same."""
    dx, dy, dw = [], [], []
    at = 0
    for n in groups:
        xs, ys = x[at : at + n], y[at : at + n]
        at += n
        pos = np.flatnonzero(ys[:depth] > 0)
        neg = np.flatnonzero(ys[:depth] == 0)
        if not len(pos) or not len(neg):
            continue
        d = (xs[pos][:, None, :] - xs[neg][None, :, :]).reshape(-1, x.shape[1])
        dx += [d, -d]
        dy += [np.ones(len(d)), np.zeros(len(d))]
        dw += [np.full(2 * len(d), 1.0 / (2 * len(d)))]
    return np.vstack(dx), np.concatenate(dy), np.concatenate(dw)


def fit(view: str, kind: str, params: dict[str, Any], x: np.ndarray, y: np.ndarray, groups: list[int]) -> Any:
    if kind == "pairwise":
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler().fit(x)
        dx, dy, dw = pairs(scaler.transform(x), y, groups, params["depth"])
        model = LogisticRegression(C=params["C"], fit_intercept=False, max_iter=2000)
        model.fit(dx, dy, sample_weight=dw * len(groups))
        return ("linear", scaler, model)
    if kind == "linear":
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        scaler = StandardScaler().fit(x)
        model = LogisticRegression(C=params["C"], class_weight="balanced", max_iter=2000)
        model.fit(scaler.transform(x), y)
        return ("linear", scaler, model)
    import lightgbm as lgb

    params = dict(params)
    offset = params.pop("offset", 0.0)
    col = OFFSET_FEATURE[view] if offset else None
    init = offset * x[:, col] if col is not None else None
    params.setdefault("objective", "lambdarank")
    model = lgb.LGBMRanker(
        n_jobs=1,
        verbose=-1,
        random_state=18,
        deterministic=True,
        force_row_wise=True,
        **params,
    )
    model.fit(x, y, group=groups, init_score=init)
    return ("lgbm", (col, offset), model)


def predict(fitted: Any, x: np.ndarray) -> np.ndarray:
    kind, scaler, model = fitted
    if kind == "linear":
        return np.asarray(scaler.transform(x) @ model.coef_[0] + float(np.ravel(model.intercept_)[0]))
    col, offset = scaler
    base = offset * x[:, col] if col is not None else 0.0
    return np.asarray(model.predict(x)) + base


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
            "intercept": round(float(np.ravel(model.intercept_)[0]), 8),
        }
    trees = [flatten(info["tree_structure"]) for info in model.booster_.dump_model()["tree_info"]]
    col, offset = scaler
    return {"kind": "trees", "features": list(names), "trees": trees,
            "offset": [[col, offset]] if col is not None else []}  # fmt: skip


def export_checked(fitted: Any, names: Sequence[str], x: np.ndarray) -> dict[str, Any]:
    """:func:`export`, refused unless :mod:`semantic.learned` scores ``x`` as the trainer does."""
    from semantic.learned import ModelRanker, Table

    spec = export(fitted, names)
    ours = ModelRanker({"format": "nav-ranker", "files": spec}).score(Table("files", tuple(names), (), x))
    raw = predict(fitted, x)
    want = np.exp(raw - raw.max())
    if ours is None or np.max(np.abs(np.asarray(ours) - want)) > 1e-6:
        raise SystemExit("the exported model does not score as the trained one")
    return spec


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
        fitted = fit(view, kind, params, x, y, g)
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
        "--kind",
        choices=("linear", "pairwise", "lgbm", "lgbm-res"),
        default="",
        help="the kind to write (default: CV's best)",
    )
    ap.add_argument(
        "--cv-models", default="", help="write each fold's model of both kinds here (for loc_full_bench)"
    )
    args = ap.parse_args()
    dev = load("dev")
    names = {v: dev[0][v]["names"] for v in ("files", "chunks")}
    OFFSET_FEATURE.update(files=names["files"].index("nav_file"), chunks=names["chunks"].index("nav_code"))
    res: dict[str, Any] = {
        "part": "development (CV, leave one repository out)",
        "instances": {s: sum(1 for i in dev if i["set"] == s) for s in SETS},
        "repositories": sorted({i["repo"] for i in dev}),
        "features": names,
        "grid": {
            "linear": LINEAR_GRID,
            "pairwise": PAIRWISE_GRID,
            "lgbm": LGBM_GRID,
            "lgbm-res": LGBM_RES_GRID,
        },
        "views": {},
        "oracle_reranking_ceiling": ceiling(dev),
    }
    best: dict[str, dict[str, dict[str, Any]]] = {}
    t0 = time.perf_counter()
    for view in ("files", "chunks"):
        keys = FILE_METRICS if view == "files" else FN_METRICS
        res["views"][view] = {}
        best[view] = {}
        for kind, grid in (("linear", LINEAR_GRID), ("pairwise", PAIRWISE_GRID), ("lgbm", LGBM_GRID),
                           ("lgbm-res", LGBM_RES_GRID)):  # fmt: skip
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
    if args.cv_models:  # each fold's model, both views, for the exact CV (ranker_eval.py --cv)
        out_dir = Path(args.cv_models)
        out_dir.mkdir(parents=True, exist_ok=True)
        folds: dict[str, dict[str, Any]] = {}
        for view in ("files", "chunks"):
            kind = kinds[view]

            def keep(repo: str, fitted: Any, view: str = view) -> None:
                folds.setdefault(repo, {})[view] = export(fitted, names[view])

            cross_validate(dev, view, kind, best[view][kind]["params"], on_fold=keep)
        for repo, views in folds.items():
            path = out_dir / f"chosen-{repo.replace('/', '+')}.json"
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
            model[view] = {**export_checked(fit(view, kind, best[view][kind]["params"], x, y, g), names[view], x),
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
        f"oracle re-ranking of the same candidates (the ceiling): {res['oracle_reranking_ceiling']}",
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
