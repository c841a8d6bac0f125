"""`nav show`: one definition's source, trimmed to a line budget with the cut named (issue 19)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from navigator import Navigator
from navigator.errors import OutsideRootError, SymbolNotFoundError, UsageError
from navigator.frontends.cli import main
from navigator.show import line_count, trim

BODY = "\n".join(f"        step_{i} = {i}" for i in range(1, 41))
FILES = {
    "shop/orders.py": f'''\
"""Orders."""

RETRIES = 3


class Order:
    def total(self) -> int:
        """The sum of the lines."""
{BODY}
        return step_40


def create_sales_order(customer: str) -> Order:
    return Order()
''',
    "shop/other.py": "def create_sales_order():\n    return None\n",
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_trim_keeps_head_and_tail_and_names_the_cut() -> None:
    lines = [f"l{i}" for i in range(1, 101)]
    t = trim(lines, 10, 20)
    kept = t.text.splitlines()
    assert kept[0] == "l1" and kept[-1] == "l100"
    assert t.cut is not None and t.shown == 20
    first, last = t.cut
    assert last - first + 1 == 100 - 20  # every line is either shown or named as cut
    assert f"({first}-{last})" in t.text and first == 10 + 16
    assert trim(lines[:5], 1, 20).cut is None
    assert line_count("a\nb\n") == 2 and line_count("a\nb") == 2 and line_count("") == 0


def test_show_by_name_qualified_name_and_position(root: Path) -> None:
    with Navigator(root) as nav:
        whole = nav.show("Order.total", max_lines=1000)
        assert whole.complete and len(whole.items) == 1
        src = whole.items[0]
        text = (root / "shop/orders.py").read_text(encoding="utf-8").splitlines()
        assert src.text.splitlines() == text[src.start_line - 1 : src.end_line]
        assert src.text.startswith("    def total(self)") and src.text.endswith("return step_40")
        assert src.symbol == "Order.total" and src.cut is None

        cut = nav.show("Order.total", max_lines=10)
        assert not cut.complete and "max_lines" in (cut.reason or "")
        piece = cut.items[0]
        assert piece.cut is not None and len(piece.text.splitlines()) == 11  # 10 lines + the marker
        assert (piece.start_line, piece.end_line) == (src.start_line, src.end_line)

        at = nav.show(f"shop/orders.py:{src.start_line + 5}")  # inside the method: the method
        assert [s.symbol for s in at.items] == ["Order.total"]
        module = nav.show("shop/orders.py:3")
        assert module.items[0].text.splitlines()[0] == "RETRIES = 3"

        both = nav.show("create_sales_order", limit=1)
        assert len(both.items) == 1 and not both.complete and "1 more" in (both.reason or "")
        assert {s.path for s in nav.show("create_sales_order").items} == {"shop/orders.py", "shop/other.py"}


def test_show_refuses_bad_targets(root: Path) -> None:
    with Navigator(root) as nav:
        with pytest.raises(SymbolNotFoundError) as err:
            nav.show("create_sales_ordr")
        assert "create_sales_order" in str(err.value)
        with pytest.raises(UsageError, match="999"):
            nav.show("shop/orders.py:999")
        with pytest.raises(UsageError):
            nav.show("shop/orders.py:0")
        with pytest.raises(OutsideRootError):
            nav.show("../../etc/passwd:1")
        with pytest.raises(UsageError, match="max_lines"):
            nav.show("Order", max_lines=0)


def test_cli_and_daemon_show_the_same_source(root: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(main, ["-C", str(root), "--no-daemon", "show", "Order.total", "--json"])
    assert done.exit_code == 0, done.output
    local = json.loads(done.output)
    env = {k: v for k, v in __import__("os").environ.items() if k != "NAV_NO_DAEMON"}
    cmd = [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root)]
    try:
        remote = subprocess.run(
            [*cmd, "show", "Order.total", "--json"], env=env, capture_output=True, text=True, timeout=120
        )
        assert remote.returncode == 0, remote.stderr
        assert json.loads(remote.stdout)["items"] == local["items"]
        human = subprocess.run(
            [*cmd, "show", "Order.total", "--max-lines", "5"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert human.returncode == 0 and "lines cut" in human.stdout and "max_lines" in human.stderr
        missing = subprocess.run([*cmd, "show", "Nope"], env=env, capture_output=True, text=True, timeout=120)
        assert missing.returncode == 4, missing.stderr
    finally:
        subprocess.run([*cmd, "daemon", "stop"], env=env, capture_output=True, timeout=120)
