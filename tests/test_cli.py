"""The CLI in-process (click's CliRunner): output shapes, --json, exit codes, and docs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from navigator.frontends.cli import main

FILES = {
    "orders.py": """\
        class Order:
            def total(self) -> int:
                return 0


        def createSalesOrder(customer: str) -> Order:
            return Order()
        """,
    "billing.py": """\
        from orders import createSalesOrder


        def total(values):
            return sum(values)
        """,
}


@pytest.fixture
def root(make_repo: Callable[[dict[str, str]], Path]) -> Path:
    return make_repo(FILES)


def nav(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_index_reports_changes_then_nothing(root: Path) -> None:
    code, out, _ = nav(root, "index")
    assert code == 0
    assert "+ billing.py" in out and "+ orders.py" in out and "2 added, 0 updated, 0 removed" in out
    (root / "orders.py").write_text((root / "orders.py").read_text() + "\n\ndef extra():\n    pass\n")
    code, out, _ = nav(root, "index")
    assert "~ orders.py" in out and "0 added, 1 updated, 0 removed, 1 unchanged" in out


def test_index_json(root: Path) -> None:
    code, out, _ = nav(root, "index", "--json")
    data = json.loads(out)
    assert code == 0 and data["added"] == ["billing.py", "orders.py"] and data["symbols"] >= 4


def test_def_human_output(root: Path) -> None:
    code, out, _ = nav(root, "def", "createSalesOrder")
    assert code == 0
    assert re.fullmatch(
        r"orders\.py:6:5  function\s+createSalesOrder  def createSalesOrder\(customer: str\) -> Order\n", out
    )


def test_def_ambiguous_lists_all_and_json_is_the_api_type(root: Path) -> None:
    code, out, err = nav(root, "def", "total")
    assert code == 0 and out.count("\n") == 2 and "2 definitions" in err
    code, out, _ = nav(root, "def", "Order.total", "--json")
    data = json.loads(out)
    assert data["complete"] is True and data["items"][0]["qualified_name"] == "Order.total"
    assert set(data["items"][0]) >= {"path", "line", "col", "kind", "signature", "language"}


def test_unknown_name_exits_4_and_suggests(root: Path) -> None:
    code, out, err = nav(root, "def", "createSalesOrdr")
    assert code == 4 and out == ""
    assert "no symbol named `createSalesOrdr`; did you mean `createSalesOrder` (orders.py:6)" in err


def test_symbols_and_outline(root: Path) -> None:
    code, out, _ = nav(root, "symbols", "sales")
    assert code == 0 and out.startswith("orders.py:6:5")
    code, _, err = nav(root, "symbols", "zzzzzz")
    assert code == 1 and "no symbols match" in err
    code, out, _ = nav(root, "outline", "orders.py")
    lines = out.splitlines()
    assert code == 0 and lines[1].startswith("  orders.py:2:9")  # the method is indented under its class
    code, _, err = nav(root, "outline", "missing.py")
    assert code == 4 and "no file `missing.py`" in err


def test_status(root: Path) -> None:
    code, out, _ = nav(root, "status")
    assert code == 0 and "not indexed" in out
    nav(root, "index")
    code, out, _ = nav(root, "status", "--json")
    data = json.loads(out)
    assert data["files"] == 2 and data["stale_files"] == 0 and data["last_run_complete"]


def test_bad_option_is_a_usage_error(root: Path) -> None:
    code, _, err = nav(root, "symbols", "x", "--limit", "0")
    assert code == 2 and "0 is not in the range" in err


def test_every_command_is_documented_in_the_readme() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    for name in main.commands:
        assert f"nav {name}" in readme, f"`nav {name}` is not documented in README.md"


def test_a_huge_answer_shrinks_to_counts_per_file(make_repo: Callable[[dict[str, str]], Path]) -> None:
    files = {"lib.py": "def used():\n    pass\n"}
    for i in range(40):
        files[f"m{i}.py"] = "from lib import used\n" + "used()\n" * 5
    root = make_repo(files)
    code, out, err = nav(root, "refs", "used", "--deadline", "0.01")  # syntax fallback is enough here
    assert code == 0
    assert out.splitlines()[0].startswith("241 refs in 41 files (counts per file")
    assert "     6  m0.py" in out
    code, out, _ = nav(root, "refs", "used", "--deadline", "0.01", "-n", "3")
    assert len(out.splitlines()) == 3


def test_a_model_that_cannot_be_loaded_is_exit_8_from_every_front_end(
    make_repo: Callable[[dict[str, str]], Path],
) -> None:
    """EmbedError escaped the error tree: "internal error ... please report it", exit 1 (issue 17 §5)."""
    import os
    import subprocess
    import sys

    import anyio
    from mcp import Client

    from navigator import Navigator
    from navigator.errors import ModelError
    from navigator.frontends.mcp_server import build_server

    root = make_repo({"a.py": "def hello():\n    return 1\n", ".nav.toml": '[search]\nmodel = "/no/such/model"\n'})
    code, _, err = nav(root, "index", "--embed")
    assert code == 8 and "/no/such/model" in err and "internal error" not in err, err
    with Navigator(root) as api, pytest.raises(ModelError, match="/no/such/model"):
        api.embed()
    env = {**os.environ, "NAV_DAEMON_NO_WARM": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("NAV_NO_DAEMON", None)
    cmd = [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root)]
    try:  # through the daemon: the error crosses the socket as what it is, not a server error
        out = subprocess.run([*cmd, "index", "--embed"], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 8 and "/no/such/model" in out.stderr, out.stderr
    finally:
        subprocess.run([*cmd, "daemon", "stop"], capture_output=True, timeout=60, env=env)

    async def via_mcp() -> tuple[bool, str]:
        class Embedding:  # the MCP tools over a Navigator whose search must embed
            def __init__(self, nav: Navigator) -> None:
                self.nav = nav

            def __getattr__(self, name: str) -> object:
                return getattr(self.nav, name)

            def query(self, text: str, **kw: object) -> object:
                self.nav.embed()
                return self.nav.query(text, **kw)

        async with Client(build_server(Embedding(Navigator(root)))) as client:
            result = await client.call_tool("find", {"query": "where do we say hello"})
            return bool(result.is_error), "\n".join(getattr(c, "text", "") for c in result.content)

    is_error, text = anyio.run(via_mcp)
    assert is_error and "/no/such/model" in text and "internal error" not in text, text
    # over JSON-RPC (daemon, nav lsp) the error's type is named by nav's tree, so the client
    # rebuilds a ModelError, not a generic server error
    from navigator.frontends.client import _raise_remote
    from navigator.frontends.wire import error_type
    from semantic.embed import EmbedError

    assert error_type(EmbedError("x")) == "ModelError"
    with pytest.raises(ModelError):
        _raise_remote({"code": -32000, "message": "m", "data": {"type": error_type(EmbedError("m"))}})
