"""Index the installed source of real packages (nav's own dependencies) and check known symbols."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from navigator import Navigator


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, f"{name} is a dependency of nav"
    return Path(spec.origin).parent


@pytest.fixture(scope="module")
def click_nav(tmp_path_factory: pytest.TempPathFactory) -> Navigator:
    nav = Navigator(package_dir("click"), index_dir=tmp_path_factory.mktemp("click-index"))
    report = nav.index()
    assert report.files > 10 and not report.removed
    return nav


@pytest.mark.parametrize(
    ("name", "kind", "path"),
    [
        ("Command", "class", "core.py"),
        ("Command.invoke", "method", "core.py"),
        ("Context.invoke", "method", "core.py"),
        ("Group", "class", "core.py"),
        ("echo", "function", "utils.py"),
        ("ClickException", "class", "exceptions.py"),
        ("click.testing.CliRunner", "class", "testing.py"),
        ("Group.command", "method", "core.py"),
    ],
)
def test_known_click_symbols(click_nav: Navigator, name: str, kind: str, path: str) -> None:
    found = [(d.kind, d.path) for d in click_nav.definitions(name).items]
    assert (kind, path) in found, found


def test_real_corpus_signatures_and_docstrings(click_nav: Navigator) -> None:
    (echo,) = click_nav.definitions("click.utils.echo").items
    assert echo.signature.startswith("def echo(") and "file" in echo.signature
    assert echo.docstring and "Print a message" in echo.docstring
    outline = [e.symbol.qualified_name for e in click_nav.outline("exceptions.py").items]
    assert "ClickException.format_message" in outline and "UsageError" in outline


def test_sqlite_utils_database_table(tmp_path: Path) -> None:
    nav = Navigator(package_dir("sqlite_utils"), index_dir=tmp_path)
    nav.index()
    kinds = {(d.qualified_name, d.kind) for d in nav.definitions("Database.table").items}
    assert ("Database.table", "method") in kinds
    assert any(s.qualified_name == "Table" for s in nav.symbols("Table", kinds=("class",)).items)
