"""Hard negatives for the mined pairs: what nav's own lexical ranking finds for the query in the
parent tree that the commit did not change (SweRank's recipe: negatives from the retriever).

Per pair (``bench/corpora/mining/pairs.jsonl``, written by ``mine_pairs.py``), in one working tree
per repository (``git clone --shared --no-checkout`` of the fetched mirror) moved to the pair's
``parent`` commit, nav's index brought up to date incrementally (``index_root``; lexical only, no
vectors), then:

- ``search(query, k, legs=LEXICAL, view="code")``: definitions ranked on their own; each hit is
  ``path::Qualified.name`` (or ``path::<module>``); those in source files (``mine_pairs``' rule:
  no tests, docs or config) and not among the pair's positives are its hard negatives, in rank order (``neg_in_positive_file`` says which share a file with a positive:
  the hardest kind);
- ``search(query, k, legs=LEXICAL)`` reduced to files: the negative files;
- the 1-based rank of the first positive function and file (None: not in the top k), which
  tells easy pairs from hard ones and is nav's own score on the mined set.

    PYTHONPATH=$PWD python bench/mining/hard_negatives.py --sample 200          # a seeded sample
    PYTHONPATH=$PWD python bench/mining/hard_negatives.py --sample 0            # every pair

Trees and indexes live under ``bench/corpora/mining/`` (gitignored). CPU-heavy: one index per
parent commit (incremental after the first); run it niced, one at a time.
"""

from __future__ import annotations

import argparse
import json
import random
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

from loc_bench import LEXICAL, checkout  # noqa: E402
from mining.mine_pairs import source_language  # noqa: E402

from navigator.indexer import index_root  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from storage.db import Store  # noqa: E402

CORPUS = ROOT / "bench" / "corpora" / "mining"


def label(path: str, symbol: str | None) -> str:
    return f"{path}::{symbol or '<module>'}"


def first_rank(ranked: list[str], gold: set[str]) -> int | None:
    return next((i for i, x in enumerate(ranked, 1) if x in gold), None)


def negatives_for(search: SemanticSearch, pair: dict[str, Any], k: int) -> dict[str, Any]:
    query = str(pair["query"])
    pos_funcs = set(pair["positive_functions"])
    pos_files = set(pair["positive_files"])
    code = search.search(query, k=k, legs=LEXICAL, view="code")
    funcs = list(dict.fromkeys(label(h.path, h.symbol) for h in code.items))
    files_resp = search.search(query, k=k, legs=LEXICAL)
    files = list(dict.fromkeys(h.path for h in files_resp.items))
    # negatives from the positives' pool: source files (not tests, docs, config), like the positives
    negs = [f for f in funcs if f not in pos_funcs and source_language(f.split("::", 1)[0])]
    return {
        "id": pair["id"],
        "repo": pair["repo"],
        "parent": pair["parent"],
        "hard_negative_functions": negs,
        "neg_in_positive_file": [f.split("::", 1)[0] in pos_files for f in negs],
        "hard_negative_files": [f for f in files if f not in pos_files and source_language(f)],
        "first_positive_function_rank": first_rank(funcs, pos_funcs),
        "first_positive_file_rank": first_rank(files, pos_files),
        "complete": bool(code.complete and files_resp.complete),
    }


def tree_for(repo: str, mirror_root: Path) -> Path:
    tree = CORPUS / "trees" / repo.replace("/", "-")
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        mirror = mirror_root / repo.replace("/", "+") / "repo"
        subprocess.run(
            ["git", "clone", "-q", "--shared", "--no-checkout", str(mirror), str(tree)], check=True
        )
    return tree


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", default=str(CORPUS / "pairs.jsonl"))
    ap.add_argument("--out", default=str(CORPUS / "hard_negatives.jsonl"))
    ap.add_argument("--mirror-root", default="/work/.mirror")
    ap.add_argument("--sample", type=int, default=200, help="pairs to do (seeded sample); 0: all")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--k", type=int, default=30, help="hits asked of each search")
    ap.add_argument("--only", default="", help="comma-separated owner/name subset")
    args = ap.parse_args(argv)

    pairs = [json.loads(line) for line in Path(args.pairs).read_text().splitlines() if line.strip()]
    if args.only:
        wanted = {r.strip().lower() for r in args.only.split(",")}
        pairs = [p for p in pairs if str(p["repo"]).lower() in wanted]
    if args.sample and args.sample < len(pairs):
        pairs = random.Random(args.seed).sample(pairs, args.sample)
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pairs:
        by_repo[str(p["repo"])].append(p)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = 0
    t0 = time.monotonic()
    with out.open("w", encoding="utf-8") as fh:
        for repo in sorted(by_repo):
            tree = tree_for(repo, Path(args.mirror_root))
            store = Store(CORPUS / "idx" / (repo.replace("/", "-") + ".db"))
            try:
                search = SemanticSearch(store)
                for pair in sorted(by_repo[repo], key=lambda p: str(p["date"])):  # small moves
                    try:
                        checkout(tree, str(pair["parent"]))
                        index_root(tree, store)
                        rec = negatives_for(search, pair, args.k)
                    except Exception as exc:  # noqa: BLE001 - record it and go on with the next pair
                        rec = {
                            "id": pair["id"],
                            "repo": repo,
                            "error": f"{type(exc).__name__}: {str(exc)[:300]}",
                        }
                    fh.write(json.dumps(rec) + "\n")
                    fh.flush()
                    done += 1
            finally:
                store.close()
            print(
                f"{repo}: {len(by_repo[repo])} pairs ({time.monotonic() - t0:.0f} s so far)",
                file=sys.stderr,
                flush=True,
            )
    print(f"{done} pairs → {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
