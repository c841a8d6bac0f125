"""Callers of a method on dynamic code: the server's answer, then a clearly marked
syntax-level list of ``.name`` uses it could not confirm (FINDINGS.md: servers miss calls on
untyped receivers). Real basedpyright on a copy of the committed Python workspace."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from test_exact_servers import DEADLINE, WORKSPACES, require_server

from navigator.api import Navigator
from navigator.exact import ExactNavigator, NavigatorTable

pytestmark = pytest.mark.slow

DYNAMIC = '''"""Calls the server cannot resolve: the receivers have no type."""


def show(thing):
    return thing.total()


def later(thing):
    pending = thing.total
    return pending


class Box:
    @property
    def size(self):
        return 1


def measure(thing):
    thing.total = 0
    return thing.size


def typed(box: Box) -> int:
    probe = Box.size
    return box.size + len([probe])


class Meter:
    def reading(self) -> int:
        return 1

    def lonely_method(self) -> int:
        return 2


class SmartMeter(Meter):
    def __init__(self) -> None:
        self.reading = lambda: 3
'''


@pytest.fixture(scope="module")
def exact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExactNavigator]:
    require_server("python")
    root = tmp_path_factory.mktemp("callers") / "python"
    shutil.copytree(WORKSPACES / "python", root)
    (root / "orders" / "dynamic.py").write_text(DYNAMIC)
    nav = Navigator(root)
    nav.index()
    ex = ExactNavigator(nav.root, NavigatorTable(nav))
    yield ex
    ex.close()
    nav.close()


def test_method_callers_are_the_server_answer_then_syntax_uses(exact: ExactNavigator) -> None:
    resp = exact.callers("Order.total", deadline_s=DEADLINE)
    # complete means nothing is known to be missing: two uses the server could not resolve are
    assert not resp.complete and resp.reason == "1 possible caller the server could not resolve"
    provenances = [h.provenance for h in resp.items]
    lsp = [h for h in resp.items if h.provenance == ("lsp",)]
    syntax = [h for h in resp.items if h.provenance == ("possible",)]
    assert len(lsp) + len(syntax) == len(resp.items), provenances
    # the typed call in app.py comes from the server
    assert [(h.path, h.code) for h in lsp] == [("orders/app.py", "return order.total()  # ref: total")]
    assert lsp[0].kind == "call" and lsp[0].symbol == "main"
    # the untyped ones come after it, by name only, and say so
    assert provenances.index(("possible",)) == len(lsp), "possible uses must follow the server's answer"
    # a plain method runs only where it is called: `pending = thing.total` (line 9) and
    # `thing.total = 0` (line 20) are no calls of it
    assert {(h.path, h.line, h.kind, h.symbol) for h in syntax} == {
        ("orders/dynamic.py", 5, "possible call", "show"),
    }
    assert resp.source == "lsp:basedpyright,syntax"
    assert any("provenance `possible`" in n and "`.total`" in n for n in resp.notes), resp.notes
    # never the definitions, never the free function total() nor a server hit twice
    assert not any(h.is_definition for h in resp.items)
    assert not any(h.path == "orders/reports.py" for h in resp.items)
    assert len({(h.path, h.line) for h in resp.items}) == len(resp.items)


def test_reading_a_property_is_a_possible_call(exact: ExactNavigator) -> None:
    resp = exact.callers("Box.size", deadline_s=DEADLINE)
    possible = {(h.path, h.line, h.symbol) for h in resp.items if h.provenance == ("possible",)}
    assert ("orders/dynamic.py", 21, "measure") in possible, resp.items


def test_free_function_callers_get_no_syntax_list(exact: ExactNavigator) -> None:
    resp = exact.callers("create_sales_order", deadline_s=DEADLINE)
    assert resp.complete, resp.reason
    assert resp.items and all(h.provenance == ("lsp",) for h in resp.items)
    assert resp.source == "lsp:basedpyright" and not resp.notes


def test_limit_cuts_the_syntax_list_first(exact: ExactNavigator) -> None:
    resp = exact.callers("Order.total", deadline_s=DEADLINE, limit=1)
    assert not resp.complete and "limit reached" in (resp.reason or "")
    assert [h.provenance for h in resp.items] == [("lsp",)]


def test_callers_from_references_equal_the_call_hierarchy(
    exact: ExactNavigator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """basedpyright's callers come from its references at call sites (its incoming calls walk every
    file of the program): for every function, method and class of the workspace, the same call
    sites as its call hierarchy asked directly, the oracle."""
    import navigator.exact as exact_module

    assert exact_module._callers_from_references("python")
    names = sorted(
        {
            r.definition.qualified_name
            for f in exact.root.rglob("*.py")
            for r in exact.table.symbols_in_file(f.relative_to(exact.root).as_posix())
            if r.definition.kind in ("function", "method", "class")
        }
    )
    assert len(names) > 10
    ours = {n: exact.callers(n, deadline_s=DEADLINE) for n in names}
    monkeypatch.setattr(exact_module, "_callers_from_references", lambda language: False)
    compared = 0
    for name in names:
        oracle = exact.callers(name, deadline_s=DEADLINE)
        sites = {(h.path, h.line, h.col) for h in oracle.items if h.provenance == ("lsp",)}
        mine = {(h.path, h.line, h.col) for h in ours[name].items if h.provenance == ("lsp",)}
        assert mine == sites, (name, sorted(mine ^ sites))
        compared += bool(sites)
    assert compared >= 5  # names that have callers at all
    # a property read on an instance runs it; `Box.size`, on the class, does not
    assert ("orders/dynamic.py", 26) in {
        (h.path, h.line) for h in ours["Box.size"].items if h.provenance == ("lsp",)
    }
    assert ("orders/dynamic.py", 25) not in {
        (h.path, h.line) for h in ours["Box.size"].items if h.provenance == ("lsp",)
    }


def test_a_method_nothing_declares_again_has_no_implementations_without_asking(exact: ExactNavigator) -> None:
    lonely = exact.implementations("Meter.lonely_method", deadline_s=DEADLINE)
    assert lonely.complete and not lonely.items, lonely
    assert any("the server was not asked" in n for n in lonely.notes), lonely.notes
    # an attribute assigned in a subclass overrides: the server is asked, and finds it
    overridden = exact.implementations("Meter.reading", deadline_s=DEADLINE)
    assert not any("the server was not asked" in n for n in overridden.notes), overridden.notes
    assert ("orders/dynamic.py", 39) in {
        (h.path, h.line) for h in overridden.items if h.provenance == ("lsp",)
    }, overridden.items


def test_a_class_no_class_names_as_a_base_has_no_implementations_without_asking(
    exact: ExactNavigator,
) -> None:
    leaf = exact.implementations("SmartMeter", deadline_s=DEADLINE)
    assert leaf.complete and not leaf.items, leaf
    assert any("the server was not asked" in n for n in leaf.notes), leaf.notes
    base = exact.implementations("Meter", deadline_s=DEADLINE)  # SmartMeter(Meter) names it
    assert not any("the server was not asked" in n for n in base.notes), base.notes
    assert ("orders/dynamic.py", 37) in {(h.path, h.line) for h in base.items if h.provenance == ("lsp",)}, (
        base.items
    )
