"""nav's MCP server through the `mcp` package's own client: in-process and over stdio."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from navigator import Navigator
from navigator.frontends.mcp_server import build_server

FILES = {
    "shop/orders.py": """\
        class Order:
            def total(self) -> int:
                return 0


        def create_sales_order(customer: str) -> Order:
            \"\"\"Create an order for a customer.\"\"\"
            return Order()
        """,
    "shop/jobs.py": "from shop.orders import create_sales_order\n\n\ndef nightly():\n    return create_sales_order('x')\n",
}


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


@pytest.fixture
def nav(make_repo: Callable[[dict[str, str]], Path]) -> Navigator:
    n = Navigator(make_repo(FILES))
    n.index()
    return n


def test_tools_are_listed_with_descriptions(nav: Navigator) -> None:
    async def go() -> list[Any]:
        async with Client(build_server(nav)) as client:
            return list((await client.list_tools()).tools)

    tools = anyio.run(go)
    assert {t.name for t in tools} == {"find", "refs", "def", "callers", "search", "outline", "map"}
    assert all(t.description and len(t.description) < 300 for t in tools)


def test_def_outline_map_and_errors(nav: Navigator) -> None:
    async def go() -> dict[str, Any]:
        async with Client(build_server(nav)) as client:
            return {
                "def": await client.call_tool("def", {"name": "create_sales_order"}),
                "outline": await client.call_tool("outline", {"path": "shop/orders.py"}),
                "map": await client.call_tool("map", {"tokens": 64}),
                "missing": await client.call_tool("def", {"name": "create_sales_ordr"}),
                "bad_limit": await client.call_tool("outline", {"path": "shop/orders.py", "limit": 0}),
            }

    out = anyio.run(go)
    assert text_of(out["def"]).startswith(
        "shop/orders.py:6:5  function  create_sales_order  def create_sales_order("
    )
    assert "  shop/orders.py:2:9  method  Order.total" in text_of(out["outline"])
    assert "shop/orders.py:" in text_of(out["map"]) and "symbols)" in text_of(out["map"])
    assert out["missing"].is_error and "did you mean `create_sales_order`" in text_of(out["missing"])
    assert out["bad_limit"].is_error and "limit must be between 1 and 500, got 0" in text_of(out["bad_limit"])


def test_nav_mcp_over_stdio(nav: Navigator) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "navigator.frontends.cli", "--no-daemon", "-C", str(nav.root), "mcp"],
        cwd=str(Path(__file__).parent.parent),
        env={"PYTHONPATH": str(Path(__file__).parent.parent), "PATH": os.environ.get("PATH", "")},
    )

    async def go() -> str:
        async with Client(params) as client:
            return text_of(await client.call_tool("def", {"name": "Order.total"}))

    assert anyio.run(go).startswith("shop/orders.py:2:9  method  Order.total")
