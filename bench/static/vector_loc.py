"""The vector leg on the one-line localization set (``loc_bench.py``'s instances and split), one
index per repository, several embedders on it in the same run, paired per instance.

Per instance (the repository's tree at its ``base_commit``, nav's index brought up to date):

- ``lexical``: nav's lexical legs (``loc_bench.LEXICAL``), files and code views;
- per model ``M`` (``--models name=DIR,...``; ``default`` is MiniLM): ``M:fused`` every leg
  (the lexical ones plus that model's vectors) and ``M:vector`` the vector leg alone.

Metrics as ``loc_bench``: file Acc@1/5/10 (files view) and function Recall@5/10 (code view).
Paired differences (95% bootstrap, 2,000 resamples over instances, seed 0): each ``M:fused``
against ``lexical``, and every model against the first one. Embedding time per model
(chunks / seconds, cached by content: a commit embeds only what it changed) and warm query
latency per model (one-line queries, vector leg alone and fused).

Trees and indexes are this script's own (``--work``, default ``/tmp/nav_vector_loc``): a
``git clone --shared --no-checkout`` of each fetched mirror, so a run never moves another
run's working tree.

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD python bench/static/vector_loc.py --split dev \
        --models m2v=bench/corpora/static/minilm-m2v-256,m2v-ft=bench/corpora/static/minilm-m2v-256-ft
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for p in (ROOT, ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from loc_bench import CHECK, LEXICAL, REPOS, Defs, checkout, function_list, score  # noqa: E402

from bench.harness.data import LOC, loc_instances  # noqa: E402
from bench.harness.metrics import distinct  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import mean_ci, percentile  # noqa: E402
from navigator.indexer import index_root  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.embed import load_embedder, set_thread_limit  # noqa: E402
from storage.db import Store  # noqa: E402

METRICS = ("file@1", "file@5", "file@10", "fn@5", "fn@10")
MIRRORS = Path("/work/.mirror")


def tree_for(work: Path, repo: str) -> Path:
    tree = work / "trees" / repo.replace("/", "-")
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        mirror = MIRRORS / repo.replace("/", "+") / "repo"
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", str(mirror), str(tree)], check=True
        )
    return tree


def both_views(
    search: SemanticSearch, q: str, legs: tuple[str, ...], defs: Defs, inst: dict[str, Any]
) -> tuple[dict[str, float], float]:
    """Files view scored for file Acc, code view for function recall; the files view timed (ms)."""
    t0 = time.perf_counter()
    resp = search.search(q, k=50, legs=legs)
    ms = (time.perf_counter() - t0) * 1e3
    spans = [(h.path, h.start_line, h.end_line) for h in resp.items]
    code = search.search(q, k=50, legs=legs, view="code")
    cspans = [(h.path, h.start_line, h.end_line) for h in code.items]
    files = score(distinct(spans), function_list(spans, defs), inst)
    funcs = score(distinct(cspans), function_list(cspans, defs, exact=True), inst)
    return {
        **{m: files[m] for m in METRICS if m.startswith("file")},
        **{m: funcs[m] for m in METRICS if m.startswith("fn")},
    }, ms


def run(
    split: str, models: dict[str, str], work: Path, limit: int | None, repos_arg: str, seed: int = 0
) -> dict[str, Any]:
    instances = loc_instances(LOC)
    chosen = CHECK if split == "check" else [r for r in REPOS if r not in CHECK]
    if repos_arg:
        chosen = [r for r in chosen if r.split("/")[1] in repos_arg.split(",")]
    embedders = {name: load_embedder(None if path == "default" else path) for name, path in models.items()}
    rows: list[dict[str, Any]] = []
    lat: dict[str, list[float]] = defaultdict(list)
    embed_s: dict[str, float] = defaultdict(float)
    embedded: dict[str, int] = defaultdict(int)
    for repo in chosen:
        tree = tree_for(work, repo)
        store = Store(work / "idx" / (repo.replace("/", "-") + ".db"))
        vec_dir = work / "idx" / (repo.replace("/", "-") + ".vectors")
        searches: dict[str, SemanticSearch] = {}
        mine = [i for i in instances if i["repo"] == repo]
        if limit is not None and limit < len(mine):  # a seeded sample per repository, in file order
            keep = set(random.Random(seed).sample(range(len(mine)), limit))
            mine = [x for k, x in enumerate(mine) if k in keep]
        for inst in mine:
            checkout(tree, inst["base_commit"])
            index_root(tree, store)
            lexical = SemanticSearch(store)
            for name, emb in embedders.items():
                if name not in searches:
                    searches[name] = SemanticSearch(store, embedder=emb, vectors_dir=vec_dir)
                t0 = time.perf_counter()
                rep = searches[name].sync(batch_size=64)
                embed_s[name] += time.perf_counter() - t0
                embedded[name] += rep.embedded
            defs = Defs(store.conn)
            q = inst["query"]
            row: dict[str, Any] = {"id": inst["id"], "repo": repo}
            row["lexical"], ms = both_views(lexical, q, LEXICAL, defs, inst)
            lat["lexical"].append(ms)
            for name, search in searches.items():
                row[f"{name}:vector"], ms = both_views(search, q, ("vector",), defs, inst)
                lat[f"{name}:vector"].append(ms)
                row[f"{name}:fused"], ms = both_views(search, q, (*LEXICAL, "vector"), defs, inst)
                lat[f"{name}:fused"].append(ms)
            rows.append(row)
        store.close()
        print(f"{repo}: {len(mine)} instances", file=sys.stderr, flush=True)
    systems = [k for k in rows[0] if k not in ("id", "repo")] if rows else []
    summary = {s: {m: round(statistics.fmean(r[s][m] for r in rows), 3) for m in METRICS} for s in systems}
    names = list(models)
    paired: dict[str, dict[str, list[float]]] = {}

    def pair(a: str, b: str) -> None:
        paired[f"{a} − {b}"] = {
            m: [round(x, 3) for x in mean_ci([r[a][m] - r[b][m] for r in rows])] for m in METRICS
        }

    for name in names:
        pair(f"{name}:fused", "lexical")
    for name in names[1:]:
        pair(f"{name}:fused", f"{names[0]}:fused")
        pair(f"{name}:vector", f"{names[0]}:vector")
    return {
        "split": split,
        "per_repo_sample": limit,
        "seed": seed,
        "repos": chosen,
        "instances": len(rows),
        "models": models,
        "summary": summary,
        "paired": paired,
        "latency_ms_p50": {k: round(percentile(v, 0.5), 1) for k, v in lat.items()},
        "latency_ms_p95": {k: round(percentile(v, 0.95), 1) for k, v in lat.items()},
        "embedding": {
            n: {
                "chunks": embedded[n],
                "seconds": round(embed_s[n], 1),
                "chunks_per_s": round(embedded[n] / embed_s[n], 1) if embed_s[n] else None,
            }
            for n in names
        },
        "rows": rows,
    }


def render(res: dict[str, Any]) -> str:
    out = [
        f"one-line localization, {res['split'].upper()} split: {res['instances']} instances, {len(res['repos'])} repositories",
        "",
    ]
    out.append("| system | " + " | ".join(METRICS) + " |")
    out.append("|---|" + "---|" * len(METRICS))
    for s, v in res["summary"].items():
        out.append(f"| {s} | " + " | ".join(f"{v[m]:.3f}" for m in METRICS) + " |")
    for s, v in res["paired"].items():
        out.append(
            f"| {s} | "
            + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in (v[m] for m in METRICS))
            + " |"
        )
    out.append("")
    out.append("| system | query p50 ms | p95 ms |")
    out.append("|---|---|---|")
    for k, v in res["latency_ms_p50"].items():
        out.append(f"| {k} | {v} | {res['latency_ms_p95'][k]} |")
    out.append("")
    for n, e in res["embedding"].items():
        out.append(f"- {n}: embedded {e['chunks']} chunks in {e['seconds']} s ({e['chunks_per_s']} chunks/s)")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "check"), default="dev")
    ap.add_argument(
        "--models", required=True, help="name=DIR,... (DIR 'default': MiniLM); the first is the baseline"
    )
    ap.add_argument("--work", default="/tmp/nav_vector_loc")
    ap.add_argument("--limit", type=int, default=None, help="instances per repository (a seeded sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repos", default="")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    set_thread_limit(args.threads)
    models = dict(part.split("=", 1) for part in args.models.split(","))
    res = run(args.split, models, Path(args.work), args.limit, args.repos, args.seed)
    text = render(res)
    print(text)
    if args.out:
        write_json(Path(args.out), res)
        Path(args.out).with_suffix(".md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
