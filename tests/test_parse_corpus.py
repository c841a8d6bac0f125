"""The parser on real code: an installed package's source, with known symbols."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from semantic.parse import parse_source
from storage.model import ParsedFile


def _package_file(package: str, name: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(f"{package} is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / name
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    return path


@pytest.fixture(scope="module")
def db_py() -> tuple[str, ParsedFile]:
    path = _package_file("sqlite_utils", "db.py")
    text = path.read_text("utf-8")
    return text, parse_source("sqlite_utils/db.py", text, "python")


def test_known_symbols(db_py: tuple[str, ParsedFile]) -> None:
    _, pf = db_py
    assert pf.parsed and not pf.notes
    by_q = {s.qualified_name: s for s in pf.symbols}
    assert by_q["Database"].kind == "class"
    assert by_q["Table"].kind == "class"
    assert by_q["Table"].signature.startswith("class Table(")
    assert by_q["Database.table"].kind == "method"
    assert by_q["Database.table"].container == "Database"
    assert by_q["Database.table"].signature.startswith("def table(self")
    assert by_q["Table.insert"].kind == "method"
    assert by_q["Table.insert_all"].kind == "method"
    assert by_q["Database.__init__"].kind == "method"
    # module-level ALL_CAPS assignments are constants
    assert any(s.kind == "constant" and s.container is None for s in pf.symbols)
    # nothing nested is called a constant
    assert all(s.container is None for s in pf.symbols if s.kind == "constant")


def test_spans_and_names_agree_with_the_text(db_py: tuple[str, ParsedFile]) -> None:
    text, pf = db_py
    lines = text.split("\n")
    for s in pf.symbols:
        n = s.name_span
        assert lines[n.start_line - 1][n.start_col - 1 : n.end_col - 1] == s.name
    for r in pf.refs[:: max(1, len(pf.refs) // 500)]:
        assert lines[r.line - 1][r.col - 1 : r.end_col - 1] == r.name
    # `return Table(self, ...)` is a reference; the string annotation `-> "Table"` is not
    table_lines = {r.line for r in pf.refs if r.name == "Table"}
    call = next(i + 1 for i, line in enumerate(lines) if "return Table(self, table_name" in line)
    annotation = next(i + 1 for i, line in enumerate(lines) if "def table(self" in line and '"Table"' in line)
    assert call in table_lines
    assert annotation not in table_lines


def test_chunks_cover_the_file_within_budget(db_py: tuple[str, ParsedFile]) -> None:
    text, pf = db_py
    lines = text.split("\n")
    covered = [i for c in pf.chunks for i in range(c.start_line, c.end_line + 1)]
    assert covered == sorted(set(covered))
    assert {i + 1 for i, line in enumerate(lines) if line.strip()} <= set(covered)
    assert len(pf.chunks) > 20
    insert_all = next(s for s in pf.symbols if s.qualified_name == "Table.insert_all")
    chunk_symbols = {c.symbol for c in pf.chunks}
    assert insert_all.qualified_name in chunk_symbols
    assert "Table" in chunk_symbols
