"""Two views of one search: files (where to look) and code (the definitions to read or edit).

Real index, real lexical legs (no model needed: the index has no vectors), the API, the CLI
in-process and the MCP tool.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from navigator import Navigator
from navigator import search as search_module
from navigator.frontends.cli import main
from navigator.indexer import index_root
from navigator.search import SemanticSearch
from storage.db import Store
from storage.errors import UsageError

FILES = {
    # Two functions of one file both deal with refunds; the other files mention it once.
    "shop/refunds.py": '''
        def refund_order(order):
            """Refund a paid order: money back to the card, the order marked refunded."""
            return issue_refund(order.payment, order.total)


        def refund_shipping(order):
            """Refund the shipping cost of an order that arrived late."""
            return issue_refund(order.payment, order.shipping)
        ''',
    "shop/payments.py": '''
        def issue_refund(payment, amount):
            """Send a refund for a payment to the card."""
            return payment.card.credit(amount)
        ''',
    "shop/orders.py": '''
        def cancel_order(order):
            """Cancel an order before it ships; no refund needed when it was not paid."""
            order.state = "cancelled"
        ''',
    "shop/report.py": '''
        def monthly_report(orders):
            """Totals per month, refunds included."""
            return sum(o.total for o in orders)
        ''',
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import textwrap

    root = tmp_path_factory.mktemp("views") / "repo"
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    with Navigator(root) as nav:
        nav.index()
    return root


QUERY = "refund an order"


def test_files_view_lists_each_file_once_first(root: Path) -> None:
    with Navigator(root) as nav:
        resp = nav.search(QUERY, k=3)
    paths = [h.path for h in resp.items]
    assert len(set(paths)) == 3 and paths[0] == "shop/refunds.py"


def test_code_view_ranks_definitions_so_two_of_one_file_lead(root: Path) -> None:
    with Navigator(root) as nav:
        resp = nav.search(QUERY, k=3, view="code")
    top = [(h.path, h.symbol) for h in resp.items[:2]]
    assert set(top) == {("shop/refunds.py", "refund_order"), ("shop/refunds.py", "refund_shipping")}
    # Each hit is one definition: its own lines and signature, not the merged chunk's.
    shipping = next(h for h in resp.items if h.symbol == "refund_shipping")
    assert shipping.start_line > 1 and shipping.signature and "refund_shipping" in shipping.signature
    assert shipping.snippet.lstrip().startswith("def refund_shipping")


def test_k_deepens_the_legs_and_fewer_results_are_said(root: Path) -> None:
    with Navigator(root) as nav:
        resp = nav.search("order", k=100)
        assert len(resp.items) < 100 and any("k=100 asked" in n for n in resp.notes)
        with pytest.raises(UsageError, match="view must be"):
            nav.search(QUERY, view="functions")


def test_cli_code_flag(root: Path) -> None:
    res = CliRunner().invoke(
        main, ["-C", str(root), "search", "--code", "--json", "-k", "2", QUERY], env={"NAV_NO_DAEMON": "1"}
    )
    assert res.exit_code == 0, res.output
    items = json.loads(res.stdout)["items"]
    assert {i["symbol"] for i in items} == {"refund_order", "refund_shipping"}


def test_mcp_search_tool_takes_a_view(root: Path) -> None:
    import asyncio

    from navigator.frontends.mcp_server import build_server

    with Navigator(root) as nav:
        server = build_server(nav)
        out = asyncio.run(server.call_tool("search", {"text": QUERY, "limit": 2, "view": "code"}))
    text = json.dumps(out, default=str)
    assert "refund_order" in text and "refund_shipping" in text


_BODY = "".join(f"    step_{i} = table.lookup({i}, value)\n" for i in range(60))
"""Filler that makes every function its own chunk."""


def _fn(name: str, doc: str) -> str:
    return f'def {name}(value, table):\n    """{doc}"""\n{_BODY}    return value\n\n\n'


INFILE_FILES = {
    # The fix touches both parsers of dates.py; the renderers say "parse" and "format" more often.
    "lib/dates.py": _fn("parse_date", "Parse a date string with a custom format pattern.")
    + _fn("read_clock", "Parse a time string; the pattern is fixed today."),
    **{
        f"lib/render_{n}.py": _fn(f"render_{n}", f"Parse and render {n} with a custom format: parse the format string, the default format.")
        for n in ("money", "percent", "unit", "ratio")
    },
}


@pytest.mark.parametrize("infile", [1, 0])
def test_code_view_searches_the_best_files_again(
    make_repo: Callable[[dict[str, str]], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, infile: int
) -> None:
    """The whole-index legs stop at k candidates; the best files are searched again on their
    own (the ``infile`` leg), so the second parser of the right file is listed."""
    monkeypatch.setattr(search_module, "CODE_INFILE_FILES", infile)
    root = make_repo(INFILE_FILES)
    store = Store(tmp_path / "idx" / "index.db")
    index_root(root, store)
    search = SemanticSearch(store, depth=1)
    code = search.search("parse functions should support a custom format", k=4, legs=("bm25", "symbols", "path"), view="code")
    got = [(h.path, h.symbol) for h in code.items]
    assert ("lib/dates.py", "parse_date") in got, got
    assert (("lib/dates.py", "read_clock") in got) is bool(infile), got
