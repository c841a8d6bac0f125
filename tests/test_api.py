"""The Python API over a real index: definitions, symbols, outline, status, errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from navigator import Navigator
from navigator.errors import FileNotInIndexError, OutsideRootError, SymbolNotFoundError, UsageError

FILES = {
    "src/shop/__init__.py": "",
    "src/shop/orders.py": """\
        MAX_ITEMS = 50


        class Order:
            \"\"\"A customer's order.\"\"\"

            def total(self) -> int:
                return 0

            class Line:
                def total(self) -> int:
                    return 1


        def create_sales_order(customer: str) -> Order:
            return Order()
        """,
    "src/shop/reports.py": """\
        from shop.orders import create_sales_order


        def total(values: list[int]) -> int:
            return sum(values)


        def monthly():
            return create_sales_order("acme")
        """,
}


@pytest.fixture
def nav(make_repo: Callable[[dict[str, str]], Path]) -> Navigator:
    n = Navigator(make_repo(FILES))
    n.index()
    return n


def test_definition_by_name_qualified_and_module_path(nav: Navigator) -> None:
    (d,) = nav.definitions("create_sales_order").items
    assert (d.path, d.line, d.col, d.kind) == ("src/shop/orders.py", 15, 5, "function")
    assert d.signature == "def create_sales_order(customer: str) -> Order"
    (m,) = nav.definitions("Order.total").items
    assert (m.qualified_name, m.kind, m.line) == ("Order.total", "method", 7)
    (nested,) = nav.definitions("Order.Line.total").items
    assert nested.line == 11
    (f,) = nav.definitions("shop.reports.total").items
    assert (f.path, f.kind) == ("src/shop/reports.py", "function")
    (c,) = nav.definitions("MAX_ITEMS").items
    assert c.kind == "constant"


def test_ambiguous_name_lists_every_definition(nav: Navigator) -> None:
    found = {(d.qualified_name, d.path) for d in nav.definitions("total").items}
    assert found == {
        ("Order.total", "src/shop/orders.py"),
        ("Order.Line.total", "src/shop/orders.py"),
        ("total", "src/shop/reports.py"),
    }


def test_unknown_name_suggests_close_symbols_with_locations(nav: Navigator) -> None:
    with pytest.raises(SymbolNotFoundError) as info:
        nav.definitions("create_sales_ordr")
    msg = str(info.value)
    assert "`create_sales_ordr`" in msg and "`create_sales_order` (src/shop/orders.py:15)" in msg


def test_symbols_ranks_exact_then_prefix_then_fuzzy(nav: Navigator) -> None:
    got = [s.qualified_name for s in nav.symbols("total").items]
    assert got[0] == "total" and set(got) >= {"Order.total", "Order.Line.total"}
    assert nav.symbols("crsales").items[0].name == "create_sales_order"  # subsequence
    assert nav.symbols("sales order").items[0].name == "create_sales_order"  # words
    classes = nav.symbols("order", kinds=("class",))
    assert [s.qualified_name for s in classes.items] == ["Order", "Order.Line"]
    limited = nav.symbols("t", limit=1)
    assert len(limited.items) == 1 and not limited.complete and "limit reached" in (limited.reason or "")


def test_outline_nests_and_rejects_bad_paths(nav: Navigator, tmp_path: Path) -> None:
    entries = nav.outline("src/shop/orders.py").items
    assert [(e.symbol.qualified_name, e.depth) for e in entries] == [
        ("MAX_ITEMS", 0),
        ("Order", 0),
        ("Order.total", 1),
        ("Order.Line", 1),
        ("Order.Line.total", 2),
        ("create_sales_order", 0),
    ]
    with pytest.raises(FileNotInIndexError, match="no file `nope.py`"):
        nav.outline("nope.py")
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    with pytest.raises(OutsideRootError, match="elsewhere.py` is outside the root"):
        nav.outline(outside)


def test_queries_see_edits_without_an_explicit_index(nav: Navigator) -> None:
    orders = nav.root / "src/shop/orders.py"
    orders.write_text(orders.read_text().replace("create_sales_order", "place_order"))
    assert nav.definitions("place_order").items[0].path == "src/shop/orders.py"
    with pytest.raises(SymbolNotFoundError):
        nav.definitions("create_sales_order")
    (nav.root / "src/shop/reports.py").unlink()
    assert [d.path for d in nav.definitions("total").items] == ["src/shop/orders.py"] * 2


def test_status_counts_stale_files(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo(FILES)
    nav = Navigator(root, refresh=False)
    nav.index()
    (root / "src/shop/new.py").write_text("def n():\n    pass\n")
    st = nav.status()
    assert st.indexed and st.files == 3 and st.stale_files == 1 and st.last_run_complete
    assert st.languages == {"python": 3}


def test_bad_root_and_bad_names(tmp_path: Path, nav: Navigator) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        Navigator(tmp_path / "missing")
    with pytest.raises(UsageError, match="symbol name is required"):
        nav.definitions("  ")
    with pytest.raises(UsageError, match="limit must be between 1 and"):
        nav.symbols("x", limit=0)


def test_config_warns_visibly_on_bad_values(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({".nav.toml": "[index]\nmax_file_bytes = 'big'\ncolour = 1\n[nope]\n", "a.py": ""})
    nav = Navigator(root)
    assert nav.config.index.max_file_bytes == 1_000_000
    joined = "\n".join(nav.config.warnings)
    assert "max_file_bytes = 'big'" in joined and "`colour`" in joined and "`nope`" in joined
    assert any("max_file_bytes" in n for n in nav.status().notes)


def test_query_does_not_wait_for_another_index_run(nav: Navigator) -> None:
    from navigator.indexer import index_lock

    nav.lock_wait_s = 0.05
    with index_lock(nav.nav_dir):  # as if a long `nav index` held the lock in another process
        resp = nav.definitions("Order")
    assert resp.items[0].name == "Order"
    assert resp.notes and "another process is updating the index" in resp.notes[0]
    assert not nav.definitions("Order").notes


def test_status_of_an_unindexed_root_creates_nothing(make_repo: Callable[[dict[str, str]], Path]) -> None:
    root = make_repo({"a.py": "x = 1\n"})
    st = Navigator(root).status()
    assert not st.indexed and not (root / ".nav").exists()


def test_symbols_ranks_names_covering_more_words_first(make_repo: Callable[[dict[str, str]], Path]) -> None:
    nav = Navigator(
        make_repo(
            {"a.py": "def index():\n    pass\n\n\ndef index_root():\n    pass\n\n\ndef root():\n    pass\n"}
        )
    )
    assert [s.name for s in nav.symbols("index root").items][:1] == ["index_root"]
