from __future__ import annotations

import sqlite3

import pytest

from storage.tokens import fts_query, index_text, split_identifier


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("createSalesOrder", ["create", "sales", "order"]),
        ("create_sales_order", ["create", "sales", "order"]),
        ("CreateSalesOrder", ["create", "sales", "order"]),
        ("CREATE_SALES_ORDER", ["create", "sales", "order"]),
        ("HTTPServer", ["http", "server"]),
        ("getHTTPResponse2", ["get", "http", "response", "2"]),
        ("__init__", ["init"]),
        ("x", ["x"]),
    ],
)
def test_split_identifier(name: str, words: list[str]) -> None:
    assert split_identifier(name) == words


def test_index_text_keeps_whole_identifier_and_words() -> None:
    assert index_text("def createSalesOrder(x):") == "def createsalesorder create sales order x"


@pytest.fixture
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = \"unicode61 tokenchars '_'\")")
    docs = {
        1: "def createSalesOrder(customer): pass",
        2: "def create_sales_order(customer): pass",
        3: "# we create an order for each sale",
        4: "def cancel_order(order): pass",
    }
    for rowid, text in docs.items():
        conn.execute("INSERT INTO t(rowid, text) VALUES (?, ?)", (rowid, index_text(text)))
    return conn


def _match(conn: sqlite3.Connection, query: str) -> set[int]:
    return {
        r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (fts_query(query, mode="AND"),))
    }


@pytest.mark.parametrize(
    "query", ["createSalesOrder", "create_sales_order", "create sales order", "CreateSalesOrder"]
)
def test_spellings_find_each_other(fts: sqlite3.Connection, query: str) -> None:
    assert {1, 2} <= _match(fts, query)
    assert 4 not in _match(fts, query)


def test_whole_identifier_ranks_its_exact_spelling_first(fts: sqlite3.Connection) -> None:
    rows = fts.execute(
        "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t)", (fts_query("create_sales_order"),)
    ).fetchall()
    assert rows[0][0] == 2


def test_fts_query_of_punctuation_is_empty() -> None:
    assert fts_query("()!?") == ""
