"""The symbol table's verbs as pure functions (navigator/symbol_table.py), over the real SQLite
index and the in-memory fake alike: the same store contents give the same answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from navigator import symbol_table
from navigator.results import GrepHit
from storage.db import Store
from storage.errors import FileNotInIndexError
from storage.fake import FakeIndex
from storage.model import ParsedFile, Span, SymbolDef, SyntaxRef
from storage.query import IndexQueries, SymbolRow


def _sym(name: str, qn: str, kind: str, path: str, start: int, end: int) -> SymbolDef:
    return SymbolDef(
        name=name, qualified_name=qn, kind=kind, path=path, language="python",
        span=Span(start, 1, end, 10), name_span=Span(start, 5, start, 5 + len(name)),
        signature=f"{kind} {name}", container=qn.rsplit(".", 1)[0] if "." in qn else None,
    )  # fmt: skip


ORDERS = ParsedFile(
    "src/shop/orders.py",
    "python",
    symbols=(
        _sym("createSalesOrder", "createSalesOrder", "function", "src/shop/orders.py", 1, 2),
        _sym("OrderBook", "OrderBook", "class", "src/shop/orders.py", 4, 9),
        _sym("add", "OrderBook.add", "method", "src/shop/orders.py", 5, 6),
        _sym("create", "OrderBook.create", "method", "src/shop/orders.py", 7, 9),
    ),
    refs=(SyntaxRef("createSalesOrder", 6, 9, 25),),
)
BILLING = ParsedFile(
    "src/shop/billing.py",
    "python",
    symbols=(
        _sym("InvoicePrinter", "InvoicePrinter", "class", "src/shop/billing.py", 1, 4),
        _sym("recreate_order", "InvoicePrinter.recreate_order", "method", "src/shop/billing.py", 2, 3),
    ),
    refs=(SyntaxRef("createSalesOrder", 3, 16, 32), SyntaxRef("createSalesOrder", 3, 40, 56)),
)


@pytest.fixture(params=["sqlite", "fake"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[IndexQueries]:
    def load(into: Store | FakeIndex) -> None:
        for f in (ORDERS, BILLING):
            into.replace_file(f, content_hash=f"blob-{f.path}", size=100, mtime_ns=1, lines=9)

    if request.param == "fake":
        fake = FakeIndex()
        load(fake)
        yield fake
        return
    with Store(tmp_path / "index.db") as store:
        load(store)
        yield store


def _qualified(rows: list[SymbolRow]) -> list[str]:
    return [r.definition.qualified_name for r in rows]


def test_a_name_resolves_by_name_qualified_suffix_and_module_path(index: IndexQueries) -> None:
    assert _qualified(symbol_table.resolve(index, "createSalesOrder")) == ["createSalesOrder"]
    assert _qualified(symbol_table.resolve(index, "OrderBook.add")) == ["OrderBook.add"]
    assert _qualified(symbol_table.resolve(index, "OrderBook::add")) == ["OrderBook.add"]
    # src/ is dropped from the module path; a root inside the package still matches
    assert _qualified(symbol_table.resolve(index, "shop.orders.createSalesOrder")) == ["createSalesOrder"]
    assert _qualified(symbol_table.resolve(index, "orders.OrderBook.add")) == ["OrderBook.add"]
    assert symbol_table.resolve(index, "billing.createSalesOrder") == []


def test_suggestions_name_close_names_and_where_they_are(index: IndexQueries) -> None:
    picks = symbol_table.suggestions(index, "createSalesOrdr")
    assert picks[0] == "`createSalesOrder` (src/shop/orders.py:1)"
    assert symbol_table.suggestions(index, "createsalesorder")[0].startswith("`createSalesOrder`")


def test_symbols_rank_exact_then_prefix_then_substring(index: IndexQueries) -> None:
    ranked = _qualified(symbol_table.ranked_symbols(index, "create", limit=50))
    # exact name first; then name prefix (shorter name first); then substring
    assert ranked[:3] == ["OrderBook.create", "createSalesOrder", "InvoicePrinter.recreate_order"]
    fuzzy = _qualified(symbol_table.ranked_symbols(index, "InvPrinter", limit=50))
    assert fuzzy[0] == "InvoicePrinter"  # a subsequence of the name when nothing contains it


def test_outline_is_in_source_order_with_depth(index: IndexQueries) -> None:
    entries = symbol_table.outline(index, "src/shop/orders.py")
    assert [(e.symbol.qualified_name, e.depth) for e in entries] == [
        ("createSalesOrder", 0), ("OrderBook", 0), ("OrderBook.add", 1), ("OrderBook.create", 1),
    ]  # fmt: skip
    with pytest.raises(FileNotInIndexError, match="not indexed"):
        symbol_table.outline(index, "src/shop/missing.py")


def test_a_grep_hit_gets_its_innermost_enclosing_symbol(index: IndexQueries) -> None:
    hits = (
        GrepHit("src/shop/orders.py", 6, 1, "x"),
        GrepHit("src/shop/orders.py", 3, 1, "between definitions"),
        GrepHit("src/shop/billing.py", 0, 0, "", count=2),
    )
    out = symbol_table.with_symbols(index, hits)
    assert [h.symbol for h in out] == ["OrderBook.add", None, None]


def test_the_repo_map_ranks_the_most_used_definition_first(index: IndexQueries) -> None:
    repo_map = symbol_table.repo_map(index, 1024, started=0.0)
    assert repo_map.total_symbols == 6
    assert repo_map.entries[0].symbol.qualified_name == "createSalesOrder"
    assert "createSalesOrder" in repo_map.text
