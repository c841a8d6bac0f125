"""The path leg (pure): files whose folder and file-name words match the query's, weighted by
rarity (:func:`path_files`), and the files a query names by name (:func:`named_files`).
The pipeline (:mod:`navigator.pipeline`) runs it for the local index and the team store alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache

from semantic.analysis import QueryTerms, path_words
from semantic.ranking import DEFAULT, RankingConfig

__all__ = [
    "by_basename",
    "by_path_word",
    "named_files",
    "path_files",
    "path_score",
    "root",
]


def by_basename(files: Sequence[str]) -> dict[str, list[str]]:
    """file name -> the indexed paths of that name (for :func:`named_files`)."""
    out: dict[str, list[str]] = {}
    for f in files:
        out.setdefault(f.rsplit("/", 1)[-1], []).append(f)
    return out


def named_files(
    files: Sequence[str], named: Sequence[str], *, index: dict[str, list[str]] | None = None
) -> list[str]:
    """Indexed files a query names, in the order named (pure): a named path matches a file
    path that ends with it, else one ending with its last two components (an absolute
    traceback path), else, for a bare file name, the files of that name. ``index`` is
    :func:`by_basename` of ``files``, when the caller keeps one."""
    names = index if index is not None else by_basename(files)
    out: list[str] = []
    for raw in named:
        p = raw.replace("\\", "/").lstrip("./")
        parts = [x for x in p.split("/") if x]
        if not parts:
            continue
        same_name = names.get(parts[-1], [])
        for tail in ("/".join(parts), "/".join(parts[-2:]), parts[-1]):
            hits = [f for f in same_name if f == tail or f.endswith("/" + tail)]
            if hits:
                if len(hits) <= 5:
                    out.extend(h for h in sorted(hits) if h not in out)
                break
    return out


def by_path_word(file_words: dict[str, set[str]]) -> dict[str, list[str]]:
    """path word -> the paths holding it (for :func:`path_files`), in ``file_words`` order."""
    out: dict[str, list[str]] = {}
    for path, words in file_words.items():
        for w in words:
            out.setdefault(w, []).append(path)
    return out


# ``RankingConfig.path_roots``: a query word of action (``pagination``, ``logging``, ``presenting``: -ing, -ion) also matches
# a file whose own name holds a word of the same root (``paginator.rb``, ``job_logger.rb``,
# ``presenter.rb``): Ruby and Java name a file after its class, the agent of the action. The
# BM25 and name legs' Porter stemming already conflated these; the path leg compared spellings.
# Measured (bench/README.md, "Issue 9, fifth round"): a Ruby development set +0.011 [+0.001,
# +0.029], semble's development set +0.0002 [0, +0.0004]. Matching every word's root, through
# folder names too, cost semble's development set −0.002 (``router`` pulled all of ``routing/``).
_ROOT_SUFFIXES = (
    "izations", "ization", "ations", "ation", "ators", "ator", "ating", "ated", "ates", "ate",
    "ables", "able", "ions", "ion", "ings", "ing", "ers", "er", "ors", "or", "ed", "es", "e", "s",
)  # fmt: skip
_ACTION_SUFFIXES = ("ing", "ion", "ions")


@lru_cache(maxsize=65_536)
def root(word: str) -> str:
    """A word's root for ``RankingConfig.path_roots``: the first listed suffix off that leaves 4+ letters."""
    w = word.lower()
    for suffix in _ROOT_SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)]
    return w


def _agent_words(vocabulary: Iterable[str], words: Iterable[str]) -> set[str]:
    """The words of ``vocabulary`` sharing a root with one of ``words``' action words: one pass
    over the path vocabulary, only for a query with such a word (3.5 ms for 50,000 words)."""
    roots = {root(w) for w in words if w.endswith(_ACTION_SUFFIXES)}
    if not roots:
        return set()
    heads = {r[:4] for r in roots}
    return {v for v in vocabulary if v[:4] in heads and root(v) in roots}


def path_files(
    file_words: dict[str, set[str]],
    terms: QueryTerms,
    *,
    limit: int = 50,
    basenames: dict[str, list[str]] | None = None,
    postings: dict[str, list[str]] | None = None,
    config: RankingConfig = DEFAULT,
) -> list[tuple[str, float]]:
    """Files ranked by the rarity-weighted query words found in their path (pure); files
    the query names by path (see :func:`named_files`) first. ``postings`` is
    :func:`by_path_word` of ``file_words``, when the caller keeps one: only the files holding a
    query word are then visited (a long query's many words made a pass over every file's words
    cost tens of milliseconds)."""
    named = named_files(list(file_words), terms.paths, index=basenames) if terms.paths else []
    if named:
        plain = QueryTerms(terms.words, terms.stems, (), terms.text)
        rest = [
            kv
            for kv in path_files(file_words, plain, limit=limit, postings=postings, config=config)
            if kv[0] not in named
        ]
        return ([(p, float("inf")) for p in named] + rest)[:limit]
    if not terms.stems or not file_words:
        return []
    stems: frozenset[str] | set[str] = terms.stems
    rooted: set[str] = set()
    if config.path_roots and any(w.endswith(_ACTION_SUFFIXES) for w in terms.words):
        vocabulary = postings if postings is not None else {w for ws in file_words.values() for w in ws}
        rooted = _agent_words(vocabulary, terms.words) - stems
        stems = stems | rooted
    n = len(file_words)
    df: dict[str, int] = {}
    if postings is not None:
        holding = {w: postings[w] for w in stems if w in postings}
        df = {w: len(ps) for w, ps in holding.items()}
        candidates = set().union(*holding.values()) if holding else set()
        visit = [(p, file_words[p]) for p in candidates]  # the sort below is total: order is free
    else:
        for words in file_words.values():
            for w in stems & words:
                df[w] = df.get(w, 0) + 1
        visit = list(file_words.items())
    if not df:
        return []
    idf = {w: math.log(1 + n / c) for w, c in df.items()}
    scored = []
    for path, words in visit:
        hit = stems & words
        if hit & rooted:  # a root counts in the file's own name only, not its folders'
            own = path_words(path.rsplit("/", 1)[-1])
            hit = {w for w in hit if w not in rooted or w in own}
        if hit:
            scored.append((path, path_score((idf[w] for w in hit), len(words))))
    scored.sort(key=lambda kv: (-kv[1], kv[0]))
    return scored[:limit]


def path_score(idfs: Iterable[float], n_words: int) -> float:
    """A file's path score: the idf of each query word its path holds, summed exactly
    (:func:`math.fsum`: the words come from a set, whose order changes with the process's hash
    seed, and a plain float sum in that order broke exact ties differently from run to run),
    over the square root of its path's word count."""
    return math.fsum(idfs) / math.sqrt(n_words + 1)
