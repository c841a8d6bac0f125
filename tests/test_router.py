"""The router's classification, as a table of cases."""

from __future__ import annotations

import pytest

from navigator.router import classify
from storage.errors import UsageError

CASES = [
    # query, kind, identifiers
    ("createSalesOrder", "exact", ("createSalesOrder",)),
    ("create_sales_order", "exact", ("create_sales_order",)),
    ("Order", "exact", ("Order",)),
    ("Order.create", "exact", ("Order.create",)),
    ("orders.create_sales_order", "exact", ("orders.create_sales_order",)),
    ("std::vector", "exact", ("std::vector",)),
    ("MAX_ITEMS", "exact", ("MAX_ITEMS",)),
    ("`retry`", "exact", ("retry",)),
    ("  createSalesOrder  ", "exact", ("createSalesOrder",)),
    ("retry", "both", ("retry",)),
    ("src/orders.py:41", "position", ()),
    ("src/orders.py:41:5", "position", ()),
    ("orders.go:7:2", "position", ()),
    ("where do we retry the ERP call", "semantic", ()),
    ("how are routes registered", "semantic", ()),
    ("e.g. how are routes registered", "semantic", ()),
    ("who calls createSalesOrder when the cart is empty", "both", ("createSalesOrder",)),
    ("where is `total` computed", "both", ("total",)),
    ("retry logic in http_client.send", "both", ("http_client.send",)),
    ("errors raised by OrderService", "both", ("OrderService",)),
    ("what uses MAX_ITEMS and create_sales_order", "both", ("MAX_ITEMS", "create_sales_order")),
    ("ERP retry", "semantic", ()),
]


ASKS = [
    ("who calls `index_root`", "callers", True),
    ("where is `Order` defined", "definition", True),
    ("references to MAX_ITEMS", "references", True),
    ("where is `total` used", "references", True),
    ("retry logic in http_client.send", "references", False),
    ("errors raised by OrderService", "references", False),
]


@pytest.mark.parametrize(("query", "intent", "asks"), ASKS)
def test_an_exact_question_is_told_from_prose_naming_a_name(query: str, intent: str, asks: bool) -> None:
    route = classify(query)
    assert (route.intent, route.asks) == (intent, asks), route.why


@pytest.mark.parametrize(("query", "kind", "identifiers"), CASES)
def test_classify(query: str, kind: str, identifiers: tuple[str, ...]) -> None:
    route = classify(query)
    assert (route.kind, route.identifiers) == (kind, identifiers), route.why


def test_position_fields() -> None:
    r = classify("src/orders.py:41:5")
    assert (r.path, r.line, r.col) == ("src/orders.py", 41, 5)
    r = classify("main.go:3")
    assert (r.path, r.line, r.col) == ("main.go", 3, None)


@pytest.mark.parametrize("bad", ["", "   ", None])
def test_empty_query_is_a_usage_error(bad: object) -> None:
    with pytest.raises(UsageError, match="a query is required"):
        classify(bad)  # type: ignore[arg-type]


def test_route_says_why() -> None:
    assert "identifier `Order.create`" in classify("Order.create").describe()
    assert classify("how does caching work").describe() == "semantic: prose: search by meaning"


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("who calls createSalesOrder", "callers"),
        ("callers of `Order.create`", "callers"),
        ("what uses MAX_ITEMS", "references"),
        ("what does create_sales_order call", "callees"),
        ("who implements PaymentGateway", "implementations"),
        ("where is create_sales_order defined", "definition"),
        ("retry logic in http_client.send", "references"),
    ],
)
def test_intent_from_phrasing(query: str, intent: str) -> None:
    route = classify(query)
    assert route.kind == "both" and route.intent == intent


@pytest.mark.parametrize(
    "query",
    [
        "0A" * 300,  # found by tests/test_faults_input.py's fuzzing: a 1,043-character note line
        "where does `" + "0A" * 300 + "` go",
        "x/" + "y" * 500 + ".py:3",
        "retry " + " ".join(f"fooBar{i}" for i in range(40)),
    ],
)
def test_a_routes_why_quotes_names_and_paths_shortened(query: str) -> None:
    why = classify(query).why
    assert len(why) < 200, why
    assert "\n" not in why
