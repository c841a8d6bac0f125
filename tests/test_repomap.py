"""Repo map: PageRank over references, ranking and the token budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from navigator import Navigator
from navigator.errors import UsageError
from navigator.repomap import Definition, estimate_tokens, pagerank, rank_definitions, render


def test_pagerank_ranks_the_hub_and_sums_to_one() -> None:
    nodes = ["a", "b", "c", "hub"]
    edges = {("a", "hub"): 1.0, ("b", "hub"): 1.0, ("c", "hub"): 1.0, ("hub", "a"): 1.0}
    pr = pagerank(nodes, edges)
    assert max(pr, key=pr.__getitem__) == "hub"
    assert abs(sum(pr.values()) - 1.0) < 1e-6
    assert pagerank([], {}) == {}


def d(key: int, name: str, path: str, container: str | None = None, kind: str = "function") -> Definition:
    return Definition(
        key, name, path, key, f"def {name}()", kind, f"{container}.{name}" if container else name, container
    )


def test_rank_definitions_prefers_widely_used_specific_names() -> None:
    defs = [
        d(1, "create_sales_order", "orders.py"),
        d(2, "_helper", "orders.py"),
        d(3, "render_page", "views.py"),
    ]
    refs = [
        ("api.py", "create_sales_order", 3),
        ("cli.py", "create_sales_order", 1),
        ("jobs.py", "create_sales_order", 2),
        ("api.py", "_helper", 5),
        ("orders.py", "create_sales_order", 1),  # its own definition line: not a use
        ("api.py", "render_page", 1),
    ]
    ranked = rank_definitions(defs, refs)
    assert [x.name for _, x in ranked] == ["create_sales_order", "render_page", "_helper"]


def test_nested_functions_are_left_out() -> None:
    defs = [d(1, "outer", "a.py"), d(2, "inner_helper", "a.py", container="outer")]
    ranked = rank_definitions(defs, [("b.py", "inner_helper", 4), ("b.py", "outer", 1)])
    assert [x.name for _, x in ranked] == ["outer"]


def test_render_respects_the_budget() -> None:
    defs = [d(i, f"function_number_{i}", f"pkg/m{i % 3}.py") for i in range(1, 40)]
    ranked = [(1.0 / i, x) for i, x in enumerate(defs, 1)]
    text, chosen = render(ranked, tokens=100)
    assert estimate_tokens(text) <= 100 and 0 < len(chosen) < len(defs)
    assert text.splitlines()[0] == "pkg/m1.py:" and "  1: def function_number_1()" in text


@pytest.fixture
def nav(make_repo: Callable[[dict[str, str]], Path]) -> Navigator:
    files = {
        "shop/orders.py": "class Order:\n    def total(self):\n        return 1\n\n\ndef create_sales_order(c):\n    return Order()\n",
        "shop/util.py": "def rarely_used_helper():\n    pass\n",
    }
    for i in range(5):
        files[f"shop/client{i}.py"] = (
            "from shop.orders import create_sales_order, Order\n\n\n"
            f"def job{i}():\n    o: Order = create_sales_order({i})\n    return o\n"
        )
    n = Navigator(make_repo(files))
    n.index()
    return n


def test_repo_map_on_a_real_index(nav: Navigator) -> None:
    m = nav.repo_map(tokens=200)
    names = [e.symbol.qualified_name for e in m.entries]
    assert names[:2] == ["create_sales_order", "Order"] or names[:2] == ["Order", "create_sales_order"]
    assert (
        names.index("create_sales_order") < names.index("rarely_used_helper")
        if "rarely_used_helper" in names
        else True
    )
    assert m.text.startswith("shop/orders.py:") and estimate_tokens(m.text) <= 200
    assert m.total_symbols >= 9
    with pytest.raises(UsageError, match="tokens must be between 16 and"):
        nav.repo_map(tokens=3)
