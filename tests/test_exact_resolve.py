"""Name → position resolution and the exact service's pure parts, over a fake symbol table."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from lsp.pool import Location, LspAnswer, Operation, Position
from navigator.exact import ExactNavigator, enclosing_symbol, parse_position, resolve_targets
from storage.db import RefRow, SymbolRow
from storage.errors import SymbolNotFoundError, UsageError
from storage.model import Span, SymbolDef


def row(i: int, name: str, qn: str, kind: str, path: str, start: int, end: int, col: int = 5) -> SymbolRow:
    return SymbolRow(
        id=i,
        definition=SymbolDef(
            name=name, qualified_name=qn, kind=kind, path=path, language="python",
            span=Span(start, 1, end, 1), name_span=Span(start, col, start, col + len(name)), signature="",
        ),
    )  # fmt: skip


ROWS = [
    row(1, "Order", "Order", "class", "orders/models.py", 1, 9, col=7),
    row(2, "total", "Order.total", "method", "orders/models.py", 5, 6, col=9),
    row(3, "total", "total", "function", "orders/reports.py", 1, 2),
]


class FakeTable:
    def resolve(self, name: str) -> list[SymbolRow]:
        if "." in name:
            return [r for r in ROWS if r.definition.qualified_name.endswith(name)]
        return [r for r in ROWS if r.definition.name == name]

    def suggestions(self, name: str) -> list[str]:
        return ["`total` (orders/reports.py:1)"] if name.startswith("tot") else []

    def symbols_in_file(self, path: str) -> list[SymbolRow]:
        return [r for r in ROWS if r.definition.path == path]

    def refs_by_name(self, name: str) -> list[RefRow]:
        return [RefRow("orders/reports.py", "total", 1, 5, 10), RefRow("orders/app.py", "total", 2, 7, 12)]

    def file_language(self, path: str) -> str | None:
        return "python"


class NoServerPool:
    """Stands in for ServerPool (the exact leg's :class:`LanguageServers`): answers like a
    language with no server installed."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Operation, list[Position]]] = []
        self.changed: list[list[str | Path] | None] = []

    def query(
        self, root: Path, language: str, op: Operation, positions: Sequence[Position], *, deadline_s: float,
        rescan: bool = True,
    ) -> LspAnswer:
        self.calls.append((language, op, list(positions)))
        return LspAnswer(complete=False, reason=f"no server for {language} installed", answered=False)

    def files_changed(self, root: Path, paths: Iterable[str | Path] | None = None) -> None:
        self.changed.append(None if paths is None else list(paths))

    def close(self) -> None:
        pass


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "orders").mkdir()
    (tmp_path / "orders/models.py").write_text(
        "class Order:\n    x = 1\n\n\n    def total(self):\n        return 1\n\n\n\n"
    )
    (tmp_path / "orders/reports.py").write_text("def total(v):\n    return v\n")
    (tmp_path / "orders/app.py").write_text("import x\nprint(total([1]))  # total\n")
    return tmp_path


def test_plain_name_gives_every_definition(root: Path) -> None:
    targets = resolve_targets("total", FakeTable(), root)
    assert [(t.path, t.line, t.col, t.qualified_name) for t in targets] == [
        ("orders/models.py", 5, 9, "Order.total"),
        ("orders/reports.py", 1, 5, "total"),
    ]


def test_qualified_name_is_precise(root: Path) -> None:
    assert [t.qualified_name for t in resolve_targets("Order.total", FakeTable(), root)] == ["Order.total"]


def test_unknown_name_names_it_with_suggestions(root: Path) -> None:
    with pytest.raises(SymbolNotFoundError) as info:
        resolve_targets("totl", FakeTable(), root)
    assert "`totl`" in str(info.value) and "orders/reports.py:1" in str(info.value)


def test_explicit_position(root: Path) -> None:
    [t] = resolve_targets("orders/app.py:2:7", FakeTable(), root)
    assert (t.path, t.line, t.col, t.name, t.language) == ("orders/app.py", 2, 7, "total", "python")


@pytest.mark.parametrize(
    "query,message",
    [("orders/app.py:99:1", "line 99 is outside"), ("orders/app.py:2:500", "column 500 is outside"),
     ("orders/nope.py:1:1", "no file")],
)  # fmt: skip
def test_bad_positions_are_clear_errors(root: Path, query: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve_targets(query, FakeTable(), root)


def test_parse_position() -> None:
    assert parse_position("a/b.py:3:4") == ("a/b.py", 3, 4)
    assert parse_position("a/b.py:3") == ("a/b.py", 3, None)
    assert parse_position("Order.total") is None


def test_enclosing_symbol_is_innermost() -> None:
    found = enclosing_symbol(ROWS, 5)
    assert found is not None and found.definition.qualified_name == "Order.total"
    assert enclosing_symbol(ROWS, 50) is None


def test_no_server_falls_back_to_syntax_marked_approximate(root: Path) -> None:
    pool = NoServerPool()
    exact = ExactNavigator(root, FakeTable(), pool=pool)
    resp = exact.references("total", deadline_s=5)
    assert not resp.complete and "no server" in (resp.reason or "") and "approximate" in (resp.reason or "")
    assert resp.source == "syntax"
    assert {h.provenance for h in resp.items} == {("syntax",)}
    assert [(h.path, h.line, h.is_definition) for h in resp.items] == [
        ("orders/app.py", 2, False),
        ("orders/reports.py", 1, True),
    ]
    # the server was asked at each definition's name, in LSP coordinates
    assert [(p.line, p.character) for p in pool.calls[0][2]] == [(4, 8), (0, 4)]


def test_changed_files_reach_the_pool_for_this_root(root: Path) -> None:
    pool = NoServerPool()
    with ExactNavigator(root, FakeTable(), pool=pool) as exact:
        exact.files_changed(["orders/app.py"])
        exact.files_changed(None)
    assert pool.changed == [["orders/app.py"], None]


def test_limit_is_reported(root: Path) -> None:
    exact = ExactNavigator(root, FakeTable(), pool=NoServerPool())
    resp = exact.references("total", deadline_s=5, limit=1)
    assert len(resp.items) == 1 and "limit reached" in (resp.reason or "")


def test_bad_options_are_usage_errors(root: Path) -> None:
    exact = ExactNavigator(root, FakeTable(), pool=NoServerPool())
    with pytest.raises(UsageError, match="deadline"):
        exact.references("total", deadline_s=0)
    with pytest.raises(UsageError, match="limit"):
        exact.references("total", limit=0)


class BlindPool(NoServerPool):
    """A server that answers, complete, with nothing: it has not loaded the file's project."""

    def query(
        self, root: Path, language: str, op: Operation, positions: Sequence[Position], *, deadline_s: float,
        rescan: bool = True,
    ) -> LspAnswer:
        self.calls.append((language, op, list(positions)))
        return LspAnswer(server="blind")


def test_empty_references_at_a_definition_are_not_a_complete_answer(root: Path) -> None:
    exact = ExactNavigator(root, FakeTable(), pool=BlindPool())
    resp = exact.references("total")
    assert not resp.complete and "not even the definition" in (resp.reason or "")
    assert resp.source == "syntax" and resp.items and all(h.provenance == ("syntax",) for h in resp.items)
    # at an explicit position an empty answer can be true (whitespace, a keyword): it stands
    assert exact.references("orders/app.py:1:1").complete


class NoDeclarationPool(NoServerPool):
    """A server that answers references but leaves the declaration out (seen from
    typescript-language-server on express 5.1.0's ``createApplication``)."""

    def query(
        self, root: Path, language: str, op: Operation, positions: Sequence[Position], *, deadline_s: float,
        rescan: bool = True,
    ) -> LspAnswer:
        self.calls.append((language, op, list(positions)))
        use = Location(str(root / "orders/app.py"), 1, 6, 1, 11)
        return LspAnswer((use,), server="fake")


def test_a_definition_the_server_left_out_comes_from_the_symbol_table(root: Path) -> None:
    exact = ExactNavigator(root, FakeTable(), pool=NoDeclarationPool())
    resp = exact.references("total", deadline_s=5)
    found = {(h.path, h.line, h.col): h for h in resp.items}
    assert found[("orders/app.py", 2, 7)].provenance == ("lsp",)
    definition = found[("orders/reports.py", 1, 5)]
    assert definition.is_definition and definition.provenance == ("symbols",)
    # never counted twice as a possible reference of itself
    assert not any(h.provenance == ("possible",) and h.is_definition for h in resp.items)
