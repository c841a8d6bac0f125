"""Issue localization: does nav's search bring an agent to the code an issue's fix changed?

Data: the instances of ``../shared/bench/loc/`` (README there): a one-line summary of a real
GitHub issue (SWE-bench-Live), labelled with the files and functions its merged fix changed.
Build them as that README says into ``/work/corpora/loc/instances.jsonl``; this script keeps
one git working tree per repository (``/work/corpora/loc/trees/OWNER-NAME``, a
``git clone --shared --no-checkout`` of the fetched mirror), checks out each instance's
``base_commit`` and updates nav's index incrementally (lexical legs only: BM25, symbol names,
paths; no vectors).

Splits, fixed before any result was seen: the repositories are split by
``random.Random(9).sample(sorted(REPOS), 5)`` into CHECK (5 repositories, reported once at
the end) and DEVELOPMENT (the other 10, tuned on).

Per instance, in the same run on the same index:

- ``nav-files``: ``SemanticSearch.search(query, k=50)`` reduced to distinct files;
- ``nav-code``: ``search(query, k=50, view="code")``: definitions ranked on their own;
- ``bm25``: plain BM25 (SQLite FTS5, default ``unicode61`` tokenizer, query words OR-ed,
  nothing else) over the same syntax chunks' text;
- ``bm25-code``: the stronger baseline (:class:`CodeBM25`): the same with the Porter stemmer and
  every identifier also spelled as words, in the chunks and in the query; nav is paired with it too;
- ``py:…``: the same three over the Python files' chunks only (the labels are Python files;
  ``search(..., languages=["python"])``), each paired with ``py:bm25``.

Metrics: file Acc@1/5/10 (a gold file among the top k distinct files) and function
Recall@5/10 (share of gold functions among the first k functions). A ranked list of spans
becomes a list of functions by taking, per span in rank order, the Python definitions
(function, method, class) that start inside it, else the innermost one around it, else
``<module>``; a ``nav-code`` hit is exactly one definition. Paired differences against
BM25 with 95% bootstrap intervals (2,000 resamples over instances).

Latency: warm ``search`` p50/p95 for the one-line queries, and for full-text queries of
2,000+ words (the summary followed by the repository's README and change log words, to
stand for a pasted issue), per variant; these are also scored against the summary's labels
(a proxy: the full issue texts are not in the data; it measures whether the noise drowns
the summary).

    python bench/loc_bench.py --split dev
    python bench/loc_bench.py --split dev --fast --variants nav,issue-tags,infile   # tuning: variants only
    python bench/loc_bench.py --split check        # once, at the end
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.harness.data import LOC, loc_instances  # noqa: E402
from bench.harness.localize import METRICS, CodeBM25, Defs, PlainBM25, checkout, function_list, score  # noqa: E402,F401
from bench.harness.metrics import distinct, first_hit_rank  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import mean_ci, percentile  # noqa: E402
from navigator.indexer import index_root  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.ranking import DEFAULT  # noqa: E402
from storage.db import Store  # noqa: E402

VARIANTS: dict[str, dict[str, Any]] = {
    "nav": {},
    "no-verb-forms": {"verb_forms": False},
    "code-file-0": {"code_file_weight": 0.0},
    "code-file-1": {"code_file_weight": 1.0},
    "code-split-1": {"code_split_decay": 1.0},
    "no-said-parts": {"said_parts": False},
    "ipynb-as-code": {"prose_extensions": DEFAULT.prose_extensions - {"ipynb"}},
    "max-chunk": {"top_chunks_per_file": 1},
    "top-5": {"top_chunks_per_file": 5},
    "def-2.5": {"definition_boost": 2.5},
    "test-0.1": {"test_penalty": 0.1},
    "stem-2": {"stem_boost": 2.0},
    "rrf-30": {"rrf_k": 30},
    "bm25-2": {"leg_weights": {"bm25": 2.0, "prf": 0.5}},
    "long-r1": {"df_by_match": False, "match_postings": None},
    "long-20k": {"match_postings": 20_000},
    "prf-4": {"prf_terms": 4},
    "prf-8": {"prf_terms": 8, "leg_weights": {"prf": 1.0}},
    "prf-16": {"prf_terms": 16, "leg_weights": {"prf": 1.0}},
    "prf-8-w0.5": {"prf_terms": 8, "leg_weights": {"prf": 0.5}},
    "prf-8-w1": {"prf_terms": 8, "leg_weights": {"prf": 1.0}},
    "no-prf": {"prf_terms": 0},
    "prf-12": {"prf_terms": 12},
    "prf-docs-3": {"prf_docs": 3},
    "prf-docs-10": {"prf_docs": 10},
    "no-alnum": {"alnum_names": False},
    "no-path-roots": {"path_roots": False},
}
"""Ranking variants run on the same index in the same pass: each the RankingConfig fields it
changes from the shipped ones (``dataclasses.replace(DEFAULT, **changes)``). The variants of the
switches measured and deleted in issue 20 (``uses-leg``, ``decay-0.5``, ``issue-tags``,
``r2-words``, ``module-stem``, ``drop-contractions``, ``drop-lead-verb``, ``drop-digits``,
``infile*``, ``abbrev-1``, ``abbrev-2``) went with their code; bench/README.md keeps what they measured."""


def variant_searches(search: SemanticSearch, names: list[str]) -> dict[str, SemanticSearch]:
    """One searcher per variant over the same index, sharing ``search``'s model and vectors."""
    return {
        name: search
        if not VARIANTS[name]
        else SemanticSearch(search.store, config=dataclasses.replace(DEFAULT, **VARIANTS[name]), share_with=search)
        for name in names
    }

REPOS = sorted(
    [
        "sissbruecker/linkding", "pvlib/pvlib-python", "koxudaxi/datamodel-code-generator", "Kozea/WeasyPrint",
        "geopandas/geopandas", "patroni/patroni", "stanfordnlp/dspy", "reata/sqllineage", "mikedh/trimesh",
        "ipython/ipython", "beetbox/beets", "python-attrs/attrs", "python-babel/babel", "urllib3/urllib3",
        "aws-cloudformation/cfn-lint",
    ]
)  # fmt: skip
CHECK = sorted(random.Random(9).sample(REPOS, 5))
LEXICAL = ("bm25", "symbols", "path", "refs")


def at_base_commits(split: str) -> Iterator[tuple[Store, dict[str, Any]]]:
    """Each instance of ``split`` with its repository's tree at the instance's base commit and
    nav's index brought up to date (for the lever scripts beside this one)."""
    insts = loc_instances(LOC)
    chosen = CHECK if split == "check" else [r for r in REPOS if r not in CHECK]
    for repo in chosen:
        tree = LOC / "trees" / repo.replace("/", "-")
        store = Store(LOC / "idx" / (repo.replace("/", "-") + ".db"))
        try:
            for inst in [i for i in insts if i["repo"] == repo]:
                checkout(tree, inst["base_commit"])
                index_root(tree, store)
                yield store, inst
        finally:
            store.close()
        print(repo, file=sys.stderr, flush=True)


def py_systems(search: SemanticSearch, q: str, defs: Defs, inst: dict[str, Any], base_py: PlainBM25) -> dict[str, Any]:
    """The same systems over Python files only (the labels are Python files; an agent can
    pass ``languages=["python"]``): closer to the issue's BM25 figures."""
    bp_spans = base_py.search(q)
    cp = CodeBM25(search.store.conn, ".py")
    cp_spans = cp.search(q)
    cp.db.close()
    py = search.search(q, k=50, legs=LEXICAL, languages=["python"])
    py_spans = [(h.path, h.start_line, h.end_line) for h in py.items]
    py_code = search.search(q, k=50, legs=LEXICAL, languages=["python"], view="code")
    pc_spans = [(h.path, h.start_line, h.end_line) for h in py_code.items]
    return {
        "py:nav-files": score(distinct(py_spans), function_list(py_spans, defs), inst),
        "py:nav-code": score(distinct(pc_spans), function_list(pc_spans, defs, exact=True), inst),
        "py:bm25": score(distinct(bp_spans), function_list(bp_spans, defs), inst),
        "py:bm25-code": score(distinct(cp_spans), function_list(cp_spans, defs), inst),
    }


def long_text(tree: Path, query: str, words: int = 2000) -> str:
    pool: list[str] = []
    for pattern in ("README*", "CHANGE*", "HISTORY*", "docs/**/*.rst", "docs/**/*.md", "*.md"):
        for f in sorted(tree.glob(pattern)):
            if f.is_file():
                pool.extend(f.read_text(errors="replace").split())
            if len(pool) > words * 2:
                break
    return query + "\n\n" + " ".join(pool[:words])


def run(
    split: str,
    limit: int | None,
    long_per_repo: int,
    repos_arg: str,
    variants: list[str],
    with_vectors: bool = False,
    fast: bool = False,
) -> dict[str, Any]:
    instances = loc_instances(LOC)
    chosen = CHECK if split == "check" else [r for r in REPOS if r not in CHECK]
    if repos_arg:
        chosen = [r for r in chosen if r.split("/")[1] in repos_arg.split(",")]
    rows: list[dict[str, Any]] = []
    lat_short: list[float] = []
    lat_long: list[float] = []
    lat_long_by: dict[str, list[float]] = defaultdict(list)
    long_rows: list[dict[str, Any]] = []
    index_s: list[float] = []
    embed_s: list[float] = []
    embedded: list[int] = []
    for repo in chosen:
        tree = LOC / "trees" / repo.replace("/", "-")
        store = Store(LOC / "idx" / (repo.replace("/", "-") + ".db"))
        mine = [i for i in instances if i["repo"] == repo][:limit]
        for n, inst in enumerate(mine):
            checkout(tree, inst["base_commit"])
            t0 = time.perf_counter()
            index_root(tree, store)
            index_s.append(time.perf_counter() - t0)
            search = SemanticSearch(store)
            searches = variant_searches(search, variants)
            if with_vectors:
                t0 = time.perf_counter()
                rep = search.sync()  # cached by content: a commit embeds only its new chunks
                embed_s.append(time.perf_counter() - t0)
                embedded.append(rep.embedded)
            defs = Defs(store.conn)
            q = inst["query"]
            row: dict[str, Any] = {"id": inst["id"], "repo": repo, "gold": inst["gold_files"]}
            if fast:  # tuning runs: nav's variants only (no baselines, no Python-only systems)
                long_per_repo = 0
            else:
                base = PlainBM25(store.conn)
                base_py = PlainBM25(store.conn, ".py")
                b_spans = base.search(q)
                b_files = distinct(b_spans)
                row["bm25"] = score(b_files, function_list(b_spans, defs), inst)
                strong = CodeBM25(store.conn)
                c_spans = strong.search(q)
                strong.db.close()
                row["bm25-code"] = score(distinct(c_spans), function_list(c_spans, defs), inst)
                row.update(py_systems(search, q, defs, inst, base_py))
                base.db.close()
                base_py.db.close()
            for name in variants:
                t0 = time.perf_counter()
                resp = searches[name].search(q, k=50, legs=LEXICAL)
                if name == "nav":
                    lat_short.append((time.perf_counter() - t0) * 1e3)
                spans = [(h.path, h.start_line, h.end_line) for h in resp.items]
                nav_files = distinct(spans)
                code = searches[name].search(q, k=50, legs=LEXICAL, view="code")
                code_spans = [(h.path, h.start_line, h.end_line) for h in code.items]
                suffix = "" if name == "nav" else f"[{name}]"
                row[f"nav-files{suffix}"] = score(nav_files, function_list(spans, defs), inst)
                row[f"nav-code{suffix}"] = score(
                    distinct(code_spans), function_list(code_spans, defs, exact=True), inst
                )
                if name == "nav":
                    row["top"] = nav_files[:3]
                    row["gold_rank"] = first_hit_rank(nav_files, inst["gold_files"])
            if with_vectors:  # every leg, the vector leg included (the default search)
                fused = search.search(q, k=50)
                f_spans = [(h.path, h.start_line, h.end_line) for h in fused.items]
                fused_code = search.search(q, k=50, view="code")
                fc_spans = [(h.path, h.start_line, h.end_line) for h in fused_code.items]
                row["nav-files+vectors"] = score(distinct(f_spans), function_list(f_spans, defs), inst)
                row["nav-code+vectors"] = score(
                    distinct(fc_spans), function_list(fc_spans, defs, exact=True), inst
                )
            rows.append(row)
            if n < long_per_repo:
                # The summary buried in 2,000 README/change-log words: timed, and scored against
                # the summary's labels (does the noise drown what the issue says?).
                text = long_text(tree, q)
                search.search(text, k=50, legs=LEXICAL)  # warm
                long_row: dict[str, Any] = {"id": inst["id"], "repo": repo}
                for name in variants:
                    t0 = time.perf_counter()
                    resp = searches[name].search(text, k=50, legs=LEXICAL)
                    ms = (time.perf_counter() - t0) * 1e3
                    code = searches[name].search(text, k=50, legs=LEXICAL, view="code")
                    if name == "nav":
                        lat_long.append(ms)
                    lat_long_by[name].append(ms)
                    spans = [(h.path, h.start_line, h.end_line) for h in resp.items]
                    code_spans = [(h.path, h.start_line, h.end_line) for h in code.items]
                    suffix = "" if name == "nav" else f"[{name}]"
                    long_row[f"long:nav-files{suffix}"] = score(
                        distinct(spans), function_list(spans, defs), inst
                    )
                    long_row[f"long:nav-code{suffix}"] = score(
                        distinct(code_spans), function_list(code_spans, defs, exact=True), inst
                    )
                long_rows.append(long_row)
        store.close()
        print(f"{repo}: {len(mine)} instances", file=sys.stderr, flush=True)
    systems = [k for k in rows[0] if k.startswith(("nav-", "py:")) or k in ("bm25", "bm25-code")] if rows else []
    summary = {s: {m: round(statistics.fmean(r[s][m] for r in rows), 3) for m in METRICS} for s in systems}
    paired = {} if fast else {
        s: {
            m: [round(x, 3) for x in mean_ci([r[s][m] - r["py:bm25" if s.startswith("py:") else "bm25"][m] for r in rows])]
            for m in METRICS
        }
        for s in systems
        if not s.endswith("bm25")
    }
    for s in systems:
        strong = "py:bm25-code" if s.startswith("py:") else "bm25-code"
        if not fast and s.split(":")[-1] in ("nav-files", "nav-code") and strong in systems:
            # against the stronger baseline too (stemmed, identifiers spelled as words)
            paired[f"{s} vs {strong}"] = {
                m: [round(x, 3) for x in mean_ci([r[s][m] - r[strong][m] for r in rows])] for m in METRICS
            }
        if s.endswith("+vectors"):  # the vector leg's worth, paired against the lexical legs
            plain = s.removesuffix("+vectors")
            paired[f"{s} vs {plain}"] = {
                m: [round(x, 3) for x in mean_ci([r[s][m] - r[plain][m] for r in rows])] for m in METRICS
            }
        if "[" in s:  # a variant against the default, paired
            plain = s.split("[", 1)[0]
            paired[f"{s} vs {plain}"] = {
                m: [round(x, 3) for x in mean_ci([r[s][m] - r[plain][m] for r in rows])] for m in METRICS
            }
    long_systems = [k for k in long_rows[0] if k.startswith("long:")] if long_rows else []
    long_summary = {s: {m: round(statistics.fmean(r[s][m] for r in long_rows), 3) for m in METRICS} for s in long_systems}
    long_paired = {
        f"{s} vs {s.split('[', 1)[0]}": {
            m: [round(x, 3) for x in mean_ci([r[s][m] - r[s.split("[", 1)[0]][m] for r in long_rows])] for m in METRICS
        }
        for s in long_systems
        if "[" in s
    }
    return {
        "long_instances": len(long_rows),
        "long_summary": long_summary,
        "long_paired": long_paired,
        "long_latency_ms": {
            name: {"p50": round(percentile(v, 0.5), 1), "p95": round(percentile(v, 0.95), 1), "n": len(v)} for name, v in lat_long_by.items()
        },
        "long_rows": long_rows,
        "split": split,
        "repos": chosen,
        "instances": len(rows),
        "summary": summary,
        "paired_vs_bm25": paired,
        "latency_ms": {
            "one_line_p50": round(percentile(lat_short, 0.5), 1),
            "one_line_p95": round(percentile(lat_short, 0.95), 1),
            "full_text_p50": round(percentile(lat_long, 0.5), 1),
            "full_text_p95": round(percentile(lat_long, 0.95), 1),
            "full_text_n": len(lat_long),
        },
        "index_s_p50": round(percentile(index_s, 0.5), 2),
        "embed_s_total": round(sum(embed_s), 1),
        "embedded_total": sum(embedded),
        "rows": rows,
    }


def render(res: dict[str, Any]) -> str:
    out = [f"split {res['split']}: {res['instances']} instances, repos {', '.join(res['repos'])}", ""]
    out.append("| system | " + " | ".join(METRICS) + " |")
    out.append("|---|" + "---|" * len(METRICS))
    for s, v in res["summary"].items():
        out.append(f"| {s} | " + " | ".join(f"{v[m]:.3f}" for m in METRICS) + " |")
    for s, v in res["paired_vs_bm25"].items():
        label = s if " vs " in s else f"{s} − {'py:bm25' if s.startswith('py:') else 'bm25'}"
        out.append(f"| {label} | " + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in (v[m] for m in METRICS)) + " |")
    if res.get("long_summary"):
        out.append("")
        out.append(f"full text (the summary + 2,000 README/change-log words), {res['long_instances']} instances, summary's labels:")
        out.append("")
        out.append("| system | " + " | ".join(METRICS) + " |")
        out.append("|---|" + "---|" * len(METRICS))
        for s, v in res["long_summary"].items():
            out.append(f"| {s} | " + " | ".join(f"{v[m]:.3f}" for m in METRICS) + " |")
        for s, v in res["long_paired"].items():
            out.append(f"| {s} | " + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in (v[m] for m in METRICS)) + " |")
        out.append(f"full-text latency ms per variant: {res['long_latency_ms']}")
    out.append("")
    out.append(f"latency ms: {res['latency_ms']}; index (incremental, per commit) p50 {res['index_s_p50']} s")
    if res.get("embedded_total"):
        out.append(f"embedding: {res['embedded_total']} chunks in {res['embed_s_total']} s (all commits)")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", choices=("dev", "check"), default="dev")
    ap.add_argument("--limit", type=int, default=None, help="instances per repository")
    ap.add_argument("--repos", default="", help="comma-separated repository names (NAME of OWNER/NAME)")
    ap.add_argument("--long-per-repo", type=int, default=2, help="full-text latency queries per repository")
    ap.add_argument("--variants", default="nav", help=f"comma-separated: {', '.join(VARIANTS)}")
    ap.add_argument("--vectors", action="store_true", help="also embed (default model) and run every leg")
    ap.add_argument("--fast", action="store_true", help="tuning: nav's variants only, no baselines or long queries")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    res = run(args.split, args.limit, args.long_per_repo, args.repos, args.variants.split(","), args.vectors, args.fast)
    print(render(res))
    if args.out:
        write_json(Path(args.out), res)


if __name__ == "__main__":
    main()
