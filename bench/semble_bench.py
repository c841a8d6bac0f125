"""Run nav's search on semble's code-search benchmark (../shared/bench/semble/): 63 repositories.

NDCG@10 over ranked files (a chunk list reduced to distinct files in rank order; a target
with a line span matches a chunk whose lines overlap it; relevant + secondary, binary
gains), overall, by category and by language, for nav's fused search and each leg alone,
all in the same run; plus cold index time, embedding time and query p50/p90 per repo.

The report keeps two sets apart: DEVELOPMENT, the 21 repositories the ranking was tuned on
(bench/README.md, results/semble-minilm128.md), and CHECK, the other 42, which no ranking
choice has seen. Beside every figure stands semble's own, per repository where semble
publishes it (``SEMBLE_REPO``), with paired differences and 95% bootstrap intervals.

Corpora: ``/work/corpora/semble/<name>/`` (or ``--corpora`` / ``$NAV_SEMBLE_CORPORA``):
each repository's pinned revision exported there (see bench/README.md, "semble's benchmark
on all 63 repositories"); never committed.

    # lexical legs on all 63 (no model is loaded; minutes)
    nice -n 10 python bench/semble_bench.py --no-vectors --out bench/results/semble63-lexical.json
    # every leg with MiniLM vectors, on a list of repositories (embedding takes minutes each)
    nice -n 10 python bench/semble_bench.py --repos flask,click --out bench/results/semble63-minilm.json

Indexes live in ``<corpora>/.idx/<model-slug or "lexical">/<repo>.db`` and are reused
(the embedding cache makes a re-run cheap); ``--cold`` deletes them first.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.harness.data import SEMBLE, SEMBLE_CORPORA, semble_queries, semble_repos, semble_targets  # noqa: E402
from bench.harness.metrics import distinct, semble_ndcg  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import bootstrap_ci as _bootstrap_ci  # noqa: E402
from bench.harness.stats import percentile  # noqa: E402
from navigator.indexer import index_root  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.embed import DEFAULT_MAX_SEQ_LENGTH, load_embedder, set_thread_limit  # noqa: E402
from semantic.ranking import DEFAULT, RankingConfig  # noqa: E402
from storage.db import Store  # noqa: E402

BENCH = SEMBLE  # ../shared/bench/semble (bench/harness/data.py)
CORPORA = SEMBLE_CORPORA

CONFIGS: dict[str, tuple[str, ...]] = {
    "fused": ("bm25", "vector", "symbols", "path"),
    "lexical": ("bm25", "symbols", "path"),
    "bm25": ("bm25",),
    "vector": ("vector",),
    "symbols": ("symbols",),
    "path": ("path",),
}
LEXICAL_CONFIGS = ("lexical", "bm25", "symbols", "path")

DEVELOPMENT = frozenset(
    {"aiohttp", "fastapi", "flask", "httpx", "model2vec", "pydantic", "requests", "starlette", "click"}
    | {"axios", "express", "redux", "gin", "cobra", "chi", "trpc", "vitest", "zod", "serde", "axum", "tokio"}
)
"""The 21 repositories nav's ranking was tuned on (bench/README.md, results/semble-minilm128.md);
the other 42 are the CHECK set."""

# semble's published NDCG@10 (all 63 repos; by category).
SEMBLE = {
    "overall": 0.854,
    "architecture": 0.803,
    "semantic": 0.846,
    "symbol": 0.958,
    "python": 0.867,
    "typescript": 0.706,
    "go": 0.895,
    "rust": 0.856,
    "java": 0.849,
    "c": 0.741,
    "cpp": 0.915,
}

# semble (potion-code-16M + BM25 + its ranking), NDCG@10 per repository and per language, from
# MinishLab/semble benchmarks/results/semble-hybrid-1ea77add4c1b.json (commit 215a0476; MIT):
# the run whose per-language figures the benchmark's README quotes (Python 0.867, TypeScript
# 0.706, ... C++ 0.915). Its language figure is the mean of its repositories' figures; its Swift
# includes rxswift where this benchmark has snapkit (which it has no figure for).
SEMBLE_REPO: dict[str, float] = {
    "abseil-cpp": 0.9491, "aeson": 0.7620, "aiohttp": 0.8521, "alamofire": 0.9635, "axios": 0.8736,
    "axum": 0.8011, "bash-it": 0.6697, "bats-core": 0.8412, "cats": 0.9113, "chi": 0.8669,
    "circe": 0.8591, "click": 1.0, "cobra": 0.9591, "commons-lang": 0.8959, "curl": 0.7261,
    "dapper": 0.8806, "ecto": 0.9273, "exposed": 0.7123, "express": 0.9097, "fastapi": 0.7868,
    "flask": 0.9129, "fmtlib": 0.9346, "gin": 0.8596, "gson": 0.9170, "guzzle": 0.9328,
    "http4s": 0.9570, "httpx": 0.8597, "jackson-databind": 0.7333, "kotlinx-coroutines": 0.9074,
    "ktor": 0.8427, "laravel-framework": 0.7407, "lazy.nvim": 0.6822, "libuv": 0.6154,
    "messagepack-csharp": 0.8830, "mini.nvim": 0.9815, "model2vec": 0.6926, "monolog": 0.9008,
    "newtonsoft-json": 0.8908, "nlohmann-json": 0.8624, "nvm": 0.9631, "pandoc": 0.7193,
    "phoenix": 0.8523, "plug": 0.9012, "pydantic": 0.7918, "rack": 0.8933, "rails": 0.8806,
    "redis": 0.8812, "redux": 0.9138, "requests": 0.9653, "serde": 0.8151, "sinatra": 0.9531,
    "starlette": 0.9448, "telescope.nvim": 0.8047, "tokio": 0.9531, "trpc": 0.8113, "vapor": 0.8303,
    "vitest": 0.6908, "xmonad": 0.8142, "zig": 0.9196, "zig-clap": 0.9096, "zls": 0.9097, "zod": 0.6152,
}  # fmt: skip
SEMBLE_LANGUAGE: dict[str, float] = {
    "bash": 0.8247, "c": 0.7409, "cpp": 0.9154, "csharp": 0.8848, "elixir": 0.8936, "go": 0.8952,
    "haskell": 0.7652, "java": 0.8487, "javascript": 0.8991, "kotlin": 0.8208, "lua": 0.8228,
    "php": 0.8581, "python": 0.8673, "ruby": 0.9090, "rust": 0.8564, "scala": 0.9091,
    "swift": 0.8616, "typescript": 0.7058, "zig": 0.9130,
}  # fmt: skip


class QueryMemo:
    """The embedder with memoized query vectors: the first config (``fused``) pays for the
    encoding and is the one timed; the other configs reuse the vector."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self._memo: dict[str, Any] = {}

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed_documents(self, texts: Any) -> Any:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        if text not in self._memo:
            self._memo[text] = self.inner.embed_query(text)
        return self._memo[text]


def label_prefix(repo: dict[str, Any], corpora: Path) -> str:
    """What to put before an indexed path to match the labels: the benchmark root, unless the
    labels are written relative to it (pandoc, xmonad, zls)."""
    broot = (repo.get("benchmark_root") or "").strip("/")
    if not broot:
        return ""
    queries = semble_queries(repo["name"], BENCH)
    paths = {
        t if isinstance(t, str) else t["path"]
        for q in queries
        for t in [*q["relevant"], *q.get("secondary", [])]
    }
    top = corpora / repo["name"]
    from_top = sum((top / p).exists() for p in paths)
    from_root = sum((top / broot / p).exists() for p in paths)
    return "" if from_root > from_top else broot + "/"


def run_repo(
    repo: dict[str, Any],
    model: str | None,
    cold: bool,
    configs: list[str],
    max_seq_length: int = DEFAULT_MAX_SEQ_LENGTH,
    cold_index: bool = False,
    corpora: Path = CORPORA,
    index_dir: Path | None = None,
    ranking: RankingConfig = DEFAULT,
) -> dict[str, Any]:
    name = repo["name"]
    broot = repo.get("benchmark_root") or ""
    root = corpora / name / broot
    prefix = label_prefix(repo, corpora)
    queries = semble_queries(name, BENCH)
    vectors = any("vector" in CONFIGS[c] for c in configs)
    embedder = load_embedder(model, max_seq_length=max_seq_length) if vectors else None
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder.model_id) if embedder is not None else "lexical"
    db = (index_dir or corpora / ".idx") / slug / f"{name}.db"
    if cold:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        shutil.rmtree(db.parent / f"{name}.vectors", ignore_errors=True)
    db.parent.mkdir(parents=True, exist_ok=True)
    index_s = None
    if cold_index:
        # Cold parse + SQLite into a throwaway database; the persistent one keeps its vectors.
        tmp = db.parent / f"{name}.cold.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        cold_store = Store(tmp)
        t0 = time.perf_counter()
        index_root(root, cold_store)
        index_s = time.perf_counter() - t0
        cold_store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
    store = Store(db)
    t0 = time.perf_counter()
    report = index_root(root, store)
    if index_s is None:
        index_s = time.perf_counter() - t0
    vec_dir = db.parent / f"{name}.vectors"
    memo = QueryMemo(embedder) if embedder is not None else None
    search = SemanticSearch(store, embedder=memo, vectors_dir=vec_dir, config=ranking)
    embed_s = 0.0
    embedded = 0
    if vectors:
        t0 = time.perf_counter()
        sync = search.sync(batch_size=64)
        embed_s = time.perf_counter() - t0
        embedded = sync.embedded
    chunks = int(store.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
    symbols = int(store.conn.execute("SELECT count(*) FROM symbols").fetchone()[0])
    lines = int(store.conn.execute("SELECT coalesce(sum(lines),0) FROM files").fetchone()[0])
    per_config: dict[str, list[dict[str, Any]]] = {}
    latencies: list[float] = []
    search.search("warm up the model", k=5, legs=CONFIGS[configs[0]])
    for cfg in configs:
        rows = []
        for q in queries:
            t = time.perf_counter()
            resp = search.search(q["query"], k=30, legs=CONFIGS[cfg])
            ms = (time.perf_counter() - t) * 1000
            if cfg == configs[0]:
                latencies.append(ms)
            chunk_list = [(prefix + h.path, h.start_line, h.end_line) for h in resp.items]
            files = distinct(chunk_list)
            score = semble_ndcg(files, chunk_list, semble_targets(q))
            rows.append({"query": q["query"], "category": q["category"], "ndcg": score, "top": files[:3]})
        per_config[cfg] = rows
    store.close()
    return {
        "repo": name,
        "language": repo["language"],
        "set": "dev" if name in DEVELOPMENT else "check",
        "files": report.files,
        "chunks": chunks,
        "symbols": symbols,
        "lines": lines,
        "index_s": round(index_s, 2),
        "embed_s": round(embed_s, 2),
        "embedded": embedded,
        "chunks_per_s": round(embedded / embed_s, 1) if embedded and embed_s > 0 else None,
        "p50_ms": round(percentile(latencies, 0.5), 1),
        "p90_ms": round(percentile(latencies, 0.9), 1),
        "queries": len(queries),
        "ndcg": {cfg: round(statistics.mean(r["ndcg"] for r in rows), 4) for cfg, rows in per_config.items()},
        "per_query": per_config,
    }


def summarize(results: list[dict[str, Any]], configs: list[str]) -> dict[str, dict[str, float]]:
    """Mean NDCG@10 over the queries of each group (overall, category, language)."""
    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        for cfg in configs:
            for q in r["per_query"][cfg]:
                for g in ("overall", q["category"], r["language"]):
                    groups[g][cfg].append(q["ndcg"])
    return {g: {cfg: round(statistics.mean(v), 4) for cfg, v in d.items()} for g, d in groups.items()}


def bootstrap_ci(diffs: list[float], n: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the mean of ``diffs`` (resampled with replacement); none (NaN)
    for fewer than two."""
    return _bootstrap_ci(diffs, rounds=n, seed=seed, min_items=2)


def _repo_mean(results: list[dict[str, Any]], cfg: str) -> float:
    return statistics.fmean(r["ndcg"][cfg] for r in results) if results else float("nan")


def _fmt(x: float | None) -> str:
    return "–" if x is None or math.isnan(x) else f"{x:.3f}"


def _diff(x: float, lo: float, hi: float) -> str:
    if math.isnan(lo):
        return f"{x:+.3f}"
    return f"{x:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def set_report(title: str, results: list[dict[str, Any]], configs: list[str]) -> list[str]:
    """One set's tables: by language (mean of repository figures, as semble reports them),
    by category (mean over queries), and the paired difference against semble per repository."""
    if not results:
        return []
    main = configs[0]
    out = [f"### {title}: {len(results)} repositories, {sum(r['queries'] for r in results)} queries", ""]
    out.append(
        "| language | repos | "
        + " | ".join(configs)
        + " | semble, same repos | semble published | Δ "
        + main
        + " − semble |"
    )
    out.append("|" + "---|" * (5 + len(configs)))
    langs = sorted({r["language"] for r in results})
    for lang in [*langs, "all"]:
        rs = results if lang == "all" else [r for r in results if r["language"] == lang]
        paired = [r for r in rs if r["repo"] in SEMBLE_REPO]
        sem = statistics.fmean(SEMBLE_REPO[r["repo"]] for r in paired) if paired else float("nan")
        diffs = [r["ndcg"][main] - SEMBLE_REPO[r["repo"]] for r in paired]
        d = _diff(statistics.fmean(diffs), *bootstrap_ci(diffs)) if diffs else "–"
        label = f"**{lang}**" if lang == "all" else lang
        published = SEMBLE_LANGUAGE.get(lang) if lang != "all" else None
        out.append(
            f"| {label} | {len(rs)} | "
            + " | ".join(_fmt(_repo_mean(rs, c)) for c in configs)
            + f" | {_fmt(sem)} ({len(paired)}) | {_fmt(published)} | {d} |"
        )
    out.append("")
    if "fused" in configs and "lexical" in configs:
        diffs = [r["ndcg"]["fused"] - r["ndcg"]["lexical"] for r in results]
        out += [
            f"What the vector leg adds, paired per repository: fused − lexical = {_diff(statistics.fmean(diffs), *bootstrap_ci(diffs))}",
            "",
        ]
    summary = summarize(results, configs)
    out.append("| queries | n | " + " | ".join(configs) + " |")
    out.append("|" + "---|" * (2 + len(configs)))
    counts: dict[str, int] = defaultdict(int)
    for r in results:
        for q in r["per_query"][main]:
            counts["overall"] += 1
            counts[q["category"]] += 1
    for g in ("overall", "architecture", "semantic", "symbol"):
        if g in summary:
            out.append(
                f"| {g} | {counts[g]} | " + " | ".join(_fmt(summary[g].get(c)) for c in configs) + " |"
            )
    out.append("")
    return out


def table(results: list[dict[str, Any]], summary: dict[str, dict[str, float]], configs: list[str]) -> str:
    out: list[str] = []
    dev = [r for r in results if r["repo"] in DEVELOPMENT]
    check = [r for r in results if r["repo"] not in DEVELOPMENT]
    out += set_report("CHECK set (never tuned on)", check, configs)
    out += set_report("DEVELOPMENT set (the ranking was tuned on these)", dev, configs)
    out += set_report("All", results, configs)
    head = (
        "| repo | set | lang | files | lines | symbols | per 1k lines | chunks | index s | embed s | q p50 ms | q p90 ms | "
        + " | ".join(configs)
        + " | semble |"
    )
    out += [head, "|" + "---|" * (13 + len(configs))]
    for r in sorted(results, key=lambda r: (r["language"], r["repo"])):
        out.append(
            f"| {r['repo']} | {r.get('set', '')} | {r['language']} | {r['files']} | {r['lines']} | {r.get('symbols', '')} | "
            f"{1000 * r.get('symbols', 0) / max(r['lines'], 1):.0f} | "
            f"{r['chunks']} | {r['index_s']} | {r['embed_s']} | {r['p50_ms']} | {r['p90_ms']} | "
            + " | ".join(f"{r['ndcg'][c]:.3f}" for c in configs)
            + f" | {_fmt(SEMBLE_REPO.get(r['repo']))} |"
        )
    return "\n".join(out)


def compare(old: dict[str, Any], new: list[dict[str, Any]], configs: list[str]) -> str:
    """Paired differences, new − old, per repository and per language, for the configs both ran."""
    before = {r["repo"]: r for r in old["repos"]}
    both = [r for r in new if r["repo"] in before]
    shared = [c for c in configs if c in old["configs"]]
    if not both or not shared:
        return "(nothing in common with the baseline)"
    out = [
        f"### Against the baseline ({len(both)} repositories in both): new − old",
        "",
        "| language | repos | " + " | ".join(f"{c} old → new" for c in shared) + " |",
        "|" + "---|" * (2 + len(shared)),
    ]
    for lang in [*sorted({r["language"] for r in both}), "all"]:
        rs = both if lang == "all" else [r for r in both if r["language"] == lang]
        cells = []
        for c in shared:
            o = statistics.fmean(before[r["repo"]]["ndcg"][c] for r in rs)
            n = statistics.fmean(r["ndcg"][c] for r in rs)
            diffs = [r["ndcg"][c] - before[r["repo"]]["ndcg"][c] for r in rs]
            cells.append(f"{o:.3f} → {n:.3f} ({_diff(statistics.fmean(diffs), *bootstrap_ci(diffs))})")
        out.append(f"| {'**all**' if lang == 'all' else lang} | {len(rs)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def choose(repos: list[dict[str, Any]], names: str, languages: str, which: str) -> list[dict[str, Any]]:
    if names:
        wanted = names.split(",")
        unknown = sorted(set(wanted) - {r["name"] for r in repos})
        if unknown:
            raise SystemExit(f"unknown repositories: {', '.join(unknown)} (see {BENCH / 'repos.json'})")
        chosen = [r for r in repos if r["name"] in wanted]
    elif languages:
        chosen = [r for r in repos if r["language"] in set(languages.split(","))]
    else:
        chosen = list(repos)
    if which == "dev":
        chosen = [r for r in chosen if r["name"] in DEVELOPMENT]
    elif which == "check":
        chosen = [r for r in chosen if r["name"] not in DEVELOPMENT]
    return chosen


_RANKING_MODULES = (
    "semantic.fusion",
    "semantic.analysis",
    "semantic.path_leg",
    "semantic.lexical",
    "navigator.search",
    "navigator.team",
)


def set_const(assignment: str) -> None:
    """``storage.pg.SYMBOL_SIMILARITY=0.3``: set a module constant (a Python literal) for this run.
    Ranking settings are no module constants: they are :class:`semantic.ranking.RankingConfig`
    fields, set with ``--rank`` (see :func:`ranking_config`)."""
    import ast
    import importlib

    target, _, value = assignment.partition("=")
    module_name, _, attr = target.rpartition(".")
    if module_name in _RANKING_MODULES:
        raise SystemExit(
            f"--set-const {assignment[:100]}: ranking settings are RankingConfig fields now; "
            "use --rank FIELD=VALUE (e.g. --rank stem_boost=2.0)"
        )
    module = importlib.import_module(module_name)
    if not hasattr(module, attr):
        raise SystemExit(f"--set-const {assignment[:100]}: {module_name} has no {attr!r}")
    setattr(module, attr, ast.literal_eval(value))


def ranking_config(assignments: list[str]) -> RankingConfig:
    """``["rrf_k=20", "stem_boost=2.0"]`` -> the shipped ranking with those fields changed
    (each value a Python literal)."""
    import ast

    fields = {f.name for f in dataclasses.fields(RankingConfig)}
    changes: dict[str, Any] = {}
    for assignment in assignments:
        name, _, value = assignment.partition("=")
        if name not in fields:
            raise SystemExit(f"--rank {assignment[:100]}: RankingConfig has no field {name!r}")
        changes[name] = ast.literal_eval(value)
    try:
        return dataclasses.replace(DEFAULT, **changes)
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"--rank: {exc}") from None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repos", default="", help="comma-separated repo names (default: all 63)")
    ap.add_argument("--languages", default="", help="comma-separated languages (when --repos is empty)")
    ap.add_argument("--set", default="all", choices=("all", "dev", "check"), help="only one of the two sets")
    ap.add_argument("--corpora", default=str(CORPORA), help="folder holding <repo>/ exports")
    ap.add_argument("--index-dir", default="", help="where the bench indexes live (default: <corpora>/.idx)")
    ap.add_argument("--model", default="default", help="'default' (MiniLM) or a local model directory")
    ap.add_argument(
        "--no-vectors", action="store_true", help=f"lexical legs only: {','.join(LEXICAL_CONFIGS)}"
    )
    ap.add_argument("--configs", default="", help=f"comma-separated, from {','.join(CONFIGS)} (default: all)")
    ap.add_argument("--threads", type=int, default=1, help="threads for the model (torch or ONNX Runtime)")
    ap.add_argument(
        "--max-seq-length", type=int, default=DEFAULT_MAX_SEQ_LENGTH, help="transformer tokens per chunk"
    )
    ap.add_argument("--cold", action="store_true", help="delete the bench indexes (and their vectors) first")
    ap.add_argument(
        "--cold-index", action="store_true", help="time a cold index run into a throwaway database"
    )
    ap.add_argument("--out", default=str(HERE / "results" / "semble63.json"))
    ap.add_argument("--merge", default="", help="comma-separated result files to combine into --out (no run)")
    ap.add_argument("--compare", default="", help="an earlier result file: add paired differences against it")
    ap.add_argument(
        "--set-const",
        action="append",
        default=[],
        metavar="MODULE.NAME=VALUE",
        help="tuning: set a module constant first, e.g. storage.pg.SYMBOL_SIMILARITY=0.3 (repeatable)",
    )
    ap.add_argument(
        "--rank",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="tuning: a RankingConfig field for this run, e.g. stem_boost=2.0 (repeatable)",
    )
    args = ap.parse_args()
    for assignment in args.set_const:
        set_const(assignment)
    ranking = ranking_config(args.rank)
    if args.merge:
        parts = [json.loads(Path(f).read_text()) for f in args.merge.split(",")]
        configs = parts[0]["configs"]
        results = [r for part in parts for r in part["repos"]]
        write(
            Path(args.out),
            parts[0]["model"],
            configs,
            results,
            parts[0].get("max_seq_length"),
            parts[0].get("command"),
            args.compare,
        )
        return
    configs = (
        args.configs.split(",") if args.configs else list(LEXICAL_CONFIGS if args.no_vectors else CONFIGS)
    )
    bad = [c for c in configs if c not in CONFIGS]
    if bad or (args.no_vectors and any("vector" in CONFIGS[c] for c in configs)):
        raise SystemExit(
            f"--configs {','.join(configs)}: choose from {','.join(CONFIGS)} (no vector configs with --no-vectors)"
        )
    if not args.no_vectors:
        set_thread_limit(args.threads)  # torch or ONNX Runtime alike
    corpora = Path(args.corpora)
    repos = semble_repos(BENCH)
    chosen = choose(repos, args.repos, args.languages, args.set)
    missing = [r["name"] for r in chosen if not (corpora / r["name"]).exists()]
    if missing:
        print(f"not in {corpora} (skipped): {', '.join(missing)}", file=sys.stderr)
    chosen = [r for r in chosen if (corpora / r["name"]).exists()]
    model = None if args.model == "default" else args.model
    command = "python " + " ".join(sys.argv)
    results = []
    for repo in chosen:
        index_dir = Path(args.index_dir) if args.index_dir else None
        r = run_repo(
            repo, model, args.cold, configs, args.max_seq_length, args.cold_index, corpora, index_dir, ranking
        )
        results.append(r)
        print(
            f"{r['repo']:18s} {r['set']:5s} {r['language']:10s} chunks={r['chunks']:6d} index={r['index_s']:6.1f}s "
            f"embed={r['embed_s']:7.1f}s p50={r['p50_ms']:6.1f}ms "
            + " ".join(f"{c}={r['ndcg'][c]:.3f}" for c in configs)
            + f" semble={_fmt(SEMBLE_REPO.get(r['repo']))}",
            flush=True,
        )
    write(
        Path(args.out),
        "none" if args.no_vectors else args.model,
        configs,
        results,
        args.max_seq_length,
        command,
        args.compare,
    )


def write(
    out: Path,
    model: str,
    configs: list[str],
    results: list[dict[str, Any]],
    seq: int | None,
    command: str | None = None,
    baseline: str = "",
) -> None:
    summary = summarize(results, configs)
    text = table(results, summary, configs)
    if baseline:
        text = compare(json.loads(Path(baseline).read_text()), results, configs) + "\n\n" + text
    print(text)
    write_json(
        out,
        {
            "model": model,
            "max_seq_length": seq,
            "configs": configs,
            "command": command,
            "summary": summary,
            "repos": results,
        },
    )
    header = (
        f"model: {model}, max_seq_length {seq}\n\ncommand: `{command}`\n" if command else f"model: {model}\n"
    )
    out.with_suffix(".md").write_text(f"{header}\n{text}\n")


if __name__ == "__main__":
    main()
