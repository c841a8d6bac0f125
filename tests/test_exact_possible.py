"""Possible references: where the server answers but cannot resolve a use (an untyped
receiver), ``refs``, ``callers`` and ``impl`` list the same name in code after the precise
answer, with provenance ``possible``, counted, and the answer is not complete.

Real basedpyright on a copy of the committed Python workspace, plus a file of calls whose
receivers have no type.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_exact_servers import DEADLINE, WORKSPACES, require_server

from navigator.api import Navigator
from navigator.exact import ExactNavigator, NavigatorTable
from navigator.frontends.textout import render_response

pytestmark = pytest.mark.slow

DYNAMIC = '''"""Uses the server cannot resolve: the receivers have no type."""


def show(thing):
    return thing.total()  # "thing.total" in a string is no use


def later(thing):
    pending = thing.total
    return pending


class Basket:
    def total(self):  # same name, no relation to Priced the server can see
        return 0


# module paths, not attribute uses (issue 19: `from urllib.request import` for Session.request)
from email.total import (  # noqa: E402
    thing,
)
import json.total  # noqa: E402
import xml.total as alias  # noqa: E402
'''


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_server("python")
    dest = tmp_path_factory.mktemp("possible") / "python"
    shutil.copytree(WORKSPACES / "python", dest)
    (dest / "orders" / "dynamic.py").write_text(DYNAMIC)
    return dest


@pytest.fixture(scope="module")
def exact(root: Path) -> Iterator[ExactNavigator]:
    nav = Navigator(root)
    nav.index()
    ex = ExactNavigator(nav.root, NavigatorTable(nav))
    yield ex
    ex.close()
    nav.close()


def _split(items: tuple) -> tuple[list, list]:  # type: ignore[type-arg]
    precise = [h for h in items if h.provenance == ("lsp",)]
    possible = [h for h in items if h.provenance == ("possible",)]
    assert len(precise) + len(possible) == len(items)
    assert list(items) == precise + possible, "possible hits come after the precise ones"
    return precise, possible


def test_references_list_the_uses_the_server_could_not_resolve(exact: ExactNavigator) -> None:
    resp = exact.references("Order.total", deadline_s=DEADLINE)
    precise, possible = _split(resp.items)
    assert ("orders/app.py", 14) in {(h.path, h.line) for h in precise}
    assert {(h.path, h.line, h.col, h.kind) for h in possible} == {
        ("orders/dynamic.py", 5, 18, "possible call"),
        ("orders/dynamic.py", 9, 21, "possible reference"),
    }
    assert not resp.complete
    assert resp.reason == "2 possible references the server could not resolve"
    # the free function total() (another symbol, resolved by the server) and the other
    # class's definition are not uses of Order.total; nothing is listed twice
    assert not any(h.path == "orders/reports.py" for h in possible)
    assert not any(h.is_definition for h in possible)
    assert len({(h.path, h.line, h.col) for h in resp.items}) == len(resp.items)


def test_a_fully_resolved_answer_stays_complete(exact: ExactNavigator) -> None:
    resp = exact.references("create_sales_order", deadline_s=DEADLINE)
    precise, possible = _split(resp.items)
    assert resp.complete, resp.reason
    assert not possible
    # the import lines and the definition are the server's, once; never the comment or the string
    lines = {(h.path, h.line) for h in precise}
    assert {("orders/app.py", 5), ("orders/app.py", 12), ("orders/service.py", 6)} <= lines
    assert ("orders/app.py", 7) not in lines and ("orders/app.py", 8) not in lines


def test_implementations_list_same_named_methods_as_possible(exact: ExactNavigator) -> None:
    resp = exact.implementations("Priced.total", deadline_s=DEADLINE)
    precise, possible = _split(resp.items)
    assert ("orders/dynamic.py", 14) in {(h.path, h.line) for h in possible}
    assert all(h.kind == "possible implementation" for h in possible)
    assert not any(h.path == "orders/reports.py" for h in resp.items)  # a function, not a method
    assert not resp.complete and resp.reason == "1 possible implementation the server could not resolve"


def test_mcp_text_marks_and_counts_possible_hits(exact: ExactNavigator) -> None:
    text = render_response(exact.references("Order.total", deadline_s=DEADLINE))
    assert text.count("[possible]") == 2
    assert "(incomplete: 2 possible references the server could not resolve)" in text


def test_cli_json_and_human_output(root: Path, exact: ExactNavigator) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}

    def nav(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "--no-daemon", *args],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip

    out = nav("refs", "Order.total", "--json")
    data = json.loads(out.stdout)
    assert data["complete"] is False
    assert data["reason"] == "2 possible references the server could not resolve"
    possible = [h for h in data["items"] if "possible" in h["provenance"]]
    assert len(possible) == 2 and {h["path"] for h in possible} == {"orders/dynamic.py"}
    human = nav("refs", "Order.total")
    assert human.stdout.count("[possible]") == 2, human.stdout
    assert "2 possible references the server could not resolve" in human.stderr


JS_DYNAMIC = """// Uses the server cannot resolve: the receivers have no type.
export function show(thing) {
  return thing.total(); // "thing.total" in a string is no use
}
"""


def test_javascript_gets_the_same_possible_references(tmp_path_factory: pytest.TempPathFactory) -> None:
    require_server("javascript")
    root = tmp_path_factory.mktemp("possible-js") / "javascript"
    shutil.copytree(WORKSPACES / "javascript", root)
    (root / "src" / "dynamic.js").write_text(JS_DYNAMIC)
    with Navigator(root) as nav:
        nav.index()
        resp = nav.references("Order.total", deadline_s=DEADLINE)
    precise, possible = _split(resp.items)
    assert ("src/app.js", 10) in {(h.path, h.line) for h in precise}
    assert {(h.path, h.line, h.col, h.kind) for h in possible} == {("src/dynamic.js", 3, 16, "possible call")}
    assert not resp.complete and resp.reason == "1 possible reference the server could not resolve"
