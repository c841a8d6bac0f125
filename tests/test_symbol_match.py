"""The symbol leg's BM25 over names on a real SQLite index: a short query reads its best names
first, and answers exactly what the whole query (every matched name joined, then sorted) does —
also when most of the best names are of kinds the leg skips, where it falls back to the whole query."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from navigator.indexer import index_root
from storage.db import Store
from storage.query import Scope
from storage.sqlite_text import CHUNK_OF
from storage.tokens import fts_query

SKIP = ("field", "attribute", "constant", "variable", "property")


def _whole_query(store: Store, match: str, limit: int) -> list[tuple[int | None, float]]:
    kinds = ", ".join(repr(k) for k in SKIP)
    sql = (
        f"SELECT {CHUNK_OF}, bm25(symbols_fts) AS b FROM symbols_fts "
        "JOIN symbols s ON s.id = symbols_fts.rowid JOIN files f ON f.id = s.file_id "
        f"WHERE symbols_fts MATCH ? AND s.kind NOT IN ({kinds}) ORDER BY b LIMIT ?"
    )
    return [(cid, round(-b, 9)) for cid, b in store.conn.execute(sql, (match, limit)).fetchall()]


@pytest.fixture
def store(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path) -> Store:
    # Functions that share words with the query, and many module constants that share more of
    # them (a kind the leg skips), so that the best names are mostly constants.
    files = {
        f"pkg/m{i}.py": "".join(f"LEDGER_TOTAL_KEY_{i}_{j} = {j}\n" for j in range(12))
        + f"\n\ndef ledger_total_{i}(rows):\n    return sum(rows)\n\n\ndef post_entry_{i}(ledger):\n    return ledger\n"
        for i in range(30)
    }
    root = make_repo(files)
    s = Store(tmp_path / "idx" / "index.db")
    index_root(root, s)
    return s


@pytest.mark.parametrize("words", ["ledger total", "ledger total key", "post entry ledger", "entry"])
@pytest.mark.parametrize("limit", [1, 5, 40, 500])
def test_best_names_first_answers_what_the_whole_query_does(store: Store, words: str, limit: int) -> None:
    match = fts_query(words)
    got = store.symbol_bm25_chunks(match, scope=Scope.of(None, None), skip_kinds=SKIP, limit=limit)
    assert [(g.chunk_id, round(g.score, 9)) for g in got] == _whole_query(store, match, limit)


def test_too_few_wanted_names_among_the_best_falls_back_to_the_whole_query(store: Store) -> None:
    match = fts_query("ledger total key")
    # 360 constants match all three words, 30 functions two: the best 4 x 20 names are constants
    assert store._best_names_first(match, "AND s.kind NOT IN ('constant')", 20) is None
    got = store.symbol_bm25_chunks(match, scope=Scope.of(None, None), skip_kinds=SKIP, limit=20)
    assert len(got) == 20 and [(g.chunk_id, round(g.score, 9)) for g in got] == _whole_query(store, match, 20)
