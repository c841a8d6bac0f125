"""The history leg's scoring (``RankingConfig.history_leg``): the repository's past commits whose
messages match a query credit the files they changed.

A commit message says in words what a change did ("Fixed QuerySet.bulk_create() crash on
models with db_column primary keys"), and the files it changed are where that kind of work
lives: a query with little vocabulary in common with the code may share it with the history.
Each of the best-matching commits credits every indexed file it changed with its BM25 score
divided among them (a commit of one file is firm evidence, one of twenty is spread thin), and
files are ranked by their credit (the similar-report score of BugLocator, Zhou et al., ICSE 2012).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def history_files(commits: Iterable[tuple[float, Sequence[str]]], *, limit: int) -> list[str]:
    """The files ``commits`` credit, best first (at most ``limit``): each commit is (its positive
    BM25 score, the indexed files it changed); ties by path."""
    credit: dict[str, float] = {}
    for score, paths in commits:
        kept = list(dict.fromkeys(paths))
        if not kept or score <= 0:
            continue
        share = score / len(kept)
        for path in kept:
            credit[path] = credit.get(path, 0.0) + share
    return sorted(credit, key=lambda p: (-credit[p], p))[:limit]
