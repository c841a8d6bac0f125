"""Offline fusion experiments on semble's benchmark: compute every leg once, re-rank many ways.

The legs (BM25, vectors, symbol names, paths) do not depend on the fusion constants, so
they are computed once per query from the bench indexes (``semble_bench.py`` must have
built and embedded them) and cached in ``bench/corpora/.idx/<slug>/<repo>.legs.pkl``;
then each variant of :func:`semantic.fusion.fuse` is scored on the same queries, with a
paired bootstrap interval of its difference from the first variant.

    python bench/archive/fusion_tune.py --languages python --max-seq-length 128
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]  # bench/ (this one-off is kept in bench/archive/)
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from semble_bench import BENCH, CORPORA  # noqa: E402

import semantic.fusion as F  # noqa: E402
from bench.harness.metrics import semble_ndcg as ndcg10  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.analysis import query_terms  # noqa: E402
from semantic.embed import DEFAULT_MAX_SEQ_LENGTH, load_embedder  # noqa: E402
from storage.db import Store  # noqa: E402


def collect(repo: dict[str, Any], model: str | None, seq: int) -> list[dict[str, Any]]:
    name = repo["name"]
    embedder = load_embedder(model, max_seq_length=seq)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder.model_id)
    db = CORPORA / ".idx" / slug / f"{name}.db"
    cache = db.with_suffix(".legs.pkl")
    if not db.exists():
        print(f"skip {name}: no index at {db}", file=sys.stderr)
        return []
    if cache.exists() and cache.stat().st_mtime > db.stat().st_mtime:
        return pickle.loads(cache.read_bytes())
    broot = repo.get("benchmark_root") or ""
    prefix = (broot.strip("/") + "/") if broot else ""
    store = Store(db)
    search = SemanticSearch(store, embedder=embedder, vectors_dir=db.parent / f"{name}.vectors")
    rep = search.sync(max_embed=0, save=False)
    if not rep.complete:
        print(f"skip {name}: vectors {rep.vectors}/{rep.chunks}", file=sys.stderr)
        store.close()
        return []
    out = []
    for q in json.loads((BENCH / "annotations" / f"{name}.json").read_text()):
        terms = query_terms(q["query"])
        legs, path_leg = search.legs(terms, use_vectors=True)
        cand = {i for ids in legs.values() for i in ids}
        reps = search._first_chunks(path_leg[:10])
        ids = list(cand | set(reps.values()))
        rows = store.chunks_by_ids(ids)
        meta = {i: F.ChunkMeta(i, r.path, r.symbol, r.start_line) for i, r in rows.items()}
        spans = {i: (prefix + r.path, r.start_line, r.end_line) for i, r in rows.items()}
        out.append(
            {
                "repo": name,
                "language": repo["language"],
                "query": q["query"],
                "category": q["category"],
                "targets": list(q["relevant"]) + list(q.get("secondary", [])),
                "legs": legs,
                "path_leg": path_leg,
                "reps": reps,
                "meta": meta,
                "spans": spans,
            }
        )
    store.close()
    cache.write_bytes(pickle.dumps(out))
    return out


Variant = Callable[[dict[str, Any]], list[int]]


def default_variant(legs_used: tuple[str, ...] = ("bm25", "vector", "symbols", "path")) -> Variant:
    def run(rec: dict[str, Any]) -> list[int]:
        legs = {k: v for k, v in rec["legs"].items() if k in legs_used}
        path_leg = rec["path_leg"] if "path" in legs_used else []
        terms = query_terms(rec["query"])
        ranked = F.fuse(legs, rec["meta"], terms, path_leg=path_leg, file_reps=rec["reps"], limit=30)
        return [r.id for r in ranked]

    return run


def score(rec: dict[str, Any], ids: list[int]) -> float:
    chunks = [rec["spans"][i] for i in ids if i in rec["spans"]]
    files = list(dict.fromkeys(p for p, _, _ in chunks))
    return ndcg10(files, chunks, rec["targets"])


def evaluate(records: list[dict[str, Any]], variants: dict[str, tuple[Variant, dict[str, Any]]]) -> None:
    """Each variant: (ranker, constants to patch into semantic.fusion while it runs)."""
    scores: dict[str, list[float]] = {}
    for name, (fn, patch) in variants.items():
        saved = {k: getattr(F, k) for k in patch}
        for k, v in patch.items():
            setattr(F, k, v)
        try:
            scores[name] = [score(r, fn(r)) for r in records]
        finally:
            for k, v in saved.items():
                setattr(F, k, v)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        for g in ("overall", r["category"], r["language"]):
            groups[g].append(i)
    base = next(iter(scores))
    names = list(scores)
    print("| variant | " + " | ".join(f"{g} ({len(ix)})" for g, ix in groups.items()) + " | Δ overall [95% CI] |")
    rng = random.Random(0)
    n = len(records)
    for v in names:
        cells = [f"{statistics.mean(scores[v][i] for i in ix):.3f}" for ix in groups.values()]
        diffs = [a - b for a, b in zip(scores[v], scores[base], strict=True)]
        boots = sorted(statistics.mean(rng.choices(diffs, k=n)) for _ in range(1000))
        ci = f"{statistics.mean(diffs):+.3f} [{boots[25]:+.3f}, {boots[974]:+.3f}]"
        print(f"| {v} | " + " | ".join(cells) + f" | {ci} |")


def load(args: argparse.Namespace) -> list[dict[str, Any]]:
    repos = json.loads((BENCH / "repos.json").read_text())
    if args.repos:
        chosen = [r for r in repos if r["name"] in args.repos.split(",")]
    else:
        chosen = [r for r in repos if r["language"] in set(args.languages.split(","))]
    model = None if args.model == "default" else args.model
    records: list[dict[str, Any]] = []
    for r in chosen:
        if (CORPORA / r["name"]).exists():
            records.extend(collect(r, model, args.max_seq_length))
    return records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", default="")
    ap.add_argument("--languages", default="python")
    ap.add_argument("--model", default="default")
    ap.add_argument("--max-seq-length", type=int, default=DEFAULT_MAX_SEQ_LENGTH)
    ap.add_argument("--experiments", default="")
    ap.add_argument("--compare-seq", default="", help="e.g. 128,256: paired comparison of vector lengths")
    args = ap.parse_args()
    if args.compare_seq:
        compare_seq(args, [int(x) for x in args.compare_seq.split(",")])
        return
    records = load(args)
    if args.experiments == "report":
        report(records)
        return
    for which in filter(None, args.experiments.split(",")):
        print(f"\n{which}")
        experiments(records, which)
    if args.experiments:
        return
    evaluate(
        records,
        {
            "fused": (default_variant(), {}),
            "lexical": (default_variant(("bm25", "symbols", "path")), {}),
            "vector": (default_variant(("vector",)), {}),
        },
    )


def experiments(records: list[dict[str, Any]], which: str) -> None:
    fused = default_variant()
    sets: dict[str, dict[str, tuple[Variant, dict[str, Any]]]] = {
        "penalties": {
            "fused": (fused, {}),
            "test0.5": (fused, {"TEST_PENALTY": 0.5}),
            "test0.3": (fused, {"TEST_PENALTY": 0.3}),
            "docs0.5": (fused, {"DOCS_PENALTY": 0.5}),
            "compat0.3": (fused, {"COMPAT_PENALTY": 0.3}),
            "dts0.7": (fused, {"DTS_PENALTY": 0.7}),
            "reexport0.5": (fused, {"REEXPORT_PENALTY": 0.5}),
        },
        "prose": {
            "fused": (fused, {}),
            "prose0.5": (fused, {"PROSE_PENALTY": 0.5}),
            "prose0.3": (fused, {"PROSE_PENALTY": 0.3}),
            "docs0.5": (fused, {"DOCS_PENALTY": 0.5}),
            "docs0.3": (fused, {"DOCS_PENALTY": 0.3}),
            "docs0.5+prose0.5": (fused, {"DOCS_PENALTY": 0.5, "PROSE_PENALTY": 0.5}),
            "docs0.3+prose0.3": (fused, {"DOCS_PENALTY": 0.3, "PROSE_PENALTY": 0.3}),
        },
        "decay": {
            "fused": (fused, {}),
            "decay0.7": (fused, {"CHUNK_DECAY": 0.7}),
            "decay0.5": (fused, {"CHUNK_DECAY": 0.5}),
            "decay0.3": (fused, {"CHUNK_DECAY": 0.3}),
            "decay0.5top5": (fused, {"CHUNK_DECAY": 0.5, "TOP_CHUNKS_PER_FILE": 5}),
            "decay0.5k20": (fused, {"CHUNK_DECAY": 0.5, "RRF_K": 20}),
            "decay0.5k5": (fused, {"CHUNK_DECAY": 0.5, "RRF_K": 5}),
        },
        "weights": {
            "fused": (fused, {}),
            "vec1.5": (fused, {"LEG_WEIGHTS": {"vector": 1.5}}),
            "vec0.7": (fused, {"LEG_WEIGHTS": {"vector": 0.7}}),
            "sym0.5": (fused, {"LEG_WEIGHTS": {"symbols": 0.5}}),
            "sym1.5": (fused, {"LEG_WEIGHTS": {"symbols": 1.5}}),
            "bm0.7": (fused, {"LEG_WEIGHTS": {"bm25": 0.7}}),
        },
        "legacy": {
            "fused": (fused, {}),
            "compat0.5": (fused, {"COMPAT_PENALTY": 0.5}),
            "compat0.3": (fused, {"COMPAT_PENALTY": 0.3}),
            "private0.7": (fused, {"PRIVATE_PENALTY": 0.7}),
            "private0.5": (fused, {"PRIVATE_PENALTY": 0.5}),
            "compat0.5+private0.7": (fused, {"COMPAT_PENALTY": 0.5, "PRIVATE_PENALTY": 0.7}),
            "compat0.3+private0.5": (fused, {"COMPAT_PENALTY": 0.3, "PRIVATE_PENALTY": 0.5}),
            "compat0.3+private0.7": (fused, {"COMPAT_PENALTY": 0.3, "PRIVATE_PENALTY": 0.7}),
        },
        "case": {
            "fused": (fused, {}),
            "case-aware": (fused, {"CASE_AWARE_NAMES": True}),
        },
        "superseded": {
            "fused": (fused, {}),
            "superseded0.5": (fused, {"SUPERSEDED_PENALTY": 0.5}),
            "superseded0.3": (fused, {"SUPERSEDED_PENALTY": 0.3}),
        },
        "combo": {
            "fused": (fused, {}),
            "k10": (fused, {"RRF_K": 10}),
            "k10+t.3": (fused, {"RRF_K": 10, "TEST_PENALTY": 0.3}),
            "k10+t.3+top2": (fused, {"RRF_K": 10, "TEST_PENALTY": 0.3, "TOP_CHUNKS_PER_FILE": 2}),
            "k10+t.3+path2": (fused, {"RRF_K": 10, "TEST_PENALTY": 0.3, "PATH_LEG_WEIGHT": 2.0}),
            "k10+t.3+stem1.6": (fused, {"RRF_K": 10, "TEST_PENALTY": 0.3, "STEM_BOOST": 1.6}),
            "k5+t.3": (fused, {"RRF_K": 5, "TEST_PENALTY": 0.3}),
            "k10+t.3+def2": (fused, {"RRF_K": 10, "TEST_PENALTY": 0.3, "DEFINITION_BOOST": 2.0}),
        },
        "boosts": {
            "fused": (fused, {}),
            "k10": (fused, {"RRF_K": 10}),
            "k30": (fused, {"RRF_K": 30}),
            "coh0.2": (fused, {"COHERENCE": 0.2}),
            "coh0.5": (fused, {"COHERENCE": 0.5}),
            "top2": (fused, {"TOP_CHUNKS_PER_FILE": 2}),
            "top5": (fused, {"TOP_CHUNKS_PER_FILE": 5}),
            "def2": (fused, {"DEFINITION_BOOST": 2.0}),
            "stem1.6": (fused, {"STEM_BOOST": 1.6}),
            "path2": (fused, {"PATH_LEG_WEIGHT": 2.0}),
            "path0.5": (fused, {"PATH_LEG_WEIGHT": 0.5}),
        },
    }
    evaluate(records, sets[which])


def compare_seq(args: argparse.Namespace, lengths: list[int]) -> None:
    """Paired: the same queries, fusion and lexical legs; only the vectors' max_seq_length differs."""
    sets = []
    for n in lengths:
        args.max_seq_length = n
        sets.append({(r["repo"], r["query"]): r for r in load(args)})
    common = [k for k in sets[0] if all(k in s for s in sets[1:])]
    records = []
    for key in common:
        rec = dict(sets[0][key])
        for n, s in zip(lengths, sets, strict=True):
            rec[f"vector{n}"] = s[key]["legs"].get("vector", [])
            for i in s[key]["spans"]:
                rec["spans"].setdefault(i, s[key]["spans"][i])
                rec["meta"].setdefault(i, s[key]["meta"][i])
        records.append(rec)

    def with_vectors(n: int, legs_used: tuple[str, ...]) -> Variant:
        inner = default_variant(legs_used)

        def run(rec: dict[str, Any]) -> list[int]:
            return inner({**rec, "legs": {**rec["legs"], "vector": rec[f"vector{n}"]}})

        return run

    variants: dict[str, tuple[Variant, dict[str, Any]]] = {}
    for n in lengths:
        variants[f"fused@{n}"] = (with_vectors(n, ("bm25", "vector", "symbols", "path")), {})
    for n in lengths:
        variants[f"vector@{n}"] = (with_vectors(n, ("vector",)), {})
    evaluate(records, variants)


def report(records: list[dict[str, Any]]) -> None:
    """The benchmark table from the cached legs: every config on the same legs."""
    from semble_bench import CONFIGS, SEMBLE

    scores = {cfg: [score(r, default_variant(legs)(r)) for r in records] for cfg, legs in CONFIGS.items()}
    # The ranking constants before this round of tuning, on the same legs (for before/after).
    before = {"RRF_K": 60, "TEST_PENALTY": 0.7, "VENDOR_PENALTY": 0.5, "PROSE_PENALTY": 0.7,
              "COMPAT_PENALTY": 1.0, "PRIVATE_PENALTY": 1.0, "CASE_AWARE_NAMES": False}
    saved = {k: getattr(F, k) for k in before}
    for k, v in before.items():
        setattr(F, k, v)
    try:
        scores["fused (old ranking)"] = [score(r, default_variant()(r)) for r in records]
    finally:
        for k, v in saved.items():
            setattr(F, k, v)
    groups: dict[str, list[int]] = defaultdict(list)
    repos: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(records):
        for g in ("overall", r["category"], r["language"]):
            groups[g].append(i)
        repos[r["repo"]].append(i)
    cfgs = [*CONFIGS, "fused (old ranking)"]
    print("| group | n | " + " | ".join(cfgs) + " | semble |")
    print("|" + "---|" * (len(cfgs) + 3))
    order = ["overall", "architecture", "semantic", "symbol"] + sorted(
        g for g in groups if g not in {"overall", "architecture", "semantic", "symbol"}
    )
    for g in order:
        ix = groups[g]
        cells = " | ".join(f"{statistics.mean(scores[c][i] for i in ix):.3f}" for c in cfgs)
        print(f"| {g} | {len(ix)} | {cells} | {SEMBLE.get(g, '-')} |")
    print()
    print("| repo | n | " + " | ".join(cfgs) + " |")
    print("|" + "---|" * (len(cfgs) + 2))
    for name, ix in repos.items():
        cells = " | ".join(f"{statistics.mean(scores[c][i] for i in ix):.3f}" for c in cfgs)
        print(f"| {name} | {len(ix)} | {cells} |")
    wins = sum(statistics.mean(scores["fused"][i] for i in ix) > 0.854 for ix in repos.values())
    print(f"\nrepos with fused NDCG@10 above 0.854: {wins}/{len(repos)}")


if __name__ == "__main__":
    main()
