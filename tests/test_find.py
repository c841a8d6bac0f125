"""Navigator.query end to end: the real router, symbol table, language server and search."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from navigator import Navigator

WORKSPACE = Path(__file__).parent / "workspaces" / "python"


@pytest.fixture(scope="module")
def nav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Navigator]:
    root = tmp_path_factory.mktemp("find") / "ws"
    shutil.copytree(WORKSPACE, root)
    n = Navigator(root)
    n.index()
    yield n
    n.close()


def test_a_name_goes_to_the_exact_leg(nav: Navigator) -> None:
    resp = nav.query("create_sales_order", deadline_s=60)
    assert resp.source == "router:exact" and resp.notes[0].startswith("routed exact")
    top = resp.items[0]
    assert (top.path, top.kind) == ("orders/service.py", "definition")
    assert set(top.ranks) >= {"symbols", "lsp"}
    refs = {(f.path, f.line) for f in resp.items if f.kind == "reference"}
    assert ("orders/app.py", 12) in refs and ("orders/__init__.py", 4) in refs
    assert all("lsp" in f.ranks or "symbols" in f.ranks for f in resp.items)


def test_who_calls_answers_with_the_callers_first_and_whole(nav: Navigator) -> None:
    resp = nav.query("who calls `create_sales_order`", deadline_s=60)
    assert resp.source == "router:both" and "asking for callers" in resp.notes[0]
    assert any("exact answer" in n for n in resp.notes)
    # The call site leads, then the definition; search hits follow, marked related.
    assert [(f.path, f.line, f.symbol) for f in resp.items[:1]] == [("orders/app.py", 12, "main")]
    assert (resp.items[1].path, resp.items[1].kind) == ("orders/service.py", "definition")
    rest = resp.items[2:]
    assert rest and all(f.kind == "related" and set(f.ranks) <= {"search", "symbols"} for f in rest)


def test_prose_mentioning_a_name_is_fused(nav: Navigator) -> None:
    resp = nav.query("how does create_sales_order total the lines", deadline_s=60)
    assert "asking for" not in resp.notes[0]
    assert not any(f.kind == "related" for f in resp.items)
    assert any("search" in f.ranks for f in resp.items) and any("lsp" in f.ranks for f in resp.items)


def test_prose_goes_to_search(nav: Navigator) -> None:
    resp = nav.query("the report that sums a list of numbers")
    assert resp.source == "router:semantic"
    assert resp.items and resp.items[0].kind == "code"
    assert all(set(f.ranks) == {"search"} for f in resp.items)


def test_a_position_goes_to_that_symbol(nav: Navigator) -> None:
    resp = nav.query("orders/app.py:12:13", deadline_s=60)
    assert resp.source == "router:position"
    assert ("orders/service.py", 6) in {(f.path, f.line) for f in resp.items if f.kind == "definition"}


def test_limit_bounds_the_answer_and_says_so(nav: Navigator) -> None:
    resp = nav.query("Order", limit=2, deadline_s=60)
    assert len(resp.items) == 2 and not resp.complete and "limit reached" in (resp.reason or "")


def test_a_routed_query_sees_an_edit_made_just_before(nav: Navigator) -> None:
    (nav.root / "orders" / "late.py").write_text("def reconcile_ledger_totals():\n    return 0\n")
    try:
        resp = nav.query("reconcile_ledger_totals", deadline_s=60)
        assert resp.items[0].path == "orders/late.py" and resp.items[0].kind == "definition"
    finally:
        (nav.root / "orders" / "late.py").unlink()


def test_pasted_issue_text_asks_the_exact_leg_about_its_strongest_names(nav: Navigator) -> None:
    text = (
        "Totals are wrong. Traceback (most recent call last):\n"
        '  File "/srv/app/orders/service.py", line 7, in create_sales_order\n'
        "Also seen with order_total, OrderLine, OrderService, render_report, send_invoice, MAX_ITEMS."
    )
    resp = nav.query(text, deadline_s=60)
    capped = next(n for n in resp.notes if "the exact leg looked up" in n)
    assert "4 of the" in capped and "`create_sales_order`" in capped.split(":", 1)[1].split(",")[0]
    assert any(f.path == "orders/service.py" for f in resp.items[:5])


def test_the_exact_leg_looks_up_as_many_names_as_the_ranking_config_says(nav: Navigator) -> None:
    import dataclasses

    from navigator.find import run_query
    from semantic.ranking import DEFAULT

    text = (
        "Totals are wrong. Traceback (most recent call last):\n"
        '  File "/srv/app/orders/service.py", line 7, in create_sales_order\n'
        "Also seen with order_total, OrderLine, OrderService, render_report, send_invoice, MAX_ITEMS."
    )
    resp = run_query(nav, text, deadline_s=60, config=dataclasses.replace(DEFAULT, max_exact_names=2))
    capped = next(n for n in resp.notes if "the exact leg looked up" in n)
    assert "2 of the" in capped and "`create_sales_order`" in capped.split(":", 1)[1].split(",")[0]


UNTYPED = """def show(thing):
    return thing.total()
"""


def test_possible_uses_follow_the_servers_answer_and_related_hits_name_what_was_asked(nav: Navigator) -> None:
    # `thing.total()` on an untyped receiver: a possible caller the server cannot confirm, in
    # a file whose path sorts before the server's call site (a tie would put it first)
    (nav.root / "orders" / "a_untyped.py").write_text(UNTYPED)
    try:
        resp = nav.query("who calls `Order.total`", deadline_s=60)
        kinds = [(f.kind, set(f.ranks)) for f in resp.items]
        server = [i for i, f in enumerate(resp.items) if "lsp" in f.ranks]
        possible = [i for i, f in enumerate(resp.items) if set(f.ranks) == {"syntax"}]
        assert server and possible, kinds
        # the server's answer leads although possible uses make the answer incomplete
        assert server == list(range(len(server))) and max(server) < min(possible), kinds
        assert ("orders/a_untyped.py", 2) in {(resp.items[i].path, resp.items[i].line) for i in possible}
        assert any("exact answer" in n for n in resp.notes), resp.notes
        related = [f for f in resp.items if f.kind == "related"]
        assert related and all(f.kind != "related" for f in resp.items[: max(possible) + 1])
        for f in related:  # every related hit's code names `total`
            lines = (nav.root / f.path).read_text().splitlines()[f.line - 1 : f.end_line]
            assert any("total" in ln for ln in lines), f

        # a bare name is fused, yet a possible use never outranks the server's last hit
        bare = nav.query("Order.total", deadline_s=60)
        order = [set(f.ranks) for f in bare.items]
        last_server = max(i for i, r in enumerate(order) if "lsp" in r)
        first_possible = min(i for i, r in enumerate(order) if r == {"syntax"})
        assert last_server < first_possible, order
    finally:
        (nav.root / "orders" / "a_untyped.py").unlink()


def test_prose_lists_definitions_as_the_code_view_ranks_them(nav: Navigator) -> None:
    # each definition on its own merit: not one chunk per file first (a file's second function
    # came after every weaker file's first)
    text = "an order for a customer and its total"
    resp = nav.query(text)
    code = nav.search(text, k=50, view="code")
    assert resp.source == "router:semantic" and resp.items
    assert [(f.path, f.line) for f in resp.items] == [(h.path, h.start_line) for h in code.items][
        : len(resp.items)
    ]
