"""Annotated-source tests of the syntax layer over the committed workspaces.

Each workspace file marks its own expectations in end-of-line comments:

- ``def: <kind> <qualified_name>`` — a definition whose *name* is on this line;
- ``ref: <name> [<name> ...]`` — an identifier occurrence of each name on this line;
- ``noref: <name>`` — the name appears on this line only in a comment or string,
  so there must be no syntax reference to it here.

The same files serve the language-server tests, so the cases are read generically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from semantic.languages import detect_language
from semantic.parse import parse_source
from storage.model import ParsedFile

WORKSPACES = Path(__file__).parent / "workspaces"
_SOURCE_SUFFIXES = {".py", ".ts", ".tsx", ".js", ".go", ".rs", ".java", ".c", ".h", ".cpp", ".hpp"}

_DEF = re.compile(r"\bdef:\s*(\w+)\s+([\w.]+)")
_REF = re.compile(r"\bref:\s*((?:[A-Za-z_]\w*[ \t]*)+?)(?=\s*(?:\b(?:def|noref):|\*/|$))")
_NOREF = re.compile(r"\bnoref:\s*((?:[A-Za-z_]\w*[ \t]*)+?)(?=\s*(?:\b(?:def|ref):|\*/|$))")


@dataclass(frozen=True)
class Case:
    language: str  # the workspace
    path: str  # relative to the workspace
    line: int
    what: str  # def | ref | noref
    name: str
    kind: str = ""

    def __str__(self) -> str:
        extra = f" {self.kind}" if self.kind else ""
        return f"{self.language}/{self.path}:{self.line}:{self.what}{extra}:{self.name}"


def read_annotations(text: str) -> list[tuple[int, str, str, str]]:
    """(line, what, name, kind) for every annotation in ``text``."""
    out: list[tuple[int, str, str, str]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        for m in _DEF.finditer(line):
            out.append((lineno, "def", m.group(2), m.group(1)))
        for m in _REF.finditer(line):
            out.extend((lineno, "ref", name, "") for name in m.group(1).split())
        for m in _NOREF.finditer(line):
            out.extend((lineno, "noref", name, "") for name in m.group(1).split())
    return out


def _workspace_files() -> list[tuple[str, Path]]:
    return sorted(
        (ws.name, p)
        for ws in WORKSPACES.iterdir()
        if ws.is_dir()
        for p in ws.rglob("*")
        if p.suffix in _SOURCE_SUFFIXES and p.is_file()
    )


def _cases() -> list[Case]:
    cases: list[Case] = []
    for ws, p in _workspace_files():
        rel = p.relative_to(WORKSPACES / ws).as_posix()
        for line, what, name, kind in read_annotations(p.read_text("utf-8")):
            cases.append(Case(ws, rel, line, what, name, kind))
    return cases


CASES = _cases()


@cache
def parsed(language: str, path: str) -> ParsedFile:
    text = (WORKSPACES / language / path).read_text("utf-8")
    return parse_source(path, text, detect_language(path, text))


def test_annotation_helper() -> None:
    got = read_annotations("x = f(y)  # def: constant X ref: f y noref: z\n// ref: a\n")
    assert got == [
        (1, "def", "X", "constant"),
        (1, "ref", "f", ""),
        (1, "ref", "y", ""),
        (1, "noref", "z", ""),
        (2, "ref", "a", ""),
    ]


def test_every_workspace_has_cases() -> None:
    languages = {c.language for c in CASES}
    assert {"python", "typescript", "javascript", "go", "rust", "java", "c", "cpp"} <= languages
    for lang in languages:
        whats = {c.what for c in CASES if c.language == lang}
        assert whats == {"def", "ref", "noref"}, lang


@pytest.mark.parametrize("case", CASES, ids=str)
def test_case(case: Case) -> None:
    pf = parsed(case.language, case.path)
    assert pf.parsed, pf.notes
    if case.what == "def":
        found = [
            (s.kind, s.qualified_name, s.name_span.start_line)
            for s in pf.symbols
            if s.name_span.start_line == case.line
        ]
        assert (case.kind, case.name, case.line) in found, f"symbols on line {case.line}: {found}"
    elif case.what == "ref":
        names = [r.name for r in pf.refs if r.line == case.line]
        assert case.name in names, f"refs on line {case.line}: {names}"
    else:
        names = [r.name for r in pf.refs if r.line == case.line]
        assert case.name not in names, f"{case.name} is only in a comment or string on line {case.line}"


@pytest.mark.parametrize(
    ("language", "path"), [(ws, p.relative_to(WORKSPACES / ws).as_posix()) for ws, p in _workspace_files()]
)
def test_file_invariants(language: str, path: str) -> None:
    """Language detection, ref columns, symbol spans and chunk coverage on every file."""
    text = (WORKSPACES / language / path).read_text("utf-8")
    detected = detect_language(path, text)
    assert detected is not None
    pf = parsed(language, path)
    assert pf.language == detected
    lines = text.split("\n")
    for r in pf.refs:
        assert lines[r.line - 1][r.col - 1 : r.end_col - 1] == r.name
    for s in pf.symbols:
        n = s.name_span
        assert lines[n.start_line - 1][n.start_col - 1 : n.end_col - 1] == s.name
        assert s.span.start_line <= n.start_line <= s.span.end_line
        assert s.signature and "\n" not in s.signature
    covered = [line for c in pf.chunks for line in range(c.start_line, c.end_line + 1)]
    assert covered == sorted(set(covered))
    assert {i + 1 for i, line in enumerate(lines) if line.strip()} <= set(covered)


def test_definition_details() -> None:
    """Signatures, containers and docstrings for a few representative symbols."""
    by_q = {s.qualified_name: s for s in parsed("python", "orders/service.py").symbols}
    s = by_q["create_sales_order"]
    assert s.signature == "def create_sales_order(customer: str, items: list[Item]) -> Order"
    assert s.docstring == "Create a sales order for a customer."
    models = {s.qualified_name: s for s in parsed("python", "orders/models.py").symbols}
    create = models["Order.create"]
    assert create.container == "Order"
    assert create.span.start_line == create.name_span.start_line - 1  # the @classmethod line
    assert models["Order.Status.label"].container == "Order.Status"
    assert models["Order"].signature == "class Order(Priced)"

    go = {s.qualified_name: s for s in parsed("go", "order.go").symbols}
    assert go["Order.Total"].signature == "func (o *Order) Total() int"
    assert go["Order.Total"].docstring == "Total is the order's total in cents."
    assert go["Order.Total"].container == "Order"

    rust = {s.qualified_name: s for s in parsed("rust", "src/order.rs").symbols}
    assert rust["Order.create"].signature.startswith("pub fn create(customer: &str, items: Vec<Item>)")
    assert rust["Item"].span.start_line == 3 + 1  # the #[derive] attribute belongs to the struct
    assert rust["Item"].docstring is None or "line of an order" in rust["Item"].docstring

    ts = {s.qualified_name: s for s in parsed("typescript", "src/report.ts").symbols}
    assert ts["total"].kind == "function"

    cpp = {(s.qualified_name, s.path): s for s in parsed("cpp", "orders.cpp").symbols}
    assert cpp[("orders.Order.create", "orders.cpp")].kind == "method"
