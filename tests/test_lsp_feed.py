"""Freshness through a file watcher: with the Navigator's per-query refresh off (the daemon's
mode), servers are told the changes ``Navigator.files_changed()`` reports instead of the
tree being walked before every request. Real basedpyright on the committed workspace."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_exact_servers import DEADLINE, WORKSPACES, require_server

from lsp.session import FileState, ServerSession
from navigator.api import Navigator

pytestmark = pytest.mark.slow

EXTRA = "from orders.service import create_sales_order\n\nX = create_sales_order('b', [])\n"


@pytest.fixture
def nav(tmp_path: Path) -> Iterator[Navigator]:
    require_server("python")
    root = tmp_path / "python"
    shutil.copytree(WORKSPACES / "python", root)
    n = Navigator(root)
    n.index()
    n.refresh = False  # what the daemon does while its watcher runs
    yield n
    n.close()


def lines(nav: Navigator, name: str) -> set[tuple[str, int]]:
    resp = nav.references(name, deadline_s=DEADLINE)
    assert resp.complete, resp.reason
    return {(h.path, h.line) for h in resp.items}


def test_reported_changes_reach_the_server_without_walking(
    nav: Navigator, monkeypatch: pytest.MonkeyPatch
) -> None:
    walks: list[Path] = []
    scan = ServerSession._scan

    def counting(self: ServerSession) -> dict[str, FileState]:
        walks.append(self.root)
        return scan(self)

    monkeypatch.setattr(ServerSession, "_scan", counting)
    before = lines(nav, "create_sales_order")
    started = len(walks)  # the start and the first sync walk once each
    assert started <= 2
    assert lines(nav, "create_sales_order") == before
    assert len(walks) == started, "a warm query walked the tree although changes are reported"

    extra = nav.root / "orders" / "extra.py"
    extra.write_text(EXTRA)
    nav.files_changed(["orders/extra.py"])
    assert ("orders/extra.py", 3) in lines(nav, "create_sales_order")
    assert len(walks) == started, "a reported path was found by walking"

    extra.unlink()
    nav.files_changed()  # "anything may have changed": one walk, in the background
    assert lines(nav, "create_sales_order") == before
    assert len(walks) == started + 1


def test_refresh_on_still_walks_before_each_request(nav: Navigator) -> None:
    nav.refresh = True
    before = lines(nav, "create_sales_order")
    (nav.root / "orders" / "extra.py").write_text(EXTRA)
    assert lines(nav, "create_sales_order") == before | {("orders/extra.py", 1), ("orders/extra.py", 3)}
