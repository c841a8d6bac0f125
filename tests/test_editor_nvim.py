"""A real editor drives `nav lsp`: headless Neovim (Debian's package; 0.7.2 on bookworm) runs
tests/editor/nvim_session.lua — open, edit without saving, definition, references,
documentSymbol, callHierarchy — and writes what the server answered to a file checked here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

WORKSPACE = Path(__file__).parent / "workspaces" / "python"
SCRIPT = Path(__file__).parent / "editor" / "nvim_session.lua"
SHIFT = 4  # lines the session inserts above everything

pytestmark = pytest.mark.skipif(
    shutil.which("nvim") is None, reason="nvim is not installed (scripts/install-servers.sh: apt-get install neovim)"
)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("nvim")
    root = base / "ws"
    shutil.copytree(WORKSPACE, root)
    out = base / "answers.json"
    env = {
        **os.environ,
        "NAV_NVIM_ROOT": str(root),
        "NAV_NVIM_OUT": str(out),
        "NAV_NVIM_CMD": json.dumps([sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"]),
        "HOME": str(base),  # no user configuration, no shada in the real home
        "XDG_STATE_HOME": str(base / "state"),
        "XDG_DATA_HOME": str(base / "data"),
    }
    subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {SCRIPT}"],
        env=env, cwd=root, timeout=240, check=False, capture_output=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.exists(), "the Neovim session wrote no answers"
    answers: dict[str, Any] = json.loads(out.read_text())
    assert "lua_error" not in answers, answers.get("lua_error")
    answers["root"] = root
    return answers


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines()) if needle in line)


def test_edit_is_unsaved(session: dict[str, Any]) -> None:
    assert session["modified"] is True and session["disk_unchanged"] is True
    root: Path = session["root"]
    assert session["call_line"] == _line_of(root / "orders/app.py", "order = create_sales_order(") + SHIFT


def test_definition_from_the_shifted_call(session: dict[str, Any]) -> None:
    root: Path = session["root"]
    result = session["definition"]["result"]
    target = _line_of(root / "orders/service.py", "def create_sales_order")
    assert any(
        loc.get("uri", loc.get("targetUri")) == (root / "orders/service.py").as_uri()
        and (loc.get("range") or loc["targetSelectionRange"])["start"]["line"] == target
        for loc in result
    ), result


def test_references_see_the_buffer(session: dict[str, Any]) -> None:
    root: Path = session["root"]
    app = (root / "orders/app.py").as_uri()
    lines = {r["range"]["start"]["line"] for r in session["references"]["result"] if r["uri"] == app}
    assert session["call_line"] in lines and _line_of(root / "orders/app.py", "from orders.service import") + SHIFT in lines


def test_document_symbols_from_the_buffer(session: dict[str, Any]) -> None:
    root: Path = session["root"]
    by_name = {s["name"]: s for s in session["documentSymbol"]["result"]}
    assert by_name["helper"]["selectionRange"]["start"]["line"] == 0
    assert by_name["main"]["selectionRange"]["start"]["line"] == _line_of(root / "orders/app.py", "def main") + SHIFT


def test_call_hierarchy_through_the_editor(session: dict[str, Any]) -> None:
    root: Path = session["root"]
    assert session["prepareCallHierarchy"]["result"][0]["name"] == "create_sales_order"
    calls = session["incomingCalls"]["result"]
    from_main = [c for c in calls if c["from"]["name"] == "main"]
    assert from_main and from_main[0]["from"]["uri"] == (root / "orders/app.py").as_uri()
    assert any(r["start"]["line"] == session["call_line"] for r in from_main[0]["fromRanges"])
