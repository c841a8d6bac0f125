"""Ranked lists before and after a change: the "no behaviour change" evidence of issue 20.

``dump`` indexes each repository of a set with the code of the checkout this file runs from (a
fresh index per run), sends every query through ``SemanticSearch.search`` as the benchmarks do
(same legs, same ``k``), in both views, and writes every ranked list as one JSON line: path,
start/end line, symbol, score rounded to 1e-9. ``--compare A B`` says, per set, how many lists
are identical, which differ (first differing rank, the query, both lists' top items) and which
differ in their scores only. Only public entry points are called (``navigator.indexer.index_root``,
``storage.db.Store``, ``navigator.search.SemanticSearch``): the same file runs unchanged at the
commit before the redesign and after it.

Sets (corpora outside the repository, never committed):

- ``semble``: the 21 DEVELOPMENT repositories of semble_bench.py, ``/work/corpora/semble/<name>/``;
  its lexical configs (``lexical`` = BM25 + symbols + paths, and each leg alone), ``k=30``.
- ``loc``: loc_bench.py's development split (10 repositories), instances from
  ``/work/corpora/loc/instances.jsonl``, one working tree per repository moved from base commit to
  base commit with nav's incremental index; legs BM25, symbols, paths, refs, ``k=50``, all files
  and Python only (``languages=["python"]``), as loc_bench.py calls it.
- ``loc_full``: the development ids of bench/loc_full_split.json, instances from
  ``/work/corpora/loc_full/instances.jsonl`` (full issue text), run as ``loc``; ``--sample N``
  takes a fixed, seeded subset spread over the four repositories.
- ``vectors``: a few small semble development repositories with the default model (MiniLM): the
  ``fused`` (every leg, RRF) and ``vector`` configs of semble_bench.py, ``k=30``.

    P=/work/main/.venv/bin/python
    PYTHONPATH=$PWD nice -n 10 $P bench/ranked_lists.py dump semble --tag before
    PYTHONPATH=$PWD nice -n 10 $P bench/ranked_lists.py dump loc --tag before
    PYTHONPATH=$PWD nice -n 10 $P bench/ranked_lists.py dump loc_full --sample 30 --tag before
    OMP_NUM_THREADS=1 PYTHONPATH=$PWD nice -n 10 $P bench/ranked_lists.py dump vectors --tag before
    $P bench/ranked_lists.py --compare /work/corpora/ranked/before-semble.jsonl /work/corpora/ranked/after-semble.jsonl

The exit status of ``--compare`` is 0 only when every list is identical and both files hold the
same queries.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

OUT = Path(os.environ.get("NAV_RANKED_DIR", "/work/corpora/ranked"))
SEMBLE = Path("/work/shared/bench/semble")
SEMBLE_CORPORA = Path(os.environ.get("NAV_SEMBLE_CORPORA", "/work/corpora/semble"))
LOC = Path("/work/corpora/loc")
LOC_FULL = Path("/work/corpora/loc_full")
MIRRORS = Path("/work/.mirror")

SEMBLE_DEV = (
    "aiohttp", "fastapi", "flask", "httpx", "model2vec", "pydantic", "requests", "starlette", "click",
    "axios", "express", "redux", "gin", "cobra", "chi", "trpc", "vitest", "zod", "serde", "axum", "tokio",
)  # fmt: skip
"""semble_bench.DEVELOPMENT, in a fixed order."""
VECTOR_REPOS = ("redux", "express", "requests", "click", "chi")
"""Small development repositories for the vector leg (TypeScript, JavaScript, Python, Go: 815
chunks together at 48b7006)."""
SEMBLE_CONFIGS = {
    "lexical": ("bm25", "symbols", "path"),
    "bm25": ("bm25",),
    "symbols": ("symbols",),
    "path": ("path",),
}
VECTOR_CONFIGS = {"fused": ("bm25", "vector", "symbols", "path"), "vector": ("vector",)}
LOC_LEGS = ("bm25", "symbols", "path", "refs")
LOC_REPOS = sorted(
    [
        "sissbruecker/linkding", "pvlib/pvlib-python", "koxudaxi/datamodel-code-generator", "Kozea/WeasyPrint",
        "geopandas/geopandas", "patroni/patroni", "stanfordnlp/dspy", "reata/sqllineage", "mikedh/trimesh",
        "ipython/ipython", "beetbox/beets", "python-attrs/attrs", "python-babel/babel", "urllib3/urllib3",
        "aws-cloudformation/cfn-lint",
    ]
)  # fmt: skip
LOC_CHECK = sorted(random.Random(9).sample(LOC_REPOS, 5))  # loc_bench.CHECK
LOC_FULL_FORKS = {
    "django/django": "apprent1c3/django",
    "matplotlib/matplotlib": "williamlus/matplotlib",
    "scikit-learn/scikit-learn": "Agent-Benchmarking/scikit-learn",
    "sympy/sympy": "sympy/sympy",
}  # loc_full_split.FORKS: forks holding every base commit, same commit ids
HASH_SEED = "0"
"""``PYTHONHASHSEED`` of every dump (see ``main``)."""
QUERY_CHARS = 300
"""How much of a query a record keeps (a full issue text is long; ``query_sha`` keys it)."""


# -- records and comparison (pure) ----------------------------------------------------------


def record(
    set_name: str, repo: str, qid: str, config: str, view: str, k: int, query: str, resp: Any
) -> dict[str, Any]:
    """One ranked list as a JSON-able dict; ``resp`` is a search ``Response``."""
    import hashlib

    return {
        "set": set_name,
        "repo": repo,
        "id": qid,
        "config": config,
        "view": view,
        "k": k,
        "query": query[:QUERY_CHARS],
        "query_sha": hashlib.sha1(query.encode()).hexdigest()[:16],
        "complete": bool(getattr(resp, "complete", True)),
        "items": [
            [h.path, int(h.start_line), int(h.end_line), h.symbol, round(float(h.score), 9)]
            for h in resp.items
        ],
    }


def key(rec: dict[str, Any]) -> tuple[str, ...]:
    return (rec["set"], rec["repo"], rec["id"], rec["config"], rec["view"])


def load(path: Path) -> dict[tuple[str, ...], dict[str, Any]]:
    """The records of a dump (its ``meta`` line skipped), by key."""
    out: dict[tuple[str, ...], dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            rec = json.loads(line)
            if "meta" not in rec:
                out[key(rec)] = rec
    return out


@dataclass
class SetDiff:
    """What ``--compare`` found in one set."""

    compared: int = 0
    identical: int = 0
    differing: list[dict[str, Any]] = field(default_factory=list)
    score_only: list[dict[str, Any]] = field(default_factory=list)
    only_a: list[tuple[str, ...]] = field(default_factory=list)
    only_b: list[tuple[str, ...]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.differing or self.score_only or self.only_a or self.only_b)


def first_difference(a: list[list[Any]], b: list[list[Any]]) -> int | None:
    """The 1-based rank where two lists' items (path, lines, symbol) first differ; None when
    they are the same items in the same order."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x[:4] != y[:4]:
            return i + 1
    return None if len(a) == len(b) else min(len(a), len(b)) + 1


def _at(items: list[list[Any]], rank: int | None) -> list[Any] | None:
    return items[rank - 1] if rank is not None and rank <= len(items) else None


def compare(
    a: dict[tuple[str, ...], dict[str, Any]], b: dict[tuple[str, ...], dict[str, Any]]
) -> dict[str, SetDiff]:
    """Per set: identical lists, differing ones, score-only differences, keys in one file only."""
    sets: dict[str, SetDiff] = defaultdict(SetDiff)
    for k in sorted(set(a) | set(b)):
        d = sets[k[0]]
        if k not in b:
            d.only_a.append(k)
            continue
        if k not in a:
            d.only_b.append(k)
            continue
        ra, rb = a[k], b[k]
        d.compared += 1
        rank = first_difference(ra["items"], rb["items"])
        if rank is not None or ra["complete"] != rb["complete"] or ra["query_sha"] != rb["query_sha"]:
            d.differing.append(
                {
                    "key": k,
                    "rank": rank,
                    "query": ra["query"][:120],
                    "a": _at(ra["items"], rank),
                    "b": _at(rb["items"], rank),
                    "a_top": ra["items"][:3],
                    "b_top": rb["items"][:3],
                    "complete": (ra["complete"], rb["complete"]),
                }
            )
        elif ra["items"] != rb["items"]:
            ranks = [i + 1 for i, (x, y) in enumerate(zip(ra["items"], rb["items"], strict=True)) if x != y]
            d.score_only.append(
                {"key": k, "ranks": ranks, "a": ra["items"][ranks[0] - 1], "b": rb["items"][ranks[0] - 1]}
            )
        else:
            d.identical += 1
    return dict(sets)


def report(sets: dict[str, SetDiff], shown: int = 10) -> str:
    out: list[str] = []
    for name, d in sorted(sets.items()):
        out.append(
            f"{name}: {d.compared} lists compared, {d.identical} identical, {len(d.differing)} differing, "
            f"{len(d.score_only)} score-only, {len(d.only_a)} only in A, {len(d.only_b)} only in B"
        )
        for x in d.differing[:shown]:
            out.append(f"  differs at rank {x['rank']}: {'/'.join(x['key'][1:])}  query {x['query']!r}")
            if x["complete"][0] != x["complete"][1]:
                out.append(f"    complete: A {x['complete'][0]}, B {x['complete'][1]}")
            out.append(f"    at that rank  A: {x['a']}  B: {x['b']}")
            out.append(f"    top 3  A: {x['a_top']}")
            out.append(f"    top 3  B: {x['b_top']}")
        for x in d.score_only[:shown]:
            out.append(
                f"  scores differ at ranks {x['ranks'][:10]}: {'/'.join(x['key'][1:])}: A {x['a']} B {x['b']}"
            )
        for label, keys in (("only in A", d.only_a), ("only in B", d.only_b)):
            for k in keys[:shown]:
                out.append(f"  {label}: {'/'.join(k)}")
        hidden = max(0, len(d.differing) - shown) + max(0, len(d.score_only) - shown)
        if hidden:
            out.append(f"  ({hidden} more not shown)")
    return "\n".join(out)


# -- running nav (public entry points only) ---------------------------------------------------


def _fresh_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    shutil.rmtree(path.with_suffix(".vectors"), ignore_errors=True)
    path.parent.mkdir(parents=True, exist_ok=True)


def _index(root: Path, store: Any) -> Any:
    """``index_root`` on one worker where the signature allows it (CPU is shared; the parse
    order, and so the index, is the same either way: results come back in submit order)."""
    from navigator.indexer import index_root

    if "workers" in inspect.signature(index_root).parameters:
        return index_root(root, store, workers=1)
    return index_root(root, store)  # pragma: no cover - a later signature


def _search(engine: Any, embedder: Any = None, vectors_dir: Path | None = None) -> Any:
    from navigator.search import SemanticSearch

    return SemanticSearch(engine, embedder=embedder, vectors_dir=vectors_dir)


def dump_root(
    set_name: str,
    repo: str,
    root: Path,
    db: Path,
    queries: list[tuple[str, str]],
    configs: dict[str, tuple[str, ...]],
    k: int,
    *,
    vectors: bool = False,
    languages: tuple[str, ...] = (),
) -> Iterator[dict[str, Any]]:
    """Index ``root`` into a fresh ``db`` and yield each (query, config, view)'s ranked list."""
    from storage.db import Store

    _fresh_db(db)
    store = Store(db)
    try:
        _index(root, store)
        yield from search_all(
            set_name, repo, store, db, queries, configs, k, vectors=vectors, languages=languages
        )
    finally:
        store.close()


def search_all(
    set_name: str,
    repo: str,
    store: Any,
    db: Path,
    queries: list[tuple[str, str]],
    configs: dict[str, tuple[str, ...]],
    k: int,
    *,
    vectors: bool = False,
    languages: tuple[str, ...] = (),
) -> Iterator[dict[str, Any]]:
    embedder = None
    if vectors:
        try:  # semble_bench.py's embedder; SemanticSearch loads the same default itself otherwise
            from semantic.embed import load_embedder

            embedder = load_embedder(None)
        except ImportError:  # pragma: no cover - a later layout
            embedder = None
    search = _search(store, embedder, db.with_suffix(".vectors"))
    if vectors:
        batch = {"batch_size": 64} if "batch_size" in inspect.signature(search.sync).parameters else {}
        search.sync(**batch)
    for qid, text in queries:
        for cfg, legs in configs.items():
            for view in ("files", "code"):
                resp = search.search(text, k=k, legs=legs, view=view)
                yield record(set_name, repo, qid, cfg, view, k, text, resp)
                if languages:
                    resp = search.search(text, k=k, legs=legs, view=view, languages=list(languages))
                    yield record(set_name, repo, qid, f"{cfg}:{','.join(languages)}", view, k, text, resp)


def semble_queries(name: str) -> list[tuple[str, str]]:
    annotations = json.loads((SEMBLE / "annotations" / f"{name}.json").read_text())
    return [(f"{i}", q["query"]) for i, q in enumerate(annotations)]


def dump_semble(repos: Iterable[str], idx: Path, vectors: bool = False) -> Iterator[dict[str, Any]]:
    meta = {r["name"]: r for r in json.loads((SEMBLE / "repos.json").read_text())}
    set_name = "vectors" if vectors else "semble"
    for name in repos:
        root = SEMBLE_CORPORA / name / (meta[name].get("benchmark_root") or "")
        if not root.is_dir():
            print(f"{name}: no corpus at {root} (skipped)", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        configs = VECTOR_CONFIGS if vectors else SEMBLE_CONFIGS
        yield from dump_root(
            set_name, name, root, idx / f"{name}.db", semble_queries(name), configs, 30, vectors=vectors
        )
        print(f"{name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)


def checkout(tree: Path, mirror: Path, commit: str) -> None:
    """Move ``tree`` (a shared clone of ``mirror``) to ``commit``; blobs the mirror lacks (files
    of 4 MiB and more) are left out by sparse checkout, as loc_bench.py does."""
    if not (tree / ".git").is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", str(mirror), str(tree)], check=True
        )
    for _ in range(5):
        p = subprocess.run(
            ["git", "-C", str(tree), "checkout", "-q", "-f", commit], capture_output=True, text=True
        )
        if p.returncode == 0:
            break
        missing = re.findall(r"unable to read sha1 file of (\S+) \(", p.stderr)
        if not missing:
            raise RuntimeError(f"git checkout {commit} in {tree}: {p.stderr[-500:]}")
        print(
            f"{tree.name}: leaving out {len(missing)} files the mirror lacks: {missing[:3]}", file=sys.stderr
        )
        sparse = tree / ".git" / "info" / "sparse-checkout"
        lines = sparse.read_text().splitlines() if sparse.exists() else ["/*"]
        sparse.parent.mkdir(parents=True, exist_ok=True)
        sparse.write_text("\n".join([*lines, *("!/" + m for m in missing)]) + "\n")
        subprocess.run(["git", "-C", str(tree), "config", "core.sparseCheckout", "true"], check=True)
    else:
        raise RuntimeError(f"git checkout {commit} in {tree} kept failing")
    subprocess.run(["git", "-C", str(tree), "clean", "-q", "-f", "-d", "-x"], check=True)


def dump_instances(
    set_name: str, instances: list[dict[str, Any]], mirror_of: dict[str, str], idx: Path, trees: Path
) -> Iterator[dict[str, Any]]:
    """Per repository one working tree moved from base commit to base commit (instances in id
    order) and one index brought up to date incrementally, as loc_bench.py runs."""
    from storage.db import Store

    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for inst in instances:
        by_repo[inst["repo"]].append(inst)
    for repo in sorted(by_repo):
        slug = repo.replace("/", "-")
        db = idx / f"{slug}.db"
        _fresh_db(db)
        tree = trees / slug
        # A fresh clone per run: the sparse-checkout exclusions a run adds (blobs the mirror
        # lacks) would otherwise carry into the next run and leave files out of earlier commits.
        shutil.rmtree(tree, ignore_errors=True)
        store = Store(db)
        t0 = time.perf_counter()
        try:
            for inst in sorted(by_repo[repo], key=lambda i: i["id"]):
                checkout(tree, MIRRORS / mirror_of[repo].replace("/", "+") / "repo", inst["base_commit"])
                _index(tree, store)
                yield from search_all(
                    set_name, repo, store, db, [(inst["id"], inst["query"])], {"lexical": LOC_LEGS}, 50,
                    languages=("python",),
                )  # fmt: skip
        finally:
            store.close()
        print(
            f"{repo}: {len(by_repo[repo])} instances, {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
            flush=True,
        )


def loc_instances(limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(x) for x in (LOC / "instances.jsonl").read_text().splitlines() if x.strip()]
    out: list[dict[str, Any]] = []
    for repo in [r for r in LOC_REPOS if r not in LOC_CHECK]:
        out += [r for r in rows if r["repo"] == repo][:limit]  # loc_bench.py's --limit: file order
    return out


def loc_full_instances(sample: int | None, seed: int = 20) -> list[dict[str, Any]]:
    """The development instances; ``sample``: a seeded subset, each repository's share of it in
    proportion to its share of the set (at least one each)."""
    dev = set(json.loads((HERE / "loc_full_split.json").read_text())["development"])
    rows = [json.loads(x) for x in (LOC_FULL / "instances.jsonl").read_text().splitlines() if x.strip()]
    rows = sorted((r for r in rows if r["id"] in dev), key=lambda r: r["id"])
    if sample is None or sample >= len(rows):
        return rows
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_repo[r["repo"]].append(r)
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for repo in sorted(by_repo):
        n = max(1, round(sample * len(by_repo[repo]) / len(rows)))
        out += rng.sample(by_repo[repo], min(n, len(by_repo[repo])))
    return sorted(out, key=lambda r: r["id"])


def _commit() -> str:
    p = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return p.stdout.strip() or "unknown"


def dump(args: argparse.Namespace) -> int:
    commit = _commit()
    tag = args.tag or commit
    out = Path(args.out) if args.out else OUT / f"{tag}-{args.set}.jsonl"
    idx = OUT / "idx" / tag / args.set
    repos = [r for r in args.repos.split(",") if r]
    if args.set == "semble":
        records = dump_semble(repos or SEMBLE_DEV, idx)
    elif args.set == "vectors":
        try:  # one thread for torch / ONNX Runtime, as semble_bench.py --threads 1
            from semantic.embed import set_thread_limit

            set_thread_limit(1)
        except ImportError:  # pragma: no cover - a later layout
            pass
        records = dump_semble(repos or VECTOR_REPOS, idx, vectors=True)
    elif args.set == "loc":
        insts = [i for i in loc_instances(args.limit) if not repos or i["repo"].split("/")[1] in repos]
        records = dump_instances("loc", insts, {r: r for r in LOC_REPOS}, idx, OUT / "trees")
    else:
        insts = [i for i in loc_full_instances(args.sample) if not repos or i["repo"].split("/")[1] in repos]
        records = dump_instances("loc_full", insts, LOC_FULL_FORKS, idx, OUT / "trees")
    out.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    n = 0
    tmp = out.with_suffix(".partial")
    with tmp.open("w") as f:
        meta = {
            "commit": commit,
            "set": args.set,
            "argv": sys.argv[1:],
            "python": sys.version.split()[0],
            "hash_seed": os.environ.get("PYTHONHASHSEED"),
        }
        f.write(json.dumps({"meta": meta}) + "\n")
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(out)
    print(f"{out}: {n} ranked lists in {time.perf_counter() - t0:.0f} s (commit {commit})", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two dumps: report their differences")
    ap.add_argument("--shown", type=int, default=10, help="differences listed per set and kind")
    sub = ap.add_subparsers(dest="cmd")
    d = sub.add_parser("dump", help="index and write every ranked list of a set")
    d.add_argument("set", choices=("semble", "loc", "loc_full", "vectors"))
    d.add_argument("--tag", default="", help="names the output: OUT/<tag>-<set>.jsonl (default: the commit)")
    d.add_argument("--out", default="", help=f"the JSON-lines file (default under {OUT})")
    d.add_argument("--repos", default="", help="comma-separated names (semble name, or NAME of OWNER/NAME)")
    d.add_argument(
        "--limit", type=int, default=None, help="loc: instances per repository (loc_bench --limit)"
    )
    d.add_argument(
        "--sample", type=int, default=None, help="loc_full: a seeded subset of this many instances"
    )
    args = ap.parse_args(argv)
    if args.compare:
        sets = compare(load(Path(args.compare[0])), load(Path(args.compare[1])))
        print(report(sets, args.shown))
        return 0 if all(d.clean for d in sets.values()) else 1
    if args.cmd != "dump":
        ap.error("give `dump SET` or `--compare A B`")
    if os.environ.get("PYTHONHASHSEED") != HASH_SEED and argv is None:
        # The path leg sums a set's idf weights in hash order: two files whose sums are equal
        # come out one ulp apart, in an order that changes with the process's string hash seed
        # (seen at 48b7006: one list of 664 in loc). One seed for every dump keeps that out.
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": HASH_SEED})
    return dump(args)


if __name__ == "__main__":
    raise SystemExit(main())
