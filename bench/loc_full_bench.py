"""Issue localization on full issue text (issue 18), and ranking variants on one index per instance.

Two sets, each with a fixed development/check split (tune on development only):

- ``loc_full``: 237 SWE-bench Lite instances of django, sympy, matplotlib and scikit-learn with
  their full problem statements (``/work/corpora/loc_full/instances.jsonl``, built by
  ``../shared/bench/loc_full/``; bench/README.md, "Issue 18: training pairs ... and the
  full-issue-text split"); split by instance, ``bench/loc_full_split.json`` (95 / 142);
- ``loc``: the one-line SWE-bench-Live summaries of ``loc_bench.py`` (split by repository there).

One git working tree per repository (``<set>/trees/OWNER-NAME``, a ``git clone --shared
--no-checkout`` of the mirror), checked out at each instance's base commit; nav's index of the
repository is brought up to date incrementally and a copy of it is kept per instance
(``<set>/idx/inst/<id>.db``), with the baselines' scores beside it (``<id>.base.json``): a later run
scores new ranking variants without checking out or indexing anything. Lexical legs only.

Systems, in the same run on the same index: ``nav-files`` (files view) and ``nav-code`` (code
view) for the shipped ranking and for each variant (a :class:`semantic.ranking.RankingConfig`
with some fields changed: ``--variant NAME FIELD=VALUE ...`` or a name of :data:`VARIANTS`;
``--rank FIELD=VALUE`` changes the base ranking of every system); ``bm25`` (plain FTS5 BM25 over
the same chunks) and ``bm25-code`` (stemmed, identifiers spelled as words). Metrics: file
Acc@1/5/10, function Recall@5/10 (bench/harness/localize.py) and ``nonsrc@5``, the share of the
top-5 file slots that hold no Python source (tests, docs, examples, CI, non-``.py`` files:
:func:`bench.harness.localize.non_source`). Paired differences with seeded 95% bootstrap intervals:
nav against both baselines, each variant against nav.

    python bench/loc_full_bench.py --set loc_full --split dev --sample 30 --seed 1 --variant before ...
    python bench/loc_full_bench.py --set loc --split dev --variant before
    python bench/loc_full_bench.py --set loc_full --split check   # once, at the end
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.localize import (  # noqa: E402
    METRICS,
    CodeBM25,
    Defs,
    PlainBM25,
    checkout,
    function_list,
    non_source,
    score,
)
from bench.harness.metrics import distinct  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import mean_ci, percentile  # noqa: E402
from navigator.history import index_history  # noqa: E402
from navigator.indexer import index_root  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.ranking import DEFAULT, RankingConfig  # noqa: E402
from storage.db import Store  # noqa: E402

SETS = {"loc_full": Path("/work/corpora/loc_full"), "loc": Path("/work/corpora/loc")}
LEXICAL = ("bm25", "symbols", "path", "refs")
ALL_METRICS = (*METRICS, "nonsrc@5")

VARIANTS: dict[str, dict[str, Any]] = {
    "no-nonsrc": {"non_source_penalty": 1.0},
    "no-frames": {"frame_boost": 1.0},
    "frames-3": {"frame_boost": 3.0},
    "no-ident": {"identifier_leg": False},
    "tests-0.1": {"test_penalty": 0.1},
    "docs-0.5": {"docs_penalty": 0.5},
    "before": {  # nav before issue 18's levers (the values they had)
        "non_source_penalty": 1.0,
        "frame_boost": 1.0,
        "identifier_leg": False,
    },
}
"""Named variants (issue 18's levers, each alone): the RankingConfig fields each changes from the
base ranking."""


def split_ids(name: str, split: str, instances: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The instances of one part of a set's fixed split."""
    if name == "loc_full":
        from loc_full_split import SPLIT_FILE

        ids = set(json.loads(SPLIT_FILE.read_text())["development" if split == "dev" else "check"])
        return [i for i in instances if i["id"] in ids]
    from loc_bench import CHECK

    return [i for i in instances if (i["repo"] in CHECK) == (split == "check")]


def parse_changes(assignments: list[str]) -> dict[str, Any]:
    """``["rrf_k=20", "stem_boost=2.0"]`` -> ``{"rrf_k": 20, "stem_boost": 2.0}`` (Python literals),
    naming an unknown field."""
    fields = {f.name for f in dataclasses.fields(RankingConfig)}
    changes: dict[str, Any] = {}
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        if name not in fields:
            raise SystemExit(f"{assignment[:100]}: RankingConfig has no field {name!r}")
        changes[name] = ast.literal_eval(value)
    return changes


_BASELINES: dict[str, tuple[PlainBM25, CodeBM25]] = {}
"""Per working store, the two baselines' FTS tables, updated with it (a fresh build per instance
took 15 s on django)."""


def instance_index(root: Path, inst: dict[str, Any], trees: str = "trees") -> Path:
    """The cached index of one instance's base commit, built (checkout + incremental index of the
    repository's working store + a copy) when missing. ``trees``: the folder under ``root`` of
    the working trees and their stores (two builders at once need a folder each)."""
    cache = root / "idx" / "inst" / f"{inst['id']}.db"
    if cache.exists():
        return cache
    slug = inst["repo"].replace("/", "-")
    tree = root / trees / slug
    if not tree.exists():
        mirror = root / "trees" / slug
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", str(mirror), str(tree)], check=True
        )
    checkout(tree, inst["base_commit"])
    store = Store(root / ("idx" if trees == "trees" else trees) / f"{slug}.db")
    try:
        index_root(tree, store)
        key = str(store.path)
        if key in _BASELINES:
            for b in _BASELINES[key]:
                b.update(store.conn)
        else:
            _BASELINES[key] = (PlainBM25(store.conn), CodeBM25(store.conn))
        defs = Defs(store.conn)
        pair = zip(("bm25", "bm25-code"), _BASELINES[key], strict=True)
        systems = {name: scored(b.search(inst["query"]), defs, inst) for name, b in pair}
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_json(cache.with_suffix(".base.json"), {"query": inst["query"], "systems": systems})
        tmp = cache.with_suffix(".tmp")
        dest = sqlite3.connect(tmp)
        store.conn.backup(dest)
        dest.close()
        tmp.rename(cache)
    finally:
        store.close()
    return cache


def nonsrc_share(files: list[str]) -> float:
    top = files[:5]
    return sum(1 for f in top if non_source(f)) / len(top) if top else 0.0


def scored(
    spans: list[tuple[str, int, int]], defs: Defs, inst: dict[str, Any], *, exact: bool = False
) -> dict[str, float]:
    files = distinct(spans)
    return {**score(files, function_list(spans, defs, exact=exact), inst), "nonsrc@5": nonsrc_share(files)}


def baselines(db: Path, store: Store, defs: Defs, inst: dict[str, Any]) -> dict[str, Any]:
    """bm25 and bm25-code for one instance, cached beside its index."""
    path = db.with_suffix(".base.json")
    if path.exists():
        cached: dict[str, Any] = json.loads(path.read_text())
        if cached.get("query") == inst["query"]:
            return dict(cached["systems"])
    out: dict[str, Any] = {}
    for name, cls in (("bm25", PlainBM25), ("bm25-code", CodeBM25)):
        b = cls(store.conn)
        out[name] = scored(b.search(inst["query"]), defs, inst)
        b.db.close()
    write_json(path, {"query": inst["query"], "systems": out})
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = SETS[args.set]
    instances = split_ids(args.set, args.split, jsonl(root / "instances.jsonl"))
    if args.repos:
        instances = [i for i in instances if i["repo"].split("/")[1] in args.repos.split(",")]
    if args.sample:
        chosen = set(
            random.Random(args.seed).sample(
                sorted(i["id"] for i in instances), min(args.sample, len(instances))
            )
        )
        instances = [i for i in instances if i["id"] in chosen]
    # Round robin over the repositories, each in id order: a partial build covers every
    # repository (each keeps its own working tree and store, so switching costs nothing).
    instances.sort(key=lambda i: (i["repo"], i["id"]))
    turn: dict[str, int] = {}
    order = {}
    for i in instances:
        turn[i["repo"]] = turn.get(i["repo"], -1) + 1
        order[i["id"]] = (turn[i["repo"]], i["repo"])
    instances.sort(key=lambda i: order[i["id"]])
    if args.cached_only:  # iterate while a builder runs: the instances indexed so far
        instances = [i for i in instances if (root / "idx" / "inst" / f"{i['id']}.base.json").exists()]
    base = dataclasses.replace(DEFAULT, **parse_changes(args.rank))
    variants: dict[str, RankingConfig] = {"nav": base}
    for spec in args.variant:
        name, *assignments = spec.split()
        changes = {**VARIANTS.get(name, {}), **parse_changes(assignments)}
        if not changes:
            raise SystemExit(f"--variant {name!r}: no such named variant and no FIELD=VALUE given")
        variants[name] = dataclasses.replace(base, **changes)
    rows: list[dict[str, Any]] = []
    lat: dict[str, list[float]] = {n: [] for n in variants}
    lat_code: dict[str, list[float]] = {n: [] for n in variants}
    embedder = None
    if args.vectors:
        from semantic.embed import load_embedder, set_thread_limit

        set_thread_limit(1)
        embedder = load_embedder()
        lat.update({f"{n}+v": [] for n in variants})
        lat_code.update({f"{n}+v": [] for n in variants})
    for n, inst in enumerate(instances):
        db = instance_index(root, inst, args.trees)
        if args.build_only:
            print(f"[{n + 1}/{len(instances)}] {inst['id']}: indexed", file=sys.stderr, flush=True)
            continue
        store = Store(db)
        try:
            defs = Defs(store.conn)
            row: dict[str, Any] = {"id": inst["id"], "repo": inst["repo"], "gold": inst["gold_files"]}
            if not args.no_baselines:
                row.update(baselines(db, store, defs, inst))
            first = SemanticSearch(store, config=variants["nav"])
            if args.history:  # the repository's history at the base commit (read once per copy)
                report = index_history(
                    root / "trees" / inst["repo"].replace("/", "-"),
                    store,
                    rev=inst["base_commit"],
                    budget_s=None,
                )
                if report.problem:
                    print(f"{inst['id']}: history: {report.problem}", file=sys.stderr)
            for name, config in variants.items():
                search = first if name == "nav" else SemanticSearch(store, config=config, share_with=first)
                t0 = time.perf_counter()
                files = search.search(inst["query"], k=50, legs=LEXICAL)
                lat[name].append((time.perf_counter() - t0) * 1e3)
                t0 = time.perf_counter()
                code = search.search(inst["query"], k=50, legs=LEXICAL, view="code")
                lat_code[name].append((time.perf_counter() - t0) * 1e3)
                suffix = "" if name == "nav" else f"[{name}]"
                f_spans = [(h.path, h.start_line, h.end_line) for h in files.items]
                c_spans = [(h.path, h.start_line, h.end_line) for h in code.items]
                row[f"nav-files{suffix}"] = scored(f_spans, defs, inst)
                row[f"nav-code{suffix}"] = scored(c_spans, defs, inst, exact=True)
                row[f"top{suffix}"] = distinct(f_spans)[:5]
            if embedder is not None:
                with tempfile.TemporaryDirectory(prefix="nav-locvec-") as vdir:
                    every_leg(root, db, store, embedder, Path(vdir), variants, inst, defs, row, lat, lat_code)
        finally:
            store.close()
        rows.append(row)
        print(f"[{n + 1}/{len(instances)}] {inst['id']}: " + " ".join(
            f"{s}={row[s]['file@5']:.0f}/{row[s]['fn@10']:.2f}" for s in row if s.startswith(("nav-files", "bm25"))
        ), file=sys.stderr, flush=True)  # fmt: skip
    res = summarize(rows, args, variants)
    res["latency_ms_p50"] = {n: round(percentile(v, 0.5), 1) for n, v in lat.items()}
    res["code_latency_ms_p50"] = {n: round(percentile(v, 0.5), 1) for n, v in lat_code.items()}
    return res


def every_leg(
    root: Path,
    db: Path,
    store: Store,
    embedder: Any,
    vdir: Path,
    variants: dict[str, RankingConfig],
    inst: dict[str, Any],
    defs: Defs,
    row: dict[str, Any],
    lat: dict[str, list[float]],
    lat_code: dict[str, list[float]],
) -> None:
    """Score each variant with every leg (nav's default) as ``nav-files+v`` / ``nav-code+v``: the
    instance's vector index is built through nav's ``VectorIndex`` from the repository's cache
    (``loc_vectors.py fill``), saved where the search reads it, then searched as nav searches."""
    from loc_vectors import cache_path, open_cache, vectors_for

    from navigator.vector_sync import embed_key
    from semantic.vectors import VectorIndex

    keys = {k.id: embed_key(k.hash, k.path, k.symbol, k.signature) for k in store.chunk_keys()}
    cache = open_cache(cache_path(root, db))
    try:
        vecs = vectors_for(cache, sorted(set(keys.values())), embedder.model_id)
    finally:
        cache.close()
    have = [i for i, k in keys.items() if k in vecs]
    if len(have) < len(keys):
        raise SystemExit(
            f"{inst['id']}: {len(keys) - len(have)} of {len(keys)} chunks have no cached vector: run loc_vectors.py fill"
        )
    first = SemanticSearch(store, config=variants["nav"], embedder=embedder, vectors_dir=vdir)
    index = VectorIndex(int(next(iter(vecs.values())).shape[0]), embedder.model_id)
    index.add(have, [keys[i] for i in have], np.vstack([vecs[keys[i]] for i in have]))
    index.maybe_go_approximate()
    index.save(first.vectors_path)
    report = first.sync(max_embed=0)
    if report.vectors != report.chunks:
        raise SystemExit(f"{inst['id']}: the vector index covers {report.vectors} of {report.chunks} chunks")
    for name, config in variants.items():
        search = first if name == "nav" else SemanticSearch(store, config=config, share_with=first)
        t0 = time.perf_counter()
        files = search.search(inst["query"], k=50)
        lat[f"{name}+v"].append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        code = search.search(inst["query"], k=50, view="code")
        lat_code[f"{name}+v"].append((time.perf_counter() - t0) * 1e3)
        if not files.complete or "vector" not in {leg for h in files.items for leg in h.ranks}:
            print(
                f"  {inst['id']}: every-leg answer without the vector leg ({files.reason})", file=sys.stderr
            )
        suffix = "" if name == "nav" else f"[{name}]"
        row[f"nav-files+v{suffix}"] = scored(
            [(h.path, h.start_line, h.end_line) for h in files.items], defs, inst
        )
        row[f"nav-code+v{suffix}"] = scored(
            [(h.path, h.start_line, h.end_line) for h in code.items], defs, inst, exact=True
        )


def summarize(
    rows: list[dict[str, Any]], args: argparse.Namespace, variants: dict[str, RankingConfig]
) -> dict[str, Any]:
    systems = [k for k in rows[0] if isinstance(rows[0][k], dict)] if rows else []
    summary = {
        s: {m: round(statistics.fmean(r[s][m] for r in rows), 3) for m in ALL_METRICS} for s in systems
    }

    def paired(a: str, b: str) -> dict[str, list[float]]:
        return {m: [round(x, 3) for x in mean_ci([r[a][m] - r[b][m] for r in rows])] for m in ALL_METRICS}

    pairs: dict[str, Any] = {}
    for s in systems:
        if s.startswith("nav-") and "[" not in s:
            for b in ("bm25", "bm25-code"):
                if b in systems:
                    pairs[f"{s} vs {b}"] = paired(s, b)
        if "[" in s:
            pairs[f"{s} vs {s.split('[', 1)[0]}"] = paired(s, s.split("[", 1)[0])
        elif s.endswith("+v") and s[:-2] in systems:
            pairs[f"{s} vs {s[:-2]}"] = paired(s, s[:-2])
    changes = {
        n: {
            f.name: getattr(c, f.name)
            for f in dataclasses.fields(c)
            if getattr(c, f.name) != getattr(DEFAULT, f.name)
        }
        for n, c in variants.items()
    }
    return {
        "set": args.set,
        "split": args.split,
        "part": "development" if args.split == "dev" else "check",
        "sample": args.sample,
        "seed": args.seed,
        "command": "python " + " ".join(sys.argv),
        "variants": {n: {k: repr(v) for k, v in c.items()} for n, c in changes.items()},
        "instances": len(rows),
        "summary": summary,
        "paired": pairs,
        "gold_non_source": sum(1 for r in rows for g in r["gold"] if non_source(g)),
        "rows": rows,
    }


def render(res: dict[str, Any]) -> str:
    out = [
        f"{res['set']} {res['part']} part: {res['instances']} instances"
        + (f" (seeded sample {res['sample']}, seed {res['seed']})" if res["sample"] else ""),
        f"command: `{res['command']}`",
        f"variants (RankingConfig fields changed from the shipped ones): {res['variants']}",
        "",
        "| system | " + " | ".join(ALL_METRICS) + " |",
        "|---|" + "---|" * len(ALL_METRICS),
    ]
    for s, v in res["summary"].items():
        out.append(f"| {s} | " + " | ".join(f"{v[m]:.3f}" for m in ALL_METRICS) + " |")
    for s, v in res["paired"].items():
        out.append(
            f"| {s} | "
            + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in (v[m] for m in ALL_METRICS))
            + " |"
        )
    out += ["", f"files-view search p50 ms per variant: {res.get('latency_ms_p50')}",
            f"code-view search p50 ms per variant (k=50): {res.get('code_latency_ms_p50')}"]  # fmt: skip
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=tuple(SETS), default="loc_full")
    ap.add_argument("--split", choices=("dev", "check"), default="dev")
    ap.add_argument("--sample", type=int, default=0, help="a seeded sample of this many instances (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repos", default="", help="comma-separated repository names (NAME of OWNER/NAME)")
    ap.add_argument(
        "--rank", action="append", default=[], metavar="FIELD=VALUE", help="the base ranking's fields"
    )
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="'NAME FIELD=VALUE ...'",
        help="a variant scored beside nav",
    )
    ap.add_argument("--no-baselines", action="store_true", help="nav's variants only")
    ap.add_argument(
        "--vectors",
        action="store_true",
        help="also score every leg (nav's default, vectors from loc_vectors.py fill) beside the lexical legs, paired",
    )
    ap.add_argument("--cached-only", action="store_true", help="only the instances already indexed")
    ap.add_argument(
        "--build-only", action="store_true", help="only build the per-instance indexes (no scores)"
    )
    ap.add_argument(
        "--trees", default="trees", help="the working trees' folder under the set's (one per builder)"
    )
    ap.add_argument(
        "--history",
        action="store_true",
        help="read each copy's git history at its base commit first (the history leg)",
    )
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    res = run(args)
    if args.build_only:
        return
    text = render(res)
    print(text)
    if args.out:
        write_json(Path(args.out), res)
        Path(args.out).with_suffix(".md").write_text(text + "\n")


if __name__ == "__main__":
    main()
