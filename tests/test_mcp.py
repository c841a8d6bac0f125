"""nav's MCP server through the `mcp` package's own client: in-process and over stdio."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
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
    assert {t.name for t in tools} == {
        "find", "def", "show", "refs", "callers", "callees", "impl", "hover", "symbols", "search",
        "outline", "map", "status", "grep",
    }  # fmt: skip
    assert all(t.description and len(t.description) < 300 for t in tools)


def test_an_argument_a_tool_does_not_take_is_refused_by_name(nav: Navigator) -> None:
    async def go() -> dict[str, Any]:
        async with Client(build_server(nav)) as client:
            return {
                "k": await client.call_tool("search", {"text": "sales order", "k": 3}),
                "ok": await client.call_tool("search", {"text": "sales order", "limit": 3}),
                "many": await client.call_tool("status", {f"x{i}": i for i in range(5)}),
            }

    out = anyio.run(go)
    assert out["k"].is_error and "'k'" in text_of(out["k"]) and "limit" in text_of(out["k"])
    assert not out["ok"].is_error and text_of(out["ok"]).count("\n") >= 1
    assert out["many"].is_error and "'x0'" in text_of(out["many"]) and "'x4'" not in text_of(out["many"])


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


BIG = {
    **FILES,
    **{f"shop/use{i}.py": f"from shop.orders import create_sales_order\n\n\ndef use{i}():\n    return create_sales_order('{i}')\n"
       for i in range(12)},
}


def test_every_tool_answers_good_arguments_and_refuses_bad_ones(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """The whole tool set through the SDK's client: each tool with good arguments answers, and with
    bad ones gives a tool error naming the bad value; lists page on with offset (issue 19)."""
    n = Navigator(make_repo(BIG))
    n.index()
    good: dict[str, dict[str, Any]] = {
        "find": {"query": "create_sales_order"},
        "def": {"name": "create_sales_order"},
        "show": {"target": "create_sales_order"},
        "refs": {"name": "create_sales_order", "limit": 5},
        "callers": {"name": "create_sales_order"},
        "callees": {"name": "nightly"},
        "impl": {"name": "Order"},
        "hover": {"name": "create_sales_order"},
        "symbols": {"pattern": "sales order"},
        "search": {"text": "create an order for a customer", "view": "code"},
        "outline": {"path": "shop/orders.py"},
        "map": {"tokens": 64},
        "status": {},
        "grep": {"pattern": "create_sales_order", "word": True, "glob": "*.py"},
    }
    bad: dict[str, tuple[dict[str, Any], str]] = {
        "find": ({"query": "x", "offset": -1}, "offset"),
        "def": ({"name": "create_sales_ordr"}, "create_sales_order"),
        "show": ({"target": "shop/orders.py:0"}, "0"),
        "refs": ({"name": "create_sales_order", "limit": 0}, "limit"),
        "callers": ({"name": "nope_nothing_here"}, "nope_nothing_here"),
        "symbols": ({"pattern": ""}, "pattern"),
        "search": ({"text": "x", "view": "tree"}, "tree"),
        "outline": ({"path": "../../etc/passwd"}, "passwd"),
        "map": ({"tokens": 3}, "3"),
        "grep": ({"pattern": "sales(order"}, "sales(order"),
    }

    async def go() -> tuple[dict[str, Any], dict[str, Any], list[str]]:
        async with Client(build_server(n)) as client:
            ok = {name: await client.call_tool(name, args) for name, args in good.items()}
            refused = {name: await client.call_tool(name, args) for name, (args, _) in bad.items()}
            pages = [
                text_of(await client.call_tool("refs", {"name": "create_sales_order", "limit": 5, "offset": o}))
                for o in (0, 5, 10)
            ]
            return ok, refused, pages

    try:
        ok, refused, pages = anyio.run(go)
    finally:
        n.close()
    for name, result in ok.items():
        assert not result.is_error, (name, text_of(result))
        assert text_of(result).strip(), name
    assert "def create_sales_order" in text_of(ok["show"])
    grep_lines = [ln for ln in text_of(ok["grep"]).splitlines() if ln.startswith("shop/")]
    assert "shop/orders.py:6:5: def create_sales_order(customer: str) -> Order:" in text_of(ok["grep"])
    assert len(grep_lines) >= 13 or "next page" in text_of(ok["grep"])
    assert "12 files" in text_of(ok["status"]) or "files" in text_of(ok["status"])
    for name, result in refused.items():
        assert result.is_error, (name, text_of(result))
        assert bad[name][1] in text_of(result), (name, text_of(result))
    # paging: the pages are disjoint and together hold every reference the first page counts
    first = pages[0].splitlines()[0]
    total = int(first.split()[0])
    where = [
        {ln.split("  ")[0] for ln in page.splitlines() if ln.startswith("shop/") and ":" in ln.split("  ")[0]}
        for page in pages
    ]
    assert all(where) and not (where[0] & where[1]) and not (where[1] & where[2]), pages
    assert "next page: offset=5" in pages[0] and total >= 13


class RawMcp:
    """`nav mcp` as a real process, written to line by line; replies read on a thread."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "-C", str(root), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
        )
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout_s: float = 60.0) -> dict[str, Any]:
        try:
            msg = self.replies.get(timeout=timeout_s)
        except queue.Empty:
            raise AssertionError(f"no reply within {timeout_s:.0f} s") from None
        assert msg is not None, f"nav mcp exited with {self.proc.wait()}"
        return msg

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
DEEP = b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"find","arguments":{"query":' + b"[" * 3000 + b"]" * 3000 + b"}}}"  # fmt: skip
MALFORMED = [  # (line, the reply's id, its code): the SDK dropped each of these without a word
    (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}', 1, -32602),
    (b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":[1]}', 2, -32602),
    (b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}', None, -32600),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', None, -32600),
    (b'{"jsonrpc":"1.0","id":5,"method":"tools/list"}', 5, -32600),
    (b'{"id":6,"method":"tools/list"}', 6, -32600),
    (b'{"jsonrpc":"2.0","id":7,"method":123}', 7, -32600),
    (b'[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]', 8, -32600),
    (DEEP, 9, -32600),
    (b'{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"a":"\xff"}}', 10, -32700),
    (b'{"jsonrpc":"2.0","id":11,"method":"ping","params":{"a":"\\udcff"}}', 11, -32600),  # the SDK's JSON refuses it
    (b'[{"jsonrpc":"2.0","id":"\\udcffx","method":"ping"}]', None, -32600),  # an id no reply can carry: it killed nav mcp
    (b'{"jsonrpc":"2.0","id":12,"method":"ping","result":1}', 12, -32600),
    (b"{not json", None, -32700),
    (b"", None, -32700),
]


def test_nav_mcp_answers_every_malformed_request(nav: Navigator) -> None:
    client = RawMcp(nav.root)
    try:
        client.send(json.dumps(INIT).encode())
        assert "result" in client.reply()
        client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        client.send(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":"bad"}')  # dropped, logged
        for line, reply_id, code in MALFORMED:
            client.send(line)
            reply = client.reply()
            assert reply["id"] == reply_id and reply["error"]["code"] == code, (line[:80], reply)
        client.send(b'{"jsonrpc":"2.0","id":"last","method":"tools/call","params":{"name":"def","arguments":{"name":"Order"}}}')
        reply = client.reply()
        assert reply["id"] == "last" and "shop/orders.py:1:7" in reply["result"]["content"][0]["text"], reply
    finally:
        assert client.close() == 0
