"""The index failing under a lexical leg: a real SQLite file made to fail (a dropped table, a
locked database). A failed leg makes the answer ``complete: false`` with the reason; it is never
an empty leg in an answer that says it is complete, nor an unclassified ``sqlite3`` error."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from navigator.api import Navigator
from navigator.indexer import index_root
from navigator.search import SemanticSearch
from semantic.embed import FakeEmbedder
from storage.db import Store
from storage.errors import IndexBusyError, IndexSchemaError

FILES = {
    "src/orders.py": '''
        def createSalesOrder(customer, lines):
            """Book an order for a customer."""
            return {"customer": customer, "lines": lines}
        ''',
    "src/billing.py": """
        class InvoicePrinter:
            def render_pdf(self, invoice):
                return b"%PDF" + bytes(invoice)
        """,
    "src/shipping.py": '''
        def ship_parcel(order):
            """Send the order's parcel to the customer."""
            return order
        ''',
}
LEXICAL = ("bm25", "symbols", "path")


@pytest.fixture
def store(make_repo: Callable[[dict[str, str]], Path], tmp_path: Path) -> Iterator[Store]:
    root = make_repo(FILES)
    with Store(tmp_path / "idx" / "index.db", timeout_s=0.05) as s:
        index_root(root, s)
        yield s


def test_a_healthy_index_answers_complete(store: Store) -> None:
    """The baseline of the tests below: the same query, nothing broken."""
    resp = SemanticSearch(store, embedder=FakeEmbedder()).search("customer order", k=5, legs=LEXICAL)
    assert resp.complete and resp.reason is None
    assert "bm25" in resp.items[0].ranks


def test_a_dropped_chunk_table_makes_the_bm25_leg_fail_visibly(store: Store) -> None:
    store.conn.execute("DROP TABLE chunks_fts")
    resp = SemanticSearch(store, embedder=FakeEmbedder()).search("customer order", k=5, legs=LEXICAL)
    assert not resp.complete
    assert resp.reason is not None and "bm25 leg unavailable" in resp.reason and "chunks_fts" in resp.reason
    assert any("bm25 leg unavailable" in n for n in resp.notes)
    # the other legs still answer: the symbol table names createSalesOrder, the path leg orders.py
    assert resp.items and all("bm25" not in h.ranks for h in resp.items)
    assert "src/orders.py" in {h.path for h in resp.items}


def test_a_dropped_symbol_table_makes_the_symbols_leg_fail_visibly(store: Store) -> None:
    store.conn.execute("DROP TABLE symbols_fts")
    resp = SemanticSearch(store, embedder=FakeEmbedder()).search("render pdf invoice", k=5, legs=LEXICAL)
    assert not resp.complete and resp.reason is not None and "symbols leg unavailable" in resp.reason
    assert resp.items and resp.items[0].path == "src/billing.py"  # BM25 still finds it


def test_a_long_query_whose_word_counts_fail_says_so(store: Store) -> None:
    store.conn.execute("DROP TABLE symbols_fts")
    text = "the parcel of the customer order is shipped late again " + " ".join(f"word{i}x" for i in range(40))
    resp = SemanticSearch(store, embedder=FakeEmbedder()).search(text, k=5, legs=LEXICAL)
    assert not resp.complete and resp.reason is not None
    assert "long-query word weights leg unavailable" in resp.reason


def test_a_locked_index_is_a_clear_busy_error(store: Store) -> None:
    """Every read blocked (another connection holds an exclusive lock on a rollback-journal
    file): the search raises nav's IndexBusyError, not sqlite3's OperationalError."""
    search = SemanticSearch(store, embedder=FakeEmbedder())
    store.conn.execute("PRAGMA journal_mode=DELETE")
    other = sqlite3.connect(store.path, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        other.execute("DELETE FROM refs")
        with pytest.raises(IndexBusyError, match="locked"):
            search.search("customer order", k=5, legs=LEXICAL)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert search.search("customer order", k=5, legs=LEXICAL).complete


def test_legs_called_without_a_problem_list_raise_the_classified_error(store: Store) -> None:
    """A caller that keeps no list of problems (a benchmark calling ``legs``) gets the error."""
    from semantic.analysis import query_terms

    store.conn.execute("DROP TABLE chunks_fts")
    with pytest.raises(IndexSchemaError):
        SemanticSearch(store, embedder=FakeEmbedder()).legs(query_terms("customer"), use_vectors=False)


def test_the_navigator_answers_incomplete_through_every_layer(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    root = make_repo(FILES)
    with Navigator(root, embedder=FakeEmbedder()) as nav:
        nav.index()
        nav.store.conn.execute("DROP TABLE chunks_fts")
        resp = nav.search("customer order", k=5)
        assert not resp.complete and resp.reason is not None and "bm25 leg unavailable" in resp.reason
        assert resp.items
