"""Ranking metrics as nav's benchmarks compute them: NDCG@k (binary gains, as semble's benchmark and
every script here use it, and graded), Acc@k, Recall@k, the rank of the first hit.

Pure functions over ranked lists of strings (paths, function names). A ranked list is expected to hold
each item once (``distinct`` makes one from a list of spans); an item met again further down counts
once, at its first rank, so no metric here exceeds 1.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

Span = tuple[str, int, int]
"""(path, first line, last line) of one hit."""


def _discount(rank0: int) -> float:
    return 1.0 / math.log2(rank0 + 2)


def dcg_at_k(ranked: Sequence[str], gain: Callable[[str], float], k: int) -> float:
    """Σ gain(item) / log2(rank + 1) over the first ``k`` items (rank from 1), each item once."""
    seen: set[str] = set()
    total = 0.0
    for i, item in enumerate(ranked[:k]):
        if item in seen:
            continue
        seen.add(item)
        g = gain(item)
        if g:
            total += g * _discount(i)
    return total


def ndcg_at_k(
    ranked: Sequence[str],
    relevant: Collection[str] | Callable[[str], bool],
    *,
    k: int = 10,
    n_relevant: int | None = None,
) -> float:
    """Binary-gain NDCG@k: relevant items in the top ``k`` over the ideal list, which puts
    ``min(n_relevant, k)`` relevant items first. ``relevant`` is a set or a predicate (then
    ``n_relevant`` is required: how many relevant items there are in all). 0.0 when nothing is
    relevant."""
    if callable(relevant):
        if n_relevant is None:
            raise ValueError("ndcg_at_k: a relevance predicate needs n_relevant")
        is_relevant = relevant
    else:
        pool = relevant
        is_relevant = pool.__contains__
        n_relevant = len(pool) if n_relevant is None else n_relevant
    if n_relevant <= 0 or k <= 0:
        return 0.0
    seen: set[str] = set()
    hits: list[int] = []
    for i, item in enumerate(ranked[:k]):
        if item not in seen:
            seen.add(item)
            if is_relevant(item):
                hits.append(i)
    # The same sums, term by term and in the same order, as the scripts wrote them: figures stay
    # bit-identical to the reported ones.
    dcg = sum(1.0 / math.log2(i + 2) for i in hits)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(n_relevant, k)))
    return dcg / idcg


def graded_ndcg_at_k(ranked: Sequence[str], gains: Mapping[str, float], *, k: int = 10) -> float:
    """NDCG@k with graded gains (``gains[item]``, 0 for an item not in it): DCG of the list over
    the DCG of the items sorted by gain. 0.0 when no item has a positive gain."""
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g * _discount(i) for i, g in enumerate(ideal))
    if idcg <= 0:
        return 0.0
    return dcg_at_k(ranked, lambda item: max(0.0, gains.get(item, 0.0)), k) / idcg


def acc_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 when any gold item is among the first ``k``, else 0.0 (0.0 for an empty gold set)."""
    return 1.0 if set(gold) & set(ranked[:k]) else 0.0


def recall_at_k(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """Share of the gold items among the first ``k`` (0.0 for an empty gold set)."""
    g = set(gold)
    return len(g & set(ranked[:k])) / len(g) if g else 0.0


def first_hit_rank(ranked: Sequence[str], gold: Collection[str]) -> int | None:
    """The 1-based rank of the first gold item, or None when the list holds none."""
    g = set(gold)
    return next((i + 1 for i, item in enumerate(ranked) if item in g), None)


def reciprocal_rank(ranked: Sequence[str], gold: Collection[str]) -> float:
    """1 / rank of the first gold item, 0.0 when there is none (the mean over queries is MRR)."""
    rank = first_hit_rank(ranked, gold)
    return 1.0 / rank if rank else 0.0


def distinct(spans: Iterable[Span]) -> list[str]:
    """The paths of ranked spans, each once, in the rank order of its first span."""
    return list(dict.fromkeys(p for p, _, _ in spans))


def semble_ndcg(
    files: Sequence[str], chunks: Iterable[Span], targets: Iterable[Any], *, k: int = 10
) -> float:
    """NDCG@k of semble's benchmark over distinct files, binary gains. A target is a path (the
    whole file is relevant) or ``{"path", "start_line"?, "end_line"?}``: the file is relevant when
    one of the returned ``chunks`` (path, start, end) of that file overlaps the span."""
    whole: set[str] = set()
    spans: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for t in targets:
        if isinstance(t, str):
            whole.add(t)
        else:
            spans[t["path"]].append((int(t.get("start_line", 0)), int(t.get("end_line", 10**9))))
    n_targets = len(whole | set(spans))
    chunk_list = list(chunks)

    def relevant(path: str) -> bool:
        if path in whole:
            return True
        for p, s, e in chunk_list:
            if p == path and any(s <= te and e >= ts for ts, te in spans.get(path, ())):
                return True
        return False

    return ndcg_at_k(files, relevant, k=k, n_relevant=n_targets)
