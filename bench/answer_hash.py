"""One hash of every code-view answer to a set of real queries, for a change meant to leave
answers alone (a speed-up, a refactor): run it before and after, compare the two lines.

The queries: the first N pasted issues of one repository of a localization set, and the first
line of each (one-liners); both code orders (learned, fused), lexical legs, k=20; every hit's path,
span, symbol, score, snippet and snippet line are hashed.

    PYTHONPATH=$PWD python bench/answer_hash.py /work/corpora/loc_full/idx/django-django.db django/django
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from navigator.search import SemanticSearch  # noqa: E402
from semantic.ranking import DEFAULT  # noqa: E402
from storage.db import Store  # noqa: E402

LEXICAL = ("bm25", "symbols", "path", "refs")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("repo", help="owner/name, as the instances file spells it")
    ap.add_argument("--instances", default="/work/corpora/loc_full/instances.jsonl")
    ap.add_argument("--n", type=int, default=40)
    args = ap.parse_args()
    with open(args.instances, encoding="utf-8") as fh:
        insts = [json.loads(line) for line in fh]
    queries = [i["query"] for i in insts if i["repo"] == args.repo][: args.n]
    if not queries:
        raise SystemExit(f"no instance of {args.repo!r} in {args.instances}")
    queries += [q.strip().splitlines()[0] for q in queries]
    store = Store(Path(args.db))
    digest = hashlib.sha256()
    try:
        for order in ("learned", None):
            search = SemanticSearch(store, config=dataclasses.replace(DEFAULT, code_order=order))
            for q in queries:
                hits = search.search(q, k=20, legs=LEXICAL, view="code").items
                digest.update(
                    json.dumps(
                        [
                            (h.path, h.start_line, h.end_line, h.symbol, h.score, h.snippet, h.snippet_line)
                            for h in hits
                        ]
                    ).encode()
                )
    finally:
        store.close()
    print(f"{digest.hexdigest()}  {len(queries)} queries x 2 code orders, {args.repo}")


if __name__ == "__main__":
    main()
