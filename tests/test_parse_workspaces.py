"""Annotated-source tests of the syntax layer over the committed workspaces.

Each workspace file marks its own expectations in end-of-line comments:

- ``def: <kind> <qualified_name>`` — a definition whose *name* is on this line;
- ``ref: <name> [<name> ...]`` — an identifier occurrence of each name on this line;
- ``noref: <name>`` — the name appears on this line only in a comment or string,
  so there must be no syntax reference to it here.

The same files serve the language-server tests, so the cases are read generically.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from semantic.languages import QUERY_LANGUAGES, detect_language
from semantic.parse import parse_source
from storage.model import ParsedFile

WORKSPACES = Path(__file__).parent / "workspaces"
_SOURCE_SUFFIXES = {".py", ".ts", ".tsx", ".js", ".go", ".rs", ".java", ".c", ".h", ".cpp", ".hpp"} | {
    ".rb",
    ".php",
    ".cs",
    ".kt",
    ".scala",
    ".swift",
    ".bash",
    ".lua",
    ".ex",
    ".hs",
    ".zig",
}

_DEF = re.compile(r"\bdef:\s*(\w+)\s+([\w.-]+[?!]?)")  # Ruby names may end in ? or !
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
    # every language with a definitions query has an annotated workspace (tsx shares typescript's)
    assert QUERY_LANGUAGES - {"tsx"} <= languages
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


SNIPPETS: list[tuple[str, str, list[tuple[str, str, int]]]] = [
    (
        "typescript",
        "/** Service doc. */\n@Injectable()\nexport class Svc {\n  @HostListener('click')\n"
        "  onClick(): void {}\n\n  handle = (e: Event): void => {};\n}\n",
        [("class", "Svc", 2), ("method", "Svc.onClick", 4), ("method", "Svc.handle", 7)],
    ),
    (
        "javascript",
        "export default function main() {}\nexport const api = { create() { return 1; } };\n"
        "const LIMIT = 5;\nlet counter = 0;\nconst f = async () => 1;\n",
        [
            ("function", "main", 1),
            ("constant", "api", 2),
            ("method", "api.create", 2),
            ("constant", "LIMIT", 3),
            ("function", "f", 5),
        ],
    ),
    (
        "rust",
        "#[derive(Debug)]\n/// doc\npub struct S;\nimpl<T> Tr for S { fn m(&self) {} }\n"
        "mod inner { pub fn f() {} }\npub enum E { A }\ntype Alias = u8;\nstatic G: u8 = 1;\n",
        [
            ("struct", "S", 1),
            ("method", "S.m", 4),
            ("module", "inner", 5),
            ("function", "inner.f", 5),
            ("enum", "E", 6),
            ("type", "Alias", 7),
            ("constant", "G", 8),
        ],
    ),
    (
        "go",
        "package p\n\ntype List[T any] struct{ items []T }\n\nfunc (l *List[T]) Len() int { return 0 }\n"
        "\nconst (\n\tA = 1\n\tB = 2\n)\n\ntype Alias = int\n",
        [
            ("struct", "List", 3),
            ("method", "List.Len", 5),
            ("constant", "A", 8),
            ("constant", "B", 9),
            ("type", "Alias", 12),
        ],
    ),
    (
        "java",
        "enum Color { RED; void paint() {} }\n@interface Marker {}\ninterface I { int LIMIT = 3; }\n",
        [
            ("enum", "Color", 1),
            ("method", "Color.paint", 1),
            ("interface", "Marker", 2),
            ("interface", "I", 3),
            ("constant", "I.LIMIT", 3),
        ],
    ),
    (
        "cpp",
        "namespace a::b {\ntemplate <typename T>\n"
        "class Box { public: T get() const { return v; } T v; };\n}\n"
        "int a::b::free_fn() { return 1; }\nusing Id = int;\nenum class Mode { On, Off };\n",
        [
            ("module", "a.b", 1),
            ("class", "a.b.Box", 3),
            ("method", "a.b.Box.get", 3),
            ("function", "a.b.free_fn", 5),
            ("type", "Id", 6),
            ("enum", "Mode", 7),
        ],
    ),
    (
        "javascript",
        "var res = module.exports = {};\n\nres.send = function send(body) {\n  return this;\n};\n"
        "exports.parse = (s) => s;\nRouter.prototype.handle = function () {};\n",
        [
            ("function", "res.send", 3),
            ("function", "exports.parse", 6),
            ("method", "Router.prototype.handle", 7),
        ],
    ),
    (
        "lua",
        "local M = {}\n\nM.setup = function(config)\n  return config\nend\n"
        "M.ui.open = function() end\nlocal helper = function(x) return x end\n",
        [("method", "M.setup", 3), ("method", "M.ui.open", 6), ("function", "helper", 7)],
    ),
    (
        "python",
        "import functools\n\n\nclass A:\n    @functools.cache\n    def m(self) -> int:\n"
        "        def inner() -> int:\n            return 1\n        return inner()\n\n"
        "    LIMIT = 3\n\n\n_PRIVATE_MAX: int = 4\nlower = 5\n",
        [
            ("class", "A", 4),
            ("method", "A.m", 5),
            ("function", "A.m.inner", 7),
            ("constant", "_PRIVATE_MAX", 14),
        ],
    ),
]


@pytest.mark.parametrize(("language", "code", "expected"), SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_snippets(language: str, code: str, expected: list[tuple[str, str, int]]) -> None:
    """Definition kinds, qualified names and span starts (incl. decorators/attributes)."""
    pf = parse_source(f"snippet.{language}", code, language)
    got = [(s.kind, s.qualified_name, s.span.start_line) for s in pf.symbols]
    for item in expected:
        assert item in got, got
    names = {s.qualified_name for s in pf.symbols}
    assert "lower" not in names and "counter" not in names and "A.LIMIT" not in names


@pytest.mark.parametrize(
    ("path", "text", "language"),
    [
        ("src/a.py", None, "python"),
        ("web/App.tsx", None, "tsx"),
        ("x/y.mjs", None, "javascript"),
        ("inc/orders.h", "int f(void);\n", "c"),
        ("inc/orders.h", "namespace orders {\nclass A {};\n}\n", "cpp"),
        ("inc/orders.h", None, "c"),
        # fmtlib's headers: no `class` at the top, but templates and std::
        (
            "include/fmt/base.h",
            "#ifndef FMT_BASE_H_\nFMT_BEGIN_NAMESPACE\ntemplate <typename T> struct is_char;\n",
            "cpp",
        ),
        ("src/uv-common.h", '#ifdef __cplusplus\nextern "C" {\n#endif\nint uv_x(void);\n', "c"),
        ("bin/bats", "#!/usr/bin/env bash\nset -e\n", "bash"),
        ("bin/tool", "#!/usr/bin/python3\nimport sys\n", "python"),
        ("bin/tool", None, None),
        ("lib/plug/conn.ex", None, "elixir"),
        ("test/conn_test.exs", None, "elixir"),
        ("src/Data/Aeson.hs", None, "haskell"),
        ("lib/std/mem.zig", None, "zig"),
        ("build.zig.zon", None, "zig"),
        ("test/run.bats", None, "bash"),
        ("config.ru", None, "ruby"),
        ("Gemfile", None, "ruby"),
        ("README.md", None, None),
        ("Makefile", None, None),
    ],
)
def test_detect_language(path: str, text: str | None, language: str | None) -> None:
    assert detect_language(path, text) == language


MORE_SNIPPETS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    (
        "ruby",
        "module Shop\n  MAX = 5\n  class Order < Base\n    def total(x)\n    end\n"
        "    def self.create(a)\n    end\n  end\nend\n",
        [
            ("constant", "Shop.MAX", "MAX = 5"),
            ("class", "Shop.Order", "class Order < Base"),
            ("method", "Shop.Order.total", "def total(x)"),
            ("method", "Shop.Order.create", "def self.create(a)"),
        ],
    ),
    (
        "csharp",
        "namespace Shop { public class Order : IT {\n"
        "  public const int MAX = 5;\n  public int Total() { return 1; }\n} }",
        [
            ("class", "Shop.Order", "public class Order : IT"),
            ("constant", "Shop.Order.MAX", "public const int MAX = 5"),
            ("method", "Shop.Order.Total", "public int Total()"),
        ],
    ),
    (
        "php",
        "<?php\nclass Order implements T { public function total() { return 1; } }\n"
        "function create_sales_order() {}\n",
        [
            ("class", "Order", "class Order implements T"),
            ("method", "Order.total", "public function total()"),
            ("function", "create_sales_order", "function create_sales_order()"),
        ],
    ),
    (
        "kotlin",
        "class Order : T {\n    override fun total(): Int { return 1 }\n}\ntypealias Id = String\n",
        [
            ("class", "Order", "class Order : T"),
            ("method", "Order.total", "override fun total(): Int"),
            ("type", "Id", "typealias Id = String"),
        ],
    ),
    (
        "scala",
        "trait T { def total: Int }\nobject Order { def create(): Order = new Order }\n",
        [
            ("trait", "T", "trait T"),
            ("method", "T.total", "def total: Int"),
            ("method", "Order.create", "def create(): Order"),
        ],
    ),
    (
        "swift",
        "protocol T { func total() -> Int }\nclass Order: T {\n  func total() -> Int { return 1 }\n}\n",
        [("interface", "T", "protocol T"), ("method", "Order.total", "func total() -> Int")],
    ),
    ("bash", 'deploy() {\n  echo "$TARGET"\n}\n', [("function", "deploy", "deploy()")]),
    (
        "lua",
        "local function total(x)\n  return x\nend\nfunction M:create(a)\n  return a\nend\n",
        [("function", "total", "local function total(x)"), ("method", "M.create", "function M:create(a)")],
    ),
]


@pytest.mark.parametrize(("language", "code", "expected"), MORE_SNIPPETS, ids=[s[0] for s in MORE_SNIPPETS])
def test_more_languages(language: str, code: str, expected: list[tuple[str, str, str]]) -> None:
    """The languages without a workspace: kinds, qualified names and signatures."""
    pf = parse_source(f"snippet.{language}", code, language)
    assert pf.parsed
    got = [(s.kind, s.qualified_name, s.signature) for s in pf.symbols]
    for item in expected:
        assert item in got, got
    assert pf.refs and pf.chunks


def test_index_reads_a_cpp_header_as_cpp(tmp_path: Path) -> None:
    """The indexer passes the text to language detection: a C++ ``.h`` is parsed as C++."""
    from navigator.indexer import index_root
    from storage.db import Store

    root = tmp_path / "repo"
    (root / "include").mkdir(parents=True)
    (root / "include" / "format.h").write_text(
        "#pragma once\ntemplate <typename Char>\nclass basic_writer {\n public:\n  void write(Char c);\n};\n",
        "utf-8",
    )
    (root / "include" / "plain.h").write_text(
        "struct point { int x; };\nint area(struct point p);\n", "utf-8"
    )
    store = Store(tmp_path / "index.db")
    try:
        index_root(root, store, workers=1)
        files = store.file_rows()
        assert files["include/format.h"].language == "cpp"
        assert files["include/plain.h"].language == "c"
        kinds = {
            r.definition.qualified_name: r.definition.kind for r in store.symbols_in_file("include/format.h")
        }
        assert kinds == {"basic_writer": "class", "basic_writer.write": "method"}
    finally:
        store.close()


@pytest.mark.parametrize(
    ("language", "path", "qualified_name", "docstring"),
    [
        ("elixir", "lib/orders.ex", "Shop.Orders", "Sales orders: creation and totals."),
        ("elixir", "lib/orders.ex", "Shop.Orders.create_sales_order", "Create a sales order for a customer."),
        ("haskell", "src/Orders.hs", "createSalesOrder", "Create a sales order for a customer."),
        ("haskell", "src/Orders.hs", "Item", "A line of an order."),
        ("zig", "src/orders.zig", "createSalesOrder", "Create a sales order for a customer."),
        ("zig", "src/orders.zig", "Order.total", "The order's total in cents."),
        ("lua", "lua/orders/init.lua", "M.create_sales_order", "Create a sales order for a customer."),
        ("swift", "Sources/Orders.swift", "createSalesOrder", "Create a sales order for a customer."),
    ],
)
def test_docstrings(language: str, path: str, qualified_name: str, docstring: str) -> None:
    """Each language's own doc convention: ``@doc``/``@moduledoc``, ``-- |``, ``///``, ``---``."""
    by_q = {s.qualified_name: s for s in parsed(language, path).symbols}
    assert by_q[qualified_name].docstring == docstring


def test_an_enum_constant_with_a_body_has_its_header_as_signature() -> None:
    for language, path in (("java", "src/main/java/com/example/orders/Kinds.java"), ("kotlin", "src/Kinds.kt")):
        paid = [s for s in parsed(language, path).symbols if s.name == "PAID"]
        assert [s.signature for s in paid] == ['PAID("p")'], language


@pytest.mark.parametrize(("language", "path"), [("kotlin", "src/Kinds.kt"), ("scala", "src/Orders.scala")])
def test_a_file_parses_to_the_same_references_every_time(language: str, path: str) -> None:
    """tree-sitter hands back the captures of one position (``shop`` and ``shop.orders`` at 1:9)
    in no fixed order; the references are ordered totally, so re-indexing changes nothing."""
    text = (WORKSPACES / language / path).read_text(encoding="utf-8")
    first = parse_source(path, text, language).refs
    assert any(a.line == b.line and a.col == b.col for a, b in itertools.pairwise(first)), "no tie to order"
    for _ in range(12):
        assert parse_source(path, text, language).refs == first
