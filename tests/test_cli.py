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
