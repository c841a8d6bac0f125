"""A learned within-file ranker for the code view (issue 18).

The function ceiling (bench/README.md, "Where the function ceiling is"): an oracle picking out of
today's code-view candidates plus every definition of the files view's top 5 files reaches
function Recall@10 0.832 (full issue text) / 0.718 (one-line), against the shipped code view's
0.490 / 0.347. This asks whether a model over many per-definition signals at once can rank that
pool.

``dump``: for each cached instance of a part (``loc_full_bench.py --build-only``), the pool is the
code view's first 50 hits' definitions plus every definition (and ``<module>``) of the files
view's first ``--files`` files; each candidate gets its signals (``FEATURES``: nav's code-view
rank, its file's rank in both views, its own match by word share, IDF and BM25, named by the
query, traceback frames, quoted literals, the reference graph, size, kind, non-source) and its
label (a gold function). ``--all-defs``: every language's definitions, not Python's alone.
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
import gzip
import json
import math
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_full_bench import LEXICAL, SETS, split_ids  # noqa: E402
from mining.mine_pairs import CODE_LANGUAGES  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.localize import Defs, function_list, non_source  # noqa: E402
from bench.harness.metrics import acc_at_k, recall_at_k  # noqa: E402
from bench.harness.stats import bootstrap_ci  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.analysis import query_terms  # noqa: E402
from semantic.lexical import cap_terms  # noqa: E402
from storage.db import Store  # noqa: E402
from storage.tokens import split_identifier  # noqa: E402

OUT = HERE / "corpora" / "within"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL = re.compile(r"""(?:'([^'\\\n]{12,})'|"([^"\\\n]{12,})")""")
_FORMAT = re.compile(r"%[-#0-9.]*[sdrfi]|\{[^}]*\}")
_RAISE = re.compile(r"\braise\s+([A-Za-z_][\w.]*)")
CODE_DEPTH = 50
ABSENT = 100.0

FEATURES = (
    "code_rank",
    "code_in",
    "files_rank",
    "code_file_rank",
    "code_hits_in_file",
    "own_share",
    "own_idf",
    "own_bm25",
    "own_bm25_rank_in_file",
    "name_share",
    "named",
    "named_pos",
    "class_named",
    "frame_pos",
    "frame_file_pos",
    "path_named",
    "lines_log",
    "depth",
    "module",
    "private",
    "dunder",
    "nonsrc",
    "defs_in_file_log",
    "query_words_log",
    "long",
    "code_score_share",
    "files_score_share",
    "idents_in_body",
    "idents_in_body_share",
    "literal_quoted",
    "raises_named",
    "callee_of_named",
    "callee_of_frame",
    "fan_in_log",
)


def _words(line: str) -> list[str]:
    return [w for t in _WORD.findall(line) for w in split_identifier(t)]


_OTHER_TESTS = re.compile(
    r"(^|/)([^/]*\.(test|spec)\.[cm]?[jt]sx?|[^/]*_test\.go|[^/]*_spec\.rb|[^/]*Tests?\.(java|kt|scala|cs))$"
)


class AllDefs(Defs):
    """The definitions of every language (the harness's ``Defs`` reads Python's only, so a mined
    pair of another language had nothing but ``<module>`` rows), with each file's language."""

    KINDS = ("function", "method", "class", "struct", "interface", "enum", "trait", "type")

    def __init__(self, conn: Any) -> None:
        self.by_path: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        marks = ",".join("?" * len(self.KINDS))
        for path, start, end, qn in conn.execute(
            "SELECT f.path, s.start_line, s.end_line, s.qualified_name FROM symbols s JOIN files f"
            f" ON f.id = s.file_id WHERE s.kind IN ({marks}) ORDER BY s.start_line",
            self.KINDS,
        ):
            self.by_path[str(path)].append((int(start), int(end), str(qn)))
        self.language = {
            str(p): str(lang or "") for p, lang in conn.execute("SELECT path, language FROM files")
        }

    def non_source(self, path: str) -> bool:
        """No source of the project, in any language: no code language, or tests, docs,
        examples, CI and the rest of the Python rule's folders, or another language's test file."""
        if self.language.get(path, "") not in CODE_LANGUAGES:
            return True
        stem = path[: len(path) - len(Path(path).suffix)]
        return non_source(stem + ".py") or bool(_OTHER_TESTS.search(path))  # a .py keeps its rule


def _callees(store: Store, named: list[tuple[str | None, str]]) -> set[str]:
    """The names referenced inside the definitions the query names (reference-graph distance 1):
    ``named`` is (path suffix or None, definition name) — traceback frames carry a path."""
    out: set[str] = set()
    for path, name in named:
        spans = store.conn.execute(
            "SELECT f.id, f.path, s.start_line, s.end_line FROM symbols s JOIN files f ON f.id = s.file_id"
            " WHERE s.name = ? AND s.kind IN ('function', 'method', 'class') LIMIT 20",
            (name,),
        ).fetchall()
        for file_id, fpath, start, end in spans:
            if path is not None and not (str(fpath).endswith(path) or path.endswith(str(fpath))):
                continue
            called = {
                str(r[0])
                for r in store.conn.execute(
                    "SELECT DISTINCT name FROM refs WHERE file_id = ? AND line BETWEEN ? AND ?",
                    (file_id, start, end),
                )
            }
            out |= called - {name}  # not itself (recursion), but another named definition counts
    return out


def _fan_in(store: Store, name: str, cache: dict[str, int]) -> int:
    if name not in cache:
        cache[name] = int(
            store.conn.execute("SELECT count(*) FROM refs WHERE name = ?", (name,)).fetchone()[0]
        )
    return cache[name]


def instance_rows(
    store: Store, inst: dict[str, Any], n_files: int, *, all_languages: bool = False
) -> dict[str, Any]:
    """One instance's pool, features and labels, plus nav's own code-view list (``all_languages``:
    definitions and the non-source rule of every language, not Python's alone)."""
    defs = AllDefs(store.conn) if all_languages else Defs(store.conn)
    is_non_source = defs.non_source if isinstance(defs, AllDefs) else non_source
    search = SemanticSearch(store)
    query = inst["query"]
    files_hits = search.search(query, k=50, legs=LEXICAL).items
    code_hits = search.search(query, k=CODE_DEPTH, legs=LEXICAL, view="code").items
    hit_names = [function_list([(h.path, h.start_line, h.end_line)], defs, exact=True)[0] for h in code_hits]
    nav = list(dict.fromkeys(hit_names))  # function_list's own order: each definition at its first hit
    files: list[str] = list(dict.fromkeys(h.path for h in files_hits))
    code_files: list[str] = list(dict.fromkeys(n.split("::", 1)[0] for n in nav))
    terms = cap_terms(store, query_terms(query))
    words = sorted(set(terms.words))
    n_chunks = store.chunk_count() or 1
    df = store.vocab_doc_freqs(words) if words else {}
    idf = {w: math.log(1 + n_chunks / (1 + df.get(w, 0))) for w in words}
    idf_total = sum(idf.values()) or 1.0
    idents = [i.rsplit(".", 1)[-1] for i in terms.identifiers]
    ident_full = set(terms.identifiers)
    lowered_query = query.lower()
    frames = [(f.path.replace("\\", "/"), f.function.rsplit(".", 1)[-1]) for f in terms.frames]

    callees_named = _callees(store, [(None, i) for i in dict.fromkeys(idents)][:30])
    callees_frame = _callees(store, [(fp, fn) for fp, fn in frames][:30])
    fan_in: dict[str, int] = {}

    pool: list[str] = list(nav)
    for path in files[:n_files]:
        pool.extend(f"{path}::{qn}" for _s, _e, qn in defs.by_path.get(path, []))
        pool.append(f"{path}::<module>")
    pool = list(dict.fromkeys(pool))
    by_path: dict[str, list[str]] = defaultdict(list)
    for name in pool:
        by_path[name.split("::", 1)[0]].append(name)

    nav_rank = {n: r for r, n in enumerate(nav)}
    code_score: dict[str, float] = {}
    for h, n in zip(code_hits, hit_names, strict=True):
        code_score.setdefault(n, float(h.score))
    best_code = max(code_score.values(), default=1.0) or 1.0
    file_score: dict[str, float] = {}
    for h in files_hits:
        file_score.setdefault(h.path, float(h.score))
    best_file = max(file_score.values(), default=1.0) or 1.0
    query_tokens = set(_WORD.findall(query))
    ident_tokens = {t for i in terms.identifiers for t in _WORD.findall(i) if len(t) > 2}
    code_hits_in = Counter(n.split("::", 1)[0] for n in nav)
    rows: list[dict[str, Any]] = []
    avg_len = 20.0
    for path, names in by_path.items():
        lines: dict[int, str] = {}
        for start, text in store.conn.execute(
            "SELECT c.start_line, c.text FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?",
            (path,),
        ):
            for n, line in enumerate(str(text).splitlines()):
                lines.setdefault(int(start) + n, line)
        spans = {qn: (s, e) for s, e, qn in defs.by_path.get(path, [])}
        inner = sorted(spans.values())
        n_defs = len(spans)
        feats: dict[str, dict[str, float]] = {}
        for name in names:
            qn = name.split("::", 1)[1]
            last = qn.rsplit(".", 1)[-1]
            if qn in spans:
                s, e = spans[qn]
                text_lines = [lines.get(x, "") for x in range(s, e + 1)]
            else:  # <module>: the lines no definition covers
                covered = set()
                for s, e in inner:
                    covered.update(range(s, e + 1))
                text_lines = [line for x, line in sorted(lines.items()) if x not in covered]
                s, e = 1, max(lines, default=1)
            body_tokens = {t for line in text_lines for t in _WORD.findall(line)}
            found = ident_tokens & body_tokens
            literals = [a or b for line in text_lines for a, b in _LITERAL.findall(line)]
            raised = {r.rsplit(".", 1)[-1] for line in text_lines for r in _RAISE.findall(line)}
            toks = Counter(w.lower() for line in text_lines for w in _words(line))
            toks.update(w.lower() for w in split_identifier(last))
            length = sum(toks.values()) or 1
            present = [w for w in words if w in toks]
            bm25 = sum(
                idf[w] * toks[w] * 2.2 / (toks[w] + 1.2 * (0.25 + 0.75 * length / avg_len)) for w in present
            )
            name_toks = [w.lower() for w in split_identifier(last)] if qn != "<module>" else []
            named_pos = next((p for p, i in enumerate(idents) if i == last), -1) if qn != "<module>" else -1
            cls = qn.split(".")[0] if "." in qn else ""
            frame_pos = next(
                (
                    p
                    for p, (fp, fn) in enumerate(frames)
                    if fn == last and (fp.endswith(path) or path.endswith(fp))
                ),
                -1,
            )
            frame_file = next(
                (p for p, (fp, _fn) in enumerate(frames) if fp.endswith(path) or path.endswith(fp)), -1
            )
            feats[name] = {
                "code_rank": float(nav_rank.get(name, ABSENT)),
                "code_in": float(name in nav_rank),
                "files_rank": float(files.index(path)) if path in files else ABSENT,
                "code_file_rank": float(code_files.index(path)) if path in code_files else ABSENT,
                "code_hits_in_file": float(code_hits_in.get(path, 0)),
                "own_share": len(present) / len(words) if words else 0.0,
                "own_idf": sum(idf[w] for w in present) / idf_total,
                "own_bm25": bm25,
                "name_share": (sum(1 for w in name_toks if w in terms.stems) / len(name_toks))
                if name_toks
                else 0.0,
                "named": float(named_pos >= 0 or qn in ident_full),
                "named_pos": float(named_pos) if named_pos >= 0 else ABSENT,
                "class_named": float(bool(cls) and (cls in idents or cls.lower() in lowered_query)),
                "frame_pos": float(frame_pos) if frame_pos >= 0 else ABSENT,
                "frame_file_pos": float(frame_file) if frame_file >= 0 else ABSENT,
                "path_named": float(any(path.endswith(p) or p.endswith(path) for p in terms.paths)),
                "lines_log": math.log1p(e - s + 1),
                "depth": float(qn.count(".")),
                "module": float(qn == "<module>"),
                "private": float(last.startswith("_") and not last.startswith("__")),
                "dunder": float(last.startswith("__") and last.endswith("__")),
                "nonsrc": float(is_non_source(path)),
                "defs_in_file_log": math.log1p(n_defs),
                "query_words_log": math.log1p(len(words)),
                "long": float(terms.long),
                "code_score_share": code_score.get(name, 0.0) / best_code,
                "files_score_share": file_score.get(path, 0.0) / best_file,
                "idents_in_body": float(len(found)),
                "idents_in_body_share": len(found) / len(ident_tokens) if ident_tokens else 0.0,
                "literal_quoted": float(
                    any(
                        len(part.strip()) >= 12 and part.strip() in query
                        for lit in literals
                        for part in _FORMAT.split(lit)
                    )
                ),
                "raises_named": float(bool(raised & query_tokens - {"Exception", "Error"})),
                "callee_of_named": float(qn != "<module>" and last in callees_named),
                "callee_of_frame": float(qn != "<module>" and last in callees_frame),
                "fan_in_log": math.log1p(_fan_in(store, last, fan_in)) if qn != "<module>" else 0.0,
            }
        order = sorted(feats, key=lambda n: -feats[n]["own_bm25"])
        for r, name in enumerate(order):
            feats[name]["own_bm25_rank_in_file"] = float(r)
        gold = set(inst["gold_functions"])
        rows.extend({"name": n, "y": int(n in gold), "x": [f[k] for k in FEATURES]} for n, f in feats.items())
    return {
        "id": inst["id"],
        "repo": inst["repo"],
        "gold": inst["gold_functions"],
        "nav": nav[:10],
        "files": files[:10],
        "gold_files": sorted(inst.get("gold_files") or {g.split("::", 1)[0] for g in inst["gold_functions"]}),
        "rows": rows,
    }


def dump(args: argparse.Namespace) -> None:
    root = SETS[args.set]
    insts = [
        i
        for i in split_ids(args.set, args.split, list(jsonl(root / "instances.jsonl")))
        if (root / "idx" / "inst" / f"{i['id']}.base.json").exists()
    ]
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"{args.set}-{args.split}{'-all' if args.all_defs else ''}.jsonl.gz"
    with gzip.open(out, "wt") as fh:
        for n, inst in enumerate(insts):
            store = Store(root / "idx" / "inst" / f"{inst['id']}.db")
            try:
                got = instance_rows(store, inst, args.files, all_languages=args.all_defs)
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
                        got = instance_rows(store, inst, args.files, all_languages=args.all_defs)
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
    return summary


def _scored(model: Any, inst: dict[str, Any]) -> dict[str, Any]:
    learned = _ranked(model, inst)
    got = {
        "id": inst["id"],
        "set": inst["set"],
        **{f"nav fn@{k}": recall_at_k(inst["nav"], inst["gold"], k) for k in (5, 10)},
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
    d.add_argument("--all-defs", action="store_true", help="every language's definitions and non-source rule")
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
    m.add_argument("--all-defs", action="store_true", help="every language's definitions and non-source rule")
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
        sp.add_argument("--dumps", default="", help="the sets' dump suffix: '-all' for --all-defs dumps")
    args = ap.parse_args()
    {"dump": dump, "dump-mined": dump_mined, "train": train, "check": check}[args.cmd](args)


if __name__ == "__main__":
    main()
