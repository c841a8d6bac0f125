"""Training triples for the embedder from the mined pairs: (query, positive chunks, hard negatives).

Input: ``bench/corpora/mining/pairs.jsonl`` (``bench/mining/mine_pairs.py``; its manifest is
``bench/mining/manifest.json``). Per pair, each positive file is read at the pair's ``parent``
commit from the fetched mirror (``/work/.mirror/OWNER+NAME/repo``) and cut into nav's own chunks
(``semantic.parse.parse_source``, the index's chunker), embedded as nav embeds them
(``embedding_text``: ``path::symbol``, signature, code). A chunk is a positive when it overlaps a
changed definition (``positive_functions``, not ``<module>``).

Hard negatives come from a lexical ranking, SweRank's recipe without one index per commit: a BM25
(identifier-aware words) of the query over the pool of every chunk read for that repository
(the positives' files, at every mined parent commit), minus the pair's positives and any chunk of
the same ``path::symbol`` as a positive (an older version of the same definition is no
negative). The top ``--negatives`` are kept, in rank order.

Split: repositories, not pairs, are held out (``--holdout`` share, ``random.Random(seed)``), so
early stopping measures unseen code.

    PYTHONPATH=$PWD python bench/static/training_data.py --out bench/corpora/static/triples.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for p in (ROOT, ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from mining.mine_pairs import Git, check_allowed, load_excluded  # noqa: E402

from semantic.embed import embedding_text  # noqa: E402
from semantic.languages import detect_language  # noqa: E402
from semantic.parse import parse_source  # noqa: E402

PAIRS = ROOT / "bench" / "corpora" / "mining" / "pairs.jsonl"
MIRRORS = Path("/work/.mirror")
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "and",
        "or",
        "is",
        "it",
        "for",
        "on",
        "with",
        "this",
        "that",
        "be",
        "by",
        "as",
        "at",
        "from",
        "not",
        "when",
    ]
)


def words(text: str) -> list[str]:
    """Identifier-aware lower-case words (``parseHTTPResponse`` -> parse, http, response)."""
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if len(w) > 1 and w not in _STOP]


class Pool:
    """A repository's chunks with a small BM25 over them (k1 1.2, b 0.75)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []  # (path::symbol, embedded text)
        self.seen: dict[str, int] = {}
        self.tf: list[Counter[str]] = []
        self.df: Counter[str] = Counter()

    def add(self, key: str, text: str) -> int:
        if text in self.seen:
            return self.seen[text]
        i = self.seen[text] = len(self.items)
        self.items.append((key, text))
        tf = Counter(words(text))
        self.tf.append(tf)
        self.df.update(tf.keys())
        return i

    def rank(self, query: str, k: int, skip: set[int], skip_keys: set[str]) -> list[int]:
        n = len(self.items)
        if not n:
            return []
        avg = sum(sum(t.values()) for t in self.tf) / n
        q = set(words(query))
        scores: list[tuple[float, int]] = []
        for i, tf in enumerate(self.tf):
            if i in skip or self.items[i][0] in skip_keys:
                continue
            length = sum(tf.values())
            s = 0.0
            for w in q:
                f = tf.get(w)
                if f:
                    idf = math.log(1 + (n - self.df[w] + 0.5) / (self.df[w] + 0.5))
                    s += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / avg))
            if s > 0:
                scores.append((s, i))
        scores.sort(reverse=True)
        return [i for _, i in scores[:k]]


def repo_triples(
    repo: str, pairs: list[dict[str, Any]], mirrors: Path, negatives: int
) -> list[dict[str, Any]]:
    git = Git(mirrors / repo.replace("/", "+") / "repo")
    pool = Pool()
    staged: list[tuple[dict[str, Any], list[int], set[str]]] = []
    try:
        for pair in pairs:
            pos_ids: list[int] = []
            pos_keys: set[str] = set()
            by_file: dict[str, list[str]] = defaultdict(list)
            for fn in pair["positive_functions"]:
                path, _, qn = fn.partition("::")
                if qn and qn != "<module>":
                    by_file[path].append(qn)
            for path, names in by_file.items():
                blob = git.blob(pair["parent"], path)
                if blob is None:
                    continue
                parsed = parse_source(path, blob[1], detect_language(path))
                spans = [
                    (s.span.start_line, s.span.end_line) for s in parsed.symbols if s.qualified_name in names
                ]
                for c in parsed.chunks:
                    key = f"{path}::{c.symbol or '<module>'}"
                    i = pool.add(key, embedding_text(path, c.symbol, c.signature, c.text))
                    if any(c.start_line <= e and s <= c.end_line for s, e in spans):
                        pos_ids.append(i)
                        pos_keys.add(key)
            if pos_ids:
                staged.append((pair, list(dict.fromkeys(pos_ids)), pos_keys))
    finally:
        git.close()
    out = []
    for pair, pos_ids, pos_keys in staged:
        neg = pool.rank(pair["query"], negatives, set(pos_ids), pos_keys)
        out.append(
            {
                "id": pair["id"],
                "repo": repo,
                "language": pair["language"],
                "query": pair["query"],
                "positives": [pool.items[i][1] for i in pos_ids[:4]],
                "negatives": [pool.items[i][1] for i in neg],
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", default=str(PAIRS))
    ap.add_argument("--mirrors", default=str(MIRRORS))
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--holdout", type=float, default=0.1, help="share of repositories held out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    excluded = load_excluded()
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in Path(args.pairs).read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        by_repo[pair["repo"]].append(pair)
    repos = sorted(by_repo)
    for repo in repos:
        check_allowed(repo, excluded)  # never train on an evaluation set's repository
    held = set(random.Random(args.seed).sample(repos, max(1, round(len(repos) * args.holdout))))
    t0 = time.perf_counter()
    n = 0
    with open(args.out, "w", encoding="utf-8") as fh:
        for repo in repos:
            rows = repo_triples(repo, by_repo[repo], Path(args.mirrors), args.negatives)
            for row in rows:
                row["split"] = "holdout" if repo in held else "train"
                fh.write(json.dumps(row) + "\n")
            n += len(rows)
            print(
                f"{repo}: {len(rows)}/{len(by_repo[repo])} pairs, {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    manifest = {
        "command": " ".join(["python", "bench/static/training_data.py", *sys.argv[1:]]),
        "pairs_in": sum(len(v) for v in by_repo.values()),
        "triples": n,
        "repositories": len(repos),
        "holdout_repositories": sorted(held),
        "negatives": args.negatives,
        "seed": args.seed,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    Path(args.out).with_suffix(".manifest.json").write_text(
        json.dumps(manifest, indent=1) + "\n", encoding="utf-8"
    )
    print(json.dumps({k: v for k, v in manifest.items() if k != "holdout_repositories"}))


if __name__ == "__main__":
    main()
