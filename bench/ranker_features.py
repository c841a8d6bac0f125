"""Dump the learned fusion's features (issue 18) for every cached instance of the localization sets.

For each instance indexed by ``loc_full_bench.py`` (``<set>/idx/inst/<id>.db``; nothing is checked
out or indexed here), nav's shipped search runs in both views with a recording
:class:`semantic.ranking.Ranker` that keeps the feature tables fusion computed
(:func:`semantic.learned.tables`: every candidate file and chunk of the union of the legs) and
returns None, so the ranking is exactly the shipped one. Each row gets its label from the
harness's: a file is positive when it is a gold file, a chunk when one of the definitions it maps
to (:func:`code_view_split`, as the code view splits it) is a gold function; each chunk keeps its
definitions with the share of its score each keeps, so the trainer ranks definitions as the code
view does. nav's own scores of the same
searches are kept beside (``nav-files``, ``nav-code``), for the trainer's paired comparisons.

    python bench/ranker_features.py --set loc_full --split dev
    python bench/ranker_features.py --set loc --split check

Output: ``bench/corpora/ranker/<set>-<split>.jsonl.gz``, one instance a line.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from loc_full_bench import LEXICAL, SETS, scored, split_ids  # noqa: E402

from bench.harness.data import jsonl  # noqa: E402
from bench.harness.localize import Defs  # noqa: E402
from navigator.pipeline import code_view  # noqa: E402
from navigator.search import SemanticSearch  # noqa: E402
from semantic.analysis import QueryTerms, query_terms  # noqa: E402
from semantic.fusion import Ranked  # noqa: E402
from semantic.learned import Table  # noqa: E402
from semantic.lexical import cap_terms  # noqa: E402
from semantic.ranking import DEFAULT  # noqa: E402
from storage.db import Store  # noqa: E402

OUT = HERE / "corpora" / "ranker"


class Recorder:
    """A Ranker that keeps the last table fusion gave it per view and changes nothing."""

    def __init__(self) -> None:
        self.last: dict[str, Table] = {}

    def score(self, table: Table) -> Sequence[float] | None:
        self.last[table.view] = table
        return None


def code_view_split(
    store: Store, defs: Defs, ids: Sequence[int], terms: QueryTerms
) -> dict[int, list[tuple[str, float]]]:
    """Per chunk, the definitions the code view makes of it, each with the share of the chunk's
    score it keeps (1 unless the chunk holds several: :func:`navigator.pipeline.code_view` on the
    chunk alone with a score of 1), named as the harness names a code-view hit."""
    rows = store.chunks_by_ids(list(ids))
    out: dict[int, list[tuple[str, float]]] = {}
    for cid in ids:
        row = rows.get(cid)
        if row is None:
            out[cid] = []
            continue
        spans = store.definitions_in(
            row.path, kinds=DEFAULT.code_kinds, start_line=row.start_line, end_line=row.end_line
        )
        one = Ranked(cid, row.path, 1.0, code_score=1.0)
        hits = code_view([(one, row, list(spans))], terms, 10_000)
        out[cid] = [(defs.functions(h.path, h.start_line, h.start_line)[0], h.score) for h in hits]
    return out


def dump_instance(store: Store, inst: dict[str, Any], rec: Recorder) -> dict[str, Any]:
    defs = Defs(store.conn)
    search = SemanticSearch(store, config=dataclasses.replace(DEFAULT, ranker=rec))
    gold_files, gold_fns = set(inst["gold_files"]), set(inst["gold_functions"])
    out: dict[str, Any] = {
        "id": inst["id"],
        "repo": inst["repo"],
        "gold_files": inst["gold_files"],
        "gold_functions": inst["gold_functions"],
    }
    rec.last.clear()
    files = search.search(inst["query"], k=50, legs=LEXICAL)
    ft = rec.last["files"]
    rec.last.clear()
    code = search.search(inst["query"], k=50, legs=LEXICAL, view="code")
    ct = rec.last["chunks"]
    f_spans = [(h.path, h.start_line, h.end_line) for h in files.items]
    c_spans = [(h.path, h.start_line, h.end_line) for h in code.items]
    out["nav-files"] = scored(f_spans, defs, inst)
    out["nav-code"] = scored(c_spans, defs, inst, exact=True)
    out["files"] = {
        "names": list(ft.names),
        "keys": list(ft.keys),
        "rows": [[round(x, 5) for x in row] for row in ft.rows.tolist()],
        "label": [int(k in gold_files) for k in ft.keys],
    }
    terms = cap_terms(store, query_terms(inst["query"]))
    split = code_view_split(store, defs, [int(k) for k in ct.keys], terms)
    paths, fns, labels = [], [], []
    for k in ct.keys:
        names = split[int(k)]
        paths.append(names[0][0].split("::", 1)[0] if names else "")
        fns.append(names)
        labels.append(int(any(n in gold_fns for n, _ in names)))
    out["chunks"] = {
        "names": list(ct.names),
        "keys": list(ct.keys),
        "rows": [[round(x, 5) for x in row] for row in ct.rows.tolist()],
        "label": labels,
        "path": paths,
        "fns": fns,
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=tuple(SETS), required=True)
    ap.add_argument("--split", choices=("dev", "check"), required=True)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    root = SETS[args.set]
    instances = split_ids(args.set, args.split, jsonl(root / "instances.jsonl"))
    instances = [i for i in instances if (root / "idx" / "inst" / f"{i['id']}.base.json").exists()]
    instances.sort(key=lambda i: i["id"])
    out = Path(args.out) if args.out else OUT / f"{args.set}-{args.split}.jsonl.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    rec = Recorder()
    t0 = time.perf_counter()
    with gzip.open(out.with_suffix(".tmp"), "wt") as fh:
        for n, inst in enumerate(instances):
            store = Store(root / "idx" / "inst" / f"{inst['id']}.db")
            try:
                row = dump_instance(store, inst, rec)
            finally:
                store.close()
            row["set"], row["split"] = args.set, args.split
            fh.write(json.dumps(row) + "\n")
            print(
                f"[{n + 1}/{len(instances)}] {inst['id']}: {len(row['files']['keys'])} files, "
                f"{len(row['chunks']['keys'])} chunks, {sum(row['chunks']['label'])} positive",
                file=sys.stderr,
                flush=True,
            )
    out.with_suffix(".tmp").rename(out)
    print(f"{len(instances)} instances -> {out} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
