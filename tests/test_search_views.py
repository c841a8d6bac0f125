"""Two views of one search: files (where to look) and code (the definitions to read or edit).

Real index, real lexical legs (no model needed: the index has no vectors), the API, the CLI
in-process and the MCP tool.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from navigator import Navigator
from navigator.frontends.cli import main
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


def test_every_hit_says_the_file_line_its_snippet_starts_at(tmp_path: Path) -> None:
    """A hit spans a whole definition, its snippet may start inside it (at the chunk that matched):
    ``snippet_line`` places it — the file's line there is the snippet's first line (issue 18)."""
    body = "".join(f"    step_{i} = compute(order, {i})\n" for i in range(400))
    files = {
        "shop/long.py": "def settle_everything(order):\n\n" + body + "    zanzibar_ledger_flush(order)\n",
        "shop/short.py": "\n\n\ndef zanzibar_helper():\n    return 'ledger'\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    with Navigator(tmp_path) as nav:
        nav.index()
        answers = [nav.search("zanzibar ledger flush", k=5, view=v) for v in ("files", "code")]
    inside = False
    for resp in answers:
        assert resp.items
        for hit in resp.items:
            lines = (tmp_path / hit.path).read_text().splitlines()
            assert hit.start_line <= hit.snippet_line <= hit.end_line, hit
            assert lines[hit.snippet_line - 1].rstrip() == hit.snippet.splitlines()[0], hit
            inside |= hit.snippet_line > hit.start_line
    code_hit = next(h for h in answers[1].items if h.symbol == "settle_everything")
    assert code_hit.start_line == 1 and code_hit.snippet_line > 300  # the chunk that matched, far inside
    assert inside
