"""`nav refs` / `nav doctor` in-process with click's CliRunner (real basedpyright)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from navigator.frontends.cli import main

WORKSPACES = Path(__file__).parent / "workspaces"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "python"
    shutil.copytree(WORKSPACES / "python", root)
    return root


@pytest.mark.slow
def test_refs_json_and_text(repo: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--no-daemon", "-C", str(repo), "refs", "create_sales_order", "--json", "--deadline", "90"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["complete"] is True and data["source"] == "lsp:basedpyright"
    places = {(h["path"], h["line"]) for h in data["items"]}
    assert ("orders/app.py", 12) in places
    assert any(h["is_definition"] and h["path"] == "orders/service.py" for h in data["items"])
    text = runner.invoke(main, ["--no-daemon", "-C", str(repo), "refs", "Order.total"])
    assert text.exit_code == 0 and "orders/app.py:14:18" in text.stdout


def test_unknown_name_exits_nonzero_naming_it(repo: Path) -> None:
    result = CliRunner().invoke(main, ["--no-daemon", "-C", str(repo), "refs", "create_sales_ordr"])
    assert result.exit_code == 4
    assert "create_sales_ordr" in result.stderr and "create_sales_order" in result.stderr


def test_position_outside_file_is_a_usage_error(repo: Path) -> None:
    result = CliRunner().invoke(main, ["--no-daemon", "-C", str(repo), "refs", "orders/app.py:999:1"])
    assert result.exit_code == 2 and "outside" in result.stderr


def test_doctor_lists_languages() -> None:
    result = CliRunner().invoke(main, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    langs = {a["language"]: a for a in json.loads(result.stdout)["items"]}
    assert langs["rust"]["found"] is False and "rust-analyzer" in langs["rust"]["reason"]
    assert langs["java"]["server"] == "jdtls"
    assert langs["python"]["server"] in ("basedpyright", "jedi-language-server")
