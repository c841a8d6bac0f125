"""Exact navigation against REAL language servers on the committed orders workspaces.

One warm server per language per module (module-scoped fixtures). A language whose
server is not installed FAILS here (CI installs them: scripts/install-servers.sh);
set NAV_ALLOW_MISSING_SERVERS=1 to skip such languages locally.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from lsp.registry import available_definition
from navigator.api import Navigator
from navigator.exact import ExactNavigator, NavigatorTable
from navigator.results import Hit

pytestmark = pytest.mark.slow

WORKSPACES = Path(__file__).parent / "workspaces"
DEADLINE = 90.0  # cold starts on a loaded 2-core machine; warm answers take milliseconds


@dataclass(frozen=True)
class Case:
    language: str
    func: str
    """A free function defined in one file and called from another."""
    def_file: str
    caller_file: str
    method: str
    """A method sharing its name with an unrelated free function ``free``."""
    free: str


CASES = {
    "python": Case("python", "create_sales_order", "orders/service.py", "orders/app.py", "Order.total", "total"),
    "typescript": Case("typescript", "createSalesOrder", "src/service.ts", "src/app.ts", "Order.total", "total"),
    "javascript": Case("javascript", "createSalesOrder", "src/service.js", "src/app.js", "Order.total", "total"),
    "go": Case("go", "CreateSalesOrder", "service.go", "cmd/app/main.go", "Order.Total", "Total"),
    "c": Case("c", "create_sales_order", "orders.c", "main.c", "order_total", "total"),
    "cpp": Case("cpp", "createSalesOrder", "orders.cpp", "main.cpp", "Order.total", "total"),
}


def require_server(language: str) -> None:
    if available_definition(language) is None:
        message = f"no language server for {language} is installed (run scripts/install-servers.sh)"
        if os.environ.get("NAV_ALLOW_MISSING_SERVERS") == "1":
            pytest.skip(message)
        pytest.fail(message)


@dataclass
class Env:
    case: Case
    root: Path
    nav: Navigator
    exact: ExactNavigator


def open_env(language: str, tmp: Path) -> Env:
    root = tmp / language
    shutil.copytree(WORKSPACES / language, root)
    nav = Navigator(root)
    nav.index()
    return Env(CASES.get(language) or CASES["python"], root, nav, ExactNavigator(nav.root, NavigatorTable(nav)))


def close_env(env: Env) -> None:
    env.exact.close()
    env.nav.close()


@pytest.fixture(scope="module", params=sorted(CASES))
def env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    require_server(request.param)
    e = open_env(request.param, tmp_path_factory.mktemp("exact"))
    yield e
    close_env(e)


def places(hits: tuple[Hit, ...]) -> set[tuple[str, int]]:
    return {(h.path, h.line) for h in hits}


def annotated_line(root: Path, path: str, name: str) -> tuple[int, int]:
    """The first line of ``path`` annotated ``ref: ... name`` that calls ``name``, and its column."""
    for number, text in enumerate((root / path).read_text().splitlines(), 1):
        m = re.search(r"\bref:([^\n]*)", text)
        call = re.search(rf"\b{re.escape(name)}\(", text)
        if m and call and name in m.group(1).split() and "noref" not in text.split("ref:")[0]:
            return number, call.start() + 1
    raise AssertionError(f"no `ref: {name}` in {path}")


def test_definition_across_files(env: Env) -> None:
    line, col = annotated_line(env.root, env.case.caller_file, env.case.func)
    resp = env.exact.definition(f"{env.case.caller_file}:{line}:{col}", deadline_s=DEADLINE)
    assert resp.complete, resp.reason
    assert any(h.path == env.case.def_file and h.is_definition and h.provenance == ("lsp",) for h in resp.items), resp


def test_references_across_files(env: Env) -> None:
    resp = env.exact.references(env.case.func, deadline_s=DEADLINE)
    assert resp.complete, resp.reason
    assert resp.source and resp.source.startswith("lsp:")
    line, _ = annotated_line(env.root, env.case.caller_file, env.case.func)
    assert (env.case.caller_file, line) in places(resp.items)
    definitions = [h for h in resp.items if h.is_definition]
    assert any(h.path == env.case.def_file for h in definitions)
    assert all(h.provenance == ("lsp",) and h.code for h in resp.items)
    caller = next(h for h in resp.items if (h.path, h.line) == (env.case.caller_file, line))
    assert caller.symbol == "main"


def test_precision_method_versus_free_function(env: Env) -> None:
    method = env.exact.references(env.case.method, deadline_s=DEADLINE)
    free_rows = [r for r in env.nav.resolve(env.case.free) if r.definition.kind == "function"]
    assert free_rows, f"no free function {env.case.free}"
    d = free_rows[0].definition
    free = env.exact.references(f"{d.path}:{d.name_span.start_line}:{d.name_span.start_col}", deadline_s=DEADLINE)
    assert method.complete and free.complete, (method.reason, free.reason)
    assert method.items and free.items
    spots = {(h.path, h.line, h.col) for h in method.items}
    assert not spots & {(h.path, h.line, h.col) for h in free.items}, (method.items, free.items)


def test_callers(env: Env) -> None:
    resp = env.exact.callers(env.case.func, deadline_s=DEADLINE)
    assert resp.complete, resp.reason
    line, _ = annotated_line(env.root, env.case.caller_file, env.case.func)
    assert (env.case.caller_file, line) in places(resp.items)
    assert all(not h.is_definition for h in resp.items)


def test_hover(env: Env) -> None:
    resp = env.exact.hover(env.case.func, deadline_s=DEADLINE)
    assert resp.items and env.case.func in resp.items[0].text


# -- one language without a server: the syntax fallback -----------------------------------


def test_syntax_fallback_for_a_language_without_server(tmp_path: Path) -> None:
    e = open_env("rust", tmp_path)
    try:
        resp = e.exact.references("create_sales_order", deadline_s=10)
        assert not resp.complete and "approximate" in (resp.reason or "")
        assert resp.source == "syntax"
        assert resp.items and all(h.provenance == ("syntax",) for h in resp.items)
        assert any(h.is_definition for h in resp.items)
    finally:
        close_env(e)


def test_a_definition_hit_names_the_definition_even_when_it_shares_its_line(tmp_path: Path) -> None:
    """`data class Money(val cents: Cents, var currency: String …)`: the hit at `currency` is
    Money.currency, not the first definition whose span holds the line (Money.cents)."""
    e = open_env("kotlin", tmp_path)
    try:
        resp = e.exact.references("Money.currency", deadline_s=10)
        definition = next(h for h in resp.items if h.is_definition)
        assert (definition.path, definition.symbol, definition.kind) == ("src/Kinds.kt", "Money.currency", "field")
    finally:
        close_env(e)


# -- faults and freshness, on Python (the fastest server to start) ------------------------


@pytest.fixture(scope="module")
def py(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    require_server("python")
    e = open_env("python", tmp_path_factory.mktemp("faults"))
    yield e
    close_env(e)


def test_freshness_edit_and_delete(py: Env) -> None:
    first = py.exact.references("create_sales_order", deadline_s=DEADLINE)
    assert first.complete
    extra = py.root / "orders" / "extra.py"
    extra.write_text("from orders.service import create_sales_order\n\nX = create_sales_order('b', [])\n")
    second = py.exact.references("create_sales_order", deadline_s=DEADLINE)
    assert ("orders/extra.py", 3) in places(second.items)
    extra.unlink()
    third = py.exact.references("create_sales_order", deadline_s=DEADLINE)
    assert not any(h.path == "orders/extra.py" for h in third.items)
    assert places(third.items) == places(first.items)


def test_killed_server_is_restarted_by_the_next_request(py: Env) -> None:
    assert py.exact.references("Order.total", deadline_s=DEADLINE).complete
    info = py.exact.pool.session_info(py.root, "python")
    assert info and info["pid"]
    os.killpg(info["pid"], 9)
    resp = py.exact.references("Order.total", deadline_s=DEADLINE)
    assert resp.complete, resp.reason
    assert resp.source == "lsp:basedpyright"
    after = py.exact.pool.session_info(py.root, "python")
    assert after and after["pid"] != info["pid"]


def test_tiny_deadline_answers_incomplete_not_hang(tmp_path: Path) -> None:
    require_server("python")
    e = open_env("python", tmp_path)  # cold: no server started yet
    try:
        resp = e.exact.references("create_sales_order", deadline_s=0.05)
        assert not resp.complete
        assert "deadline" in (resp.reason or "") or "indexing" in (resp.reason or "")
        assert all(h.provenance == ("syntax",) for h in resp.items)
        assert resp.elapsed_ms < 5000
    finally:
        close_env(e)
