"""Pure parts of `nav lsp`: the buffer store, its parse cache, the disk→buffer line map, and
the symbol table with open buffers laid over the index (a fake index: fast unit tests; the
end-to-end tests in tests/test_editor_*.py run the real thing)."""

from __future__ import annotations

from pathlib import Path

from navigator.frontends.editor_buffers import Buffers, BufferTable, LineMap
from storage.db import RefRow, SymbolRow
from storage.model import Span, SymbolDef


def _row(path: str, name: str, line: int) -> SymbolRow:
    span = Span(line, 1, line + 1, 1)
    return SymbolRow(1, SymbolDef(name, name, "function", path, "python", span, Span(line, 5, line, 5 + len(name)), ""))


class FakeIndex:
    def resolve(self, name: str) -> list[SymbolRow]:
        return [_row("a.py", "old", 1), _row("b.py", "old", 3)] if name == "old" else []

    def suggestions(self, name: str) -> list[str]:
        return []

    def symbols_in_file(self, path: str) -> list[SymbolRow]:
        return [_row(path, "old", 1)]

    def refs_by_name(self, name: str) -> list[RefRow]:
        return [RefRow("a.py", name, 9, 1, 4), RefRow("b.py", name, 2, 1, 4)]

    def file_language(self, path: str) -> str | None:
        return "python"


def test_parse_is_cached_per_version(tmp_path: Path) -> None:
    buffers = Buffers(tmp_path)
    buffers.open("a.py", "def one():\n    pass\n", 1)
    assert [s.name for s in buffers.parsed("a.py").symbols] == ["one"]  # type: ignore[union-attr]
    buffers.parsed("a.py")
    assert buffers.parses == 1
    buffers.change("a.py", "def two():\n    pass\n", 2)
    assert [s.name for s in buffers.parsed("a.py").symbols] == ["two"]  # type: ignore[union-attr]
    assert buffers.parses == 2
    buffers.close("a.py")
    assert buffers.parsed("a.py") is None and buffers.text_of("a.py") is None


def test_buffer_table_lays_open_files_over_the_index(tmp_path: Path) -> None:
    buffers = Buffers(tmp_path)
    table = BufferTable(FakeIndex(), buffers)
    buffers.open("a.py", "\n\ndef old():\n    return old\n", 1)
    rows = table.resolve("old")
    assert sorted((r.definition.path, r.definition.name_span.start_line) for r in rows) == [("a.py", 3), ("b.py", 3)]
    assert [r.definition.name_span.start_line for r in table.symbols_in_file("a.py")] == [3]
    assert [r.definition.name_span.start_line for r in table.symbols_in_file("b.py")] == [1]  # not open: the index
    refs = sorted((r.path, r.line) for r in table.refs_by_name("old"))
    assert ("a.py", 9) not in refs and ("a.py", 4) in refs and ("b.py", 2) in refs
    assert table.text_of("a.py") is not None and table.text_of("b.py") is None
    buffers.close("a.py")
    assert sorted(r.definition.path for r in table.resolve("old")) == ["a.py", "b.py"]
    assert [r.definition.name_span.start_line for r in table.symbols_in_file("a.py")] == [1]


def test_line_map_follows_inserted_and_edited_lines() -> None:
    disk = "a\nb\nc\nd\n"
    buffer = "new\na\nb\nCHANGED\nd\n"
    m = LineMap(disk, buffer)
    assert [m.line(n) for n in (1, 2, 3, 4)] == [2, 3, None, 5]
