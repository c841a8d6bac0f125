"""An embedder as a RERANKER of nav's lexical top-50 on the localization sets (issue 18).

Embedding whole trees per instance is hours on this machine, so the vector leg is measured where
it can only reorder what the lexical legs found: per instance, nav's lexical code-view search
(``loc_full_bench.LEXICAL`` legs, k=50, the shipped ranking) on its cached index
(``<set>/idx/inst/<id>.db``; instances without one are skipped and counted), each hit's chunks
(those overlapping the hit's span, tightest first, at most ``--chunks-per-hit``: a code-view hit
(a definition) can sit inside a larger chunk) embedded as nav embeds them
(``embedding_text``), a hit's vector score the best cosine of its chunks to the query. Systems:

- ``lexical``: the lexical top-50 as nav ranks it;
- ``rrf[<model>]``: the lexical rank fused with the model's rank by RRF (nav's ``rrf_k``, equal
  weights) — what a vector leg adds on these candidates;

scored by file Acc@1/5/10 and function Recall@5/10 (``bench/harness/localize.py``; files are the
distinct files of the ranked hits, functions the definition each hit is). Paired per instance with
seeded 95% bootstrap intervals: each model against lexical, and each model against the first one.

Candidates are cached in ``--cache`` (``candidates-<set>-<split>.json``) and embeddings per model
by text (``vectors-<label>-<fingerprint>.npz``), so a later run with another model scores the same
candidates and re-embeds nothing of an earlier model.

    OMP_NUM_THREADS=1 PYTHONPATH=$PWD nice -n 10 python bench/finetune/loc_rerank.py --set loc_full \
        --split dev --model base=$BASE_DIR --model ft=bench/corpora/finetune/minilm-ft --out x.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for p in (ROOT, ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from loc_full_bench import LEXICAL, SETS, split_ids  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.localize import METRICS, Defs, function_list, score  # noqa: E402
from bench.harness.metrics import distinct  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import mean_ci  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.embed import (  # noqa: E402
    DEFAULT_MAX_SEQ_LENGTH,
    SentenceTransformerEmbedder,
    dir_fingerprint,
    embedding_text,
)
from semantic.ranking import DEFAULT  # noqa: E402
from storage.db import Store  # noqa: E402

CACHE = ROOT / "bench" / "corpora" / "finetune" / "rerank"


def hit_texts(store: Store, path: str, start: int, end: int, per_hit: int) -> list[str]:
    """The embedding texts of the chunks overlapping a hit's lines, tightest first: a code-view
    hit (one definition) can sit inside a larger chunk (a method inside its class's chunk)."""
    rows = store.conn.execute(
        "SELECT c.symbol, c.signature, c.text FROM chunks c JOIN files f ON f.id = c.file_id "
        "WHERE f.path = ? AND c.start_line <= ? AND c.end_line >= ? "
        "ORDER BY c.end_line - c.start_line, c.start_line LIMIT ?",
        (path, end, start, per_hit),
    ).fetchall()
    return [embedding_text(path, sym, sig, text) for sym, sig, text in rows]


def candidates(set_name: str, split: str, depth: int, per_hit: int) -> tuple[list[dict[str, Any]], int]:
    """Per instance with a cached index: the lexical code-view top ``depth`` hits and their
    chunks' embedding texts; and how many instances of the split had no index."""
    root = SETS[set_name]
    instances = split_ids(set_name, split, jsonl(root / "instances.jsonl"))
    out: list[dict[str, Any]] = []
    missing = 0
    for inst in sorted(instances, key=lambda i: i["id"]):
        db = root / "idx" / "inst" / f"{inst['id']}.db"
        if not db.exists():
            missing += 1
            continue
        store = Store(db)
        try:
            defs = Defs(store.conn)
            search = SemanticSearch(store, config=DEFAULT)
            resp = search.search(inst["query"], k=depth, legs=LEXICAL, view="code")
            hits = []
            for h in resp.items:
                texts = hit_texts(store, h.path, h.start_line, h.end_line, per_hit)
                hits.append(
                    {
                        "path": h.path,
                        "start": h.start_line,
                        "end": h.end_line,
                        "fn": function_list([(h.path, h.start_line, h.end_line)], defs, exact=True),
                        "texts": texts,
                    }
                )
        finally:
            store.close()
        out.append(
            {
                "id": inst["id"],
                "repo": inst["repo"],
                "query": inst["query"],
                "gold_files": inst["gold_files"],
                "gold_functions": inst["gold_functions"],
                "hits": hits,
            }
        )
        print(f"candidates {len(out)}: {inst['id']} {len(hits)} hits", file=sys.stderr, flush=True)
    return out, missing


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def embed_all(
    label: str, path: Path, texts: list[str], cache: Path, threads: int
) -> tuple[dict[str, Any], float, int]:
    """Vectors for ``texts`` by this model (cached by text), the seconds spent embedding, and
    how many texts were embedded now."""
    from semantic.embed import set_thread_limit

    set_thread_limit(threads)
    file = cache / f"vectors-{label}-{dir_fingerprint(path)}.npz"
    have: dict[str, Any] = {}
    if file.exists():
        z = np.load(file)
        have = dict(zip(z["keys"].tolist(), z["vecs"], strict=True))
    todo = list(dict.fromkeys(t for t in texts if _key(t) not in have))
    seconds = 0.0
    if todo:
        emb = SentenceTransformerEmbedder(path, max_seq_length=DEFAULT_MAX_SEQ_LENGTH)
        t0 = time.perf_counter()
        for i in range(0, len(todo), 256):
            part = todo[i : i + 256]
            vecs = emb.embed_documents(part)
            for t, v in zip(part, vecs, strict=True):
                have[_key(t)] = v
            print(f"{label}: embedded {i + len(part)}/{len(todo)}", file=sys.stderr, flush=True)
            keys = list(have)
            np.savez(file, keys=np.array(keys), vecs=np.stack([have[k] for k in keys]))
        seconds = time.perf_counter() - t0
    return have, seconds, len(todo)


def rrf_order(n: int, vec_scores: list[float], k: int) -> list[int]:
    """The hits' order after fusing lexical rank (their index) with the vector rank by RRF."""
    by_vec = sorted(range(n), key=lambda i: -vec_scores[i])
    vrank = {i: r for r, i in enumerate(by_vec, 1)}
    return sorted(range(n), key=lambda i: -(1.0 / (k + i + 1) + 1.0 / (k + vrank[i])))


def metrics_of(inst: dict[str, Any], order: list[int]) -> dict[str, float]:
    hits = [inst["hits"][i] for i in order]
    files = distinct([(h["path"], h["start"], h["end"]) for h in hits])
    funcs: list[str] = []
    for h in hits:
        for f in h["fn"][:1]:
            if f not in funcs:
                funcs.append(f)
    return score(files, funcs, inst)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=tuple(SETS), default="loc_full")
    ap.add_argument("--split", choices=("dev", "check"), default="dev")
    ap.add_argument("--model", action="append", default=[], metavar="LABEL=DIR", help="a model directory")
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("--chunks-per-hit", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", default=str(CACHE))
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    models = [(m.split("=", 1)[0], Path(m.split("=", 1)[1])) for m in args.model]
    for label, path in models:
        if not path.is_dir():
            raise SystemExit(f"--model {label}={path}: not a model directory")
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    cand_file = cache / f"candidates-{args.set}-{args.split}-{args.depth}-{args.chunks_per_hit}.json"
    if cand_file.exists():
        saved = json.loads(cand_file.read_text())
        insts, missing = saved["instances"], saved["missing"]
    else:
        insts, missing = candidates(args.set, args.split, args.depth, args.chunks_per_hit)
        write_json(cand_file, {"instances": insts, "missing": missing})
    texts = [t for inst in insts for h in inst["hits"] for t in h["texts"]] + [i["query"] for i in insts]
    rows: list[dict[str, Any]] = [
        {"id": i["id"], "repo": i["repo"], "lexical": metrics_of(i, list(range(len(i["hits"]))))}
        for i in insts
    ]
    cost: dict[str, Any] = {}
    for label, path in models:
        vecs, seconds, n = embed_all(label, path, texts, cache, args.threads)
        cost[label] = {
            "embedded_now": n,
            "seconds": round(seconds, 1),
            "texts_per_s": round(n / seconds, 2) if seconds else None,
        }
        for row, inst in zip(rows, insts, strict=True):
            q = vecs[_key(inst["query"])]
            scores = [max((float(q @ vecs[_key(t)]) for t in h["texts"]), default=-1.0) for h in inst["hits"]]
            row[f"rrf[{label}]"] = metrics_of(inst, rrf_order(len(scores), scores, DEFAULT.rrf_k))
            row[f"vector[{label}]"] = metrics_of(inst, sorted(range(len(scores)), key=lambda i: -scores[i]))
    systems = [k for k in rows[0] if isinstance(rows[0][k], dict)] if rows else []
    summary = {s: {m: round(statistics.fmean(r[s][m] for r in rows), 3) for m in METRICS} for s in systems}

    def paired(a: str, b: str) -> dict[str, list[float]]:
        return {m: [round(x, 3) for x in mean_ci([r[a][m] - r[b][m] for r in rows])] for m in METRICS}

    pairs = {f"rrf[{lab}] - lexical": paired(f"rrf[{lab}]", "lexical") for lab, _ in models}
    for lab, _ in models[1:]:
        pairs[f"rrf[{lab}] - rrf[{models[0][0]}]"] = paired(f"rrf[{lab}]", f"rrf[{models[0][0]}]")
        pairs[f"vector[{lab}] - vector[{models[0][0]}]"] = paired(f"vector[{lab}]", f"vector[{models[0][0]}]")
    res = {
        "set": args.set,
        "split": args.split,
        "part": "development" if args.split == "dev" else "check",
        "command": "python " + " ".join(sys.argv),
        "models": {lab: str(p) for lab, p in models},
        "instances": len(rows),
        "instances_without_index": missing,
        "depth": args.depth,
        "chunks_per_hit": args.chunks_per_hit,
        "distinct_texts": len(set(texts)),
        "summary": summary,
        "paired": pairs,
        "cost": cost,
        "rows": rows,
    }
    lines = [
        f"{args.set} {res['part']} part: {len(rows)} instances with a cached index ({missing} without, skipped); "
        f"lexical code-view top {args.depth}, reranked",
        f"command: `{res['command']}`",
        "",
        "| system | " + " | ".join(METRICS) + " |",
        "|---|" + "---|" * len(METRICS),
    ]
    lines += [f"| {s} | " + " | ".join(f"{v[m]:.3f}" for m in METRICS) + " |" for s, v in summary.items()]
    lines += [
        f"| {s} | "
        + " | ".join(f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for d, lo, hi in (v[m] for m in METRICS))
        + " |"
        for s, v in pairs.items()
    ]
    lines += ["", f"embedding cost: {cost}"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        write_json(Path(args.out), res)
        Path(args.out).with_suffix(".md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
