"""Unit tests of the cAST chunker (split-then-merge) and its line-window fallback."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from semantic.languages import detect_language
from semantic.parse import UNKNOWN_LANGUAGE, parse_source
from storage.model import Chunk


def nonws(text: str) -> int:
    return sum(not c.isspace() for c in text)


def assert_covers(text: str, chunks: Sequence[Chunk]) -> None:
    """Chunks are whole lines, in order, never overlap, and cover every non-blank line."""
    lines = text.split("\n")
    covered: list[int] = []
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines)
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert (
            c.content_hash
            == hashlib.blake2b(c.text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        )
        covered.extend(range(c.start_line, c.end_line + 1))
    assert covered == sorted(covered), "chunks out of order"
    assert len(covered) == len(set(covered)), "chunks overlap"
    missing = [i + 1 for i, line in enumerate(lines) if line.strip() and i + 1 not in set(covered)]
    assert not missing, f"lines not in any chunk: {missing}"


def assert_budget(chunks: Sequence[Chunk], budget: int) -> None:
    """Over-budget chunks are only single lines (indivisible) or carry just a closing brace."""
    for c in chunks:
        size = nonws(c.text)
        if size > budget:
            last = c.text.rsplit("\n", 1)[-1].strip()
            assert c.start_line == c.end_line or size - nonws(last) <= budget, (
                c.start_line,
                c.end_line,
                size,
            )


def big_class(methods: int = 12) -> str:
    parts = [
        '"""Module docstring."""',
        "",
        "import os",
        "",
        "",
        "class Big(Base):",
        '    """A big class."""',
        "",
    ]
    for i in range(methods):
        parts += [
            f"    def method_{i}(self, value: int) -> int:",
            f'        """Method number {i}."""',
            f"        result = value * {i} + len(os.sep)",
            "        for k in range(10):",
            "            result += k",
            "        return result",
            "",
        ]
    parts += ["", "def after() -> None:", "    pass", ""]
    return "\n".join(parts)


def test_small_file_is_one_chunk() -> None:
    text = "import os\n\n\ndef f() -> int:\n    return 1\n"
    pf = parse_source("a.py", text, "python")
    assert [(c.start_line, c.end_line) for c in pf.chunks] == [(1, 5)]
    assert pf.chunks[0].symbol == "f"
    assert pf.chunks[0].signature == "def f() -> int"
    assert_covers(text, pf.chunks)


def test_big_class_is_split_with_symbols() -> None:
    text = big_class()
    budget = 300
    pf = parse_source("big.py", text, "python", chunk_budget=budget)
    chunks = pf.chunks
    assert_covers(text, chunks)
    assert_budget(chunks, budget)
    assert len(chunks) >= 4
    lines = text.split("\n")
    header = lines.index("class Big(Base):") + 1
    first_of_class = next(c for c in chunks if c.start_line <= header <= c.end_line)
    assert first_of_class.symbol == "Big"
    assert first_of_class.end_line > header + 2, "the class header stays with its first methods"
    for c in chunks:
        if c.start_line > header and "def method_" in c.text:
            first_def = next(line for line in c.text.split("\n") if "def method_" in line)
            name = first_def.split("def ")[1].split("(")[0]
            assert c.symbol == f"Big.{name}"
            assert c.signature is not None and c.signature.startswith(f"def {name}(")
    assert chunks[-1].symbol == "after"


def test_method_chunks_do_not_cut_a_method_that_fits() -> None:
    text = big_class()
    pf = parse_source("big.py", text, "python", chunk_budget=300)
    method_starts = {i + 1 for i, line in enumerate(text.split("\n")) if "    def method_" in line}
    for c in pf.chunks:
        for start in method_starts:
            if c.start_line <= start <= c.end_line:
                assert c.end_line >= start + 5, f"method at {start} cut by chunk {c.start_line}-{c.end_line}"


def test_decorators_and_leading_comments_stay_with_their_definition() -> None:
    body = "\n".join(f"    x{i} = compute_something({i}, {i} * 2)" for i in range(8))
    text = (
        "import functools\n\n\n"
        f"def first() -> None:\n{body}\n\n\n"
        "# Comment about second,\n# over two lines.\n"
        "@functools.cache\n@other.decorator(arg=1)\n"
        f"def second() -> None:\n{body}\n"
    )
    pf = parse_source("d.py", text, "python", chunk_budget=260)
    assert_covers(text, pf.chunks)
    lines = text.split("\n")
    comment = lines.index("# Comment about second,") + 1
    second = next(i + 1 for i, line in enumerate(lines) if line.startswith("def second"))
    holder = next(c for c in pf.chunks if c.start_line <= second <= c.end_line)
    assert holder.start_line <= comment, "leading comment and decorators left behind"
    assert holder.symbol == "second"
    sym = next(s for s in pf.symbols if s.name == "second")
    assert sym.span.start_line == comment + 2  # the decorators, not the comment
    assert sym.docstring is None


@pytest.mark.parametrize(
    ("path", "language", "text"),
    [
        (
            "big.ts",
            "typescript",
            "export class Big {\n"
            + "".join(
                f"  method{i}(value: number): number {{\n"
                f"    const r = value * {i};\n    return r + {i};\n  }}\n\n"
                for i in range(15)
            )
            + "}\n",
        ),
        (
            "big.go",
            "go",
            "package big\n\n"
            + "".join(
                f"func F{i}(v int) int {{\n\tr := v * {i}\n\treturn r + {i}\n}}\n\n" for i in range(30)
            ),
        ),
        (
            "big.rs",
            "rust",
            "pub struct Big;\n\nimpl Big {\n"
            + "".join(
                f"    pub fn m{i}(&self, v: u64) -> u64 {{\n        v * {i} + 1\n    }}\n\n"
                for i in range(20)
            )
            + "}\n",
        ),
    ],
)
def test_other_languages_chunk_and_cover(path: str, language: str, text: str) -> None:
    pf = parse_source(path, text, language, chunk_budget=200)
    assert pf.parsed
    assert len(pf.chunks) > 2
    assert_covers(text, pf.chunks)
    assert_budget(pf.chunks, 200)
    assert all(c.symbol for c in pf.chunks)
    # no chunk is a lone closing brace
    assert all(c.text.strip() not in {"}", "};"} for c in pf.chunks)


def test_big_function_is_split_and_keeps_its_symbol() -> None:
    body = "\n".join(f"    value_{i} = transform(value_{i - 1}, step={i})" for i in range(1, 200))
    text = f"def huge(value_0: int) -> int:\n{body}\n    return value_199\n"
    pf = parse_source("h.py", text, "python", chunk_budget=400)
    assert len(pf.chunks) > 5
    assert_covers(text, pf.chunks)
    assert_budget(pf.chunks, 400)
    assert {c.symbol for c in pf.chunks} == {"huge"}
    assert pf.chunks[0].text.startswith("def huge(")


def test_unknown_language_uses_line_windows() -> None:
    text = "\n".join(f"line {i} of some notes" for i in range(100)) + "\n"
    pf = parse_source("notes.txt", text, None)
    assert not pf.parsed
    assert pf.language == UNKNOWN_LANGUAGE
    assert pf.notes
    assert pf.symbols == () and pf.refs == ()
    assert all(c.end_line - c.start_line + 1 <= 40 for c in pf.chunks)
    assert_covers(text, pf.chunks)
    assert all(c.symbol is None for c in pf.chunks)


def test_language_without_grammar_falls_back() -> None:
    pf = parse_source("x.foo", "a\nb\n", "no-such-language")
    assert not pf.parsed and pf.notes
    assert [(c.start_line, c.end_line) for c in pf.chunks] == [(1, 2)]


@pytest.mark.parametrize(
    "text",
    [
        "def (((:\n  ]]] class\n\x00\x01\x02 garbage ''' \"\n" * 20,
        "\x00" * 1000,
        "}}}}{{{{\n" * 50,
        "\ud800 lone surrogate = 1\n",
        "x = 'unterminated\n" * 30,
    ],
    ids=["syntax-garbage", "nuls", "braces", "surrogate", "unterminated"],
)
def test_garbage_never_raises(text: str) -> None:
    for language in ("python", "typescript", "go", "rust", "java", "c", "cpp", "javascript"):
        pf = parse_source("g.src", text, language, chunk_budget=100)
        assert_covers(text, pf.chunks)


@pytest.mark.parametrize("text", ["", "\n\n  \n", "   "])
def test_empty_file_has_no_chunks(text: str) -> None:
    pf = parse_source("e.py", text, "python")
    assert pf.chunks == ()
    assert pf.symbols == ()
    assert pf.refs == ()


def test_comment_only_file() -> None:
    text = "# just a comment\n# and another\n"
    pf = parse_source("c.py", text, "python")
    assert [(c.start_line, c.end_line, c.symbol) for c in pf.chunks] == [(1, 2, None)]
    assert pf.refs == ()


def test_huge_single_line_is_fast() -> None:
    text = "x = '" + "a" * 5_000_000 + "'\n"
    started = time.perf_counter()
    pf = parse_source("huge.py", text, "python")
    elapsed = time.perf_counter() - started
    assert elapsed < 3.0
    assert [(c.start_line, c.end_line) for c in pf.chunks] == [(1, 1)]


def test_long_minified_line_under_the_limit_is_fast() -> None:
    text = "var a=1;" * 250_000 + "\n"  # 2 MB on one line
    started = time.perf_counter()
    pf = parse_source("min.js", text, "javascript")
    assert time.perf_counter() - started < 3.0
    assert_covers(text, pf.chunks)


def test_a_parse_over_its_cpu_budget_falls_back_to_line_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python's grammar is quadratic on comment lines inside a block (20,000 took 40 s): the
    parse is cut off at its CPU budget, the file chunked by line windows with a note, and the
    shared parser parses the next file whole."""
    import semantic.parse

    monkeypatch.setattr(semantic.parse, "PARSE_CPU_BUDGET_S", 0.2)
    text = "def f():\n    x = 1\n" + "".join(f"    # comment {i}\n" for i in range(8000)) + "    return x\n"
    pf = parse_source("hostile.py", text, "python")
    assert not pf.parsed
    assert any("took over" in n and "CPU" in n for n in pf.notes), pf.notes
    assert_covers(text, pf.chunks)
    after = parse_source("ok.py", "def g():\n    return 2\n\nclass B:\n    pass\n", "python")
    assert after.parsed and [s.qualified_name for s in after.symbols] == ["g", "B"]


def test_columns_are_code_points() -> None:
    text = "größe = 1\nprint('ß', größe, x)\n"
    pf = parse_source("u.py", text, "python")
    refs = [(r.name, r.line, r.col, r.end_col) for r in pf.refs if r.name in {"größe", "x"}]
    assert refs == [("größe", 1, 1, 6), ("größe", 2, 12, 17), ("x", 2, 19, 20)]


def test_crlf_line_endings() -> None:
    text = "def f():\r\n    return 1\r\n\r\nclass A:\r\n    pass\r\n"
    pf = parse_source("w.py", text, "python")
    assert [s.qualified_name for s in pf.symbols] == ["f", "A"]
    assert_covers(text, pf.chunks)


def test_refs_exclude_comments_and_strings() -> None:
    text = '# createSalesOrder\ns = "createSalesOrder"\ncreateSalesOrder(s)\n'
    pf = parse_source("r.py", text, "python")
    assert [(r.name, r.line) for r in pf.refs if r.name == "createSalesOrder"] == [("createSalesOrder", 3)]


def test_deeply_nested_code_does_not_recurse_forever() -> None:
    # a 3000-link call chain, one link per line: a very deep left-recursive tree
    text = "const x = start()\n" + "".join(f"  .step{i}({i})\n" for i in range(3000)) + ";\n"
    pf = parse_source("chain.js", text, "javascript", chunk_budget=200)
    assert pf.parsed, pf.notes
    assert_covers(text, pf.chunks)
    assert_budget(pf.chunks, 200)


@pytest.mark.parametrize(
    ("language", "text", "heads", "budget"),
    [
        (
            "elixir",
            "defmodule Shop.Orders do\n"
            + "".join(
                f'  @doc "Step {i} of an order: validate the items and compute the total price."\n'
                f"  @spec step{i}(map()) :: map()\n"
                f"  def step{i}(order) do\n    Map.put(order, :step, {i})\n  end\n\n"
                for i in range(3)
            )
            + "end\n",
            "@doc",
            140,
        ),
        (
            "haskell",
            "module Shop.Orders where\n\n"
            + "".join(
                f"step{i} :: Order -> Order\n"
                f'step{i} order = order {{ orderStep = {i}, orderNote = "validated" }}\n\n'
                for i in range(4)
            ),
            "step",  # the type signature, `stepN :: Order -> Order`
            100,
        ),
    ],
)
def test_docs_and_signatures_stay_with_the_definition(
    language: str, text: str, heads: str, budget: int
) -> None:
    """Elixir's ``@doc``/``@spec`` and Haskell's type signature stay in the chunk of the
    function they describe (a budget that fits one function, not two)."""
    pf = parse_source(f"orders.{language}", text, language, chunk_budget=budget)
    lines = text.split("\n")
    doc_lines = [i + 1 for i, line in enumerate(lines) if line.strip().startswith(heads) and "=" not in line]
    assert len(doc_lines) >= 3
    assert len(pf.chunks) >= 3  # the budget does split the file
    for i, doc in enumerate(doc_lines):
        # the line that starts the definition: Elixir's `def stepN`, Haskell's equation
        body = next(
            n
            for n in range(doc, len(lines))
            if lines[n].lstrip().startswith((f"def step{i}(", f"step{i} order"))
        )
        chunk = next(c for c in pf.chunks if c.start_line <= doc <= c.end_line)
        assert chunk.end_line >= body + 1, (doc, body + 1, [(c.start_line, c.end_line) for c in pf.chunks])


def _ruby_service(methods: int) -> str:
    body = []
    for i in range(methods):
        body += [
            f"      def charge_{i}(order, amount)",
            f"        total = order.lines.sum(&:price) + amount * {i}",
            "        gateway.capture(order.id, total)",
            "      end",
            "",
        ]
    return "\n".join(
        ["module Shop", "  module Billing", "    class InvoicePrinter < Base", *body, "    end", "  end", "end", ""]
    )


@pytest.mark.parametrize("methods", [1, 12])
def test_closing_lines_join_the_chunk_before_and_a_chunk_is_named_by_what_it_defines(methods: int) -> None:
    """A split class's `end`s were chunks of their own (a fifth of rails' chunks were `end`),
    and a small file's one chunk was named after its outer namespace (`Shop`) rather than
    the class it holds."""
    text = _ruby_service(methods)
    pf = parse_source("lib/shop/billing/invoice_printer.rb", text, "ruby", chunk_budget=300)
    assert_covers(text, pf.chunks)
    for c in pf.chunks:
        assert any(line.strip() not in ("end", "}", "") for line in c.text.split("\n")), (c.start_line, c.text)
    assert pf.chunks[0].symbol == "Shop.Billing.InvoicePrinter"
    if methods > 1:
        assert len(pf.chunks) > 2
        assert pf.chunks[-1].text.endswith("    end\n  end\nend")


def test_closing_braces_join_the_chunk_before() -> None:
    methods = "\n".join(
        f"  charge{i}(order: Order, amount: number): number {{\n    const total = order.total + amount * {i};\n"
        f"    return this.gateway.capture(order.id, total);\n  }}\n"
        for i in range(12)
    )
    text = f"export namespace Shop {{\n  export class Printer {{\n{methods}\n  }}\n}}\n"
    pf = parse_source("src/printer.ts", text, "typescript", chunk_budget=300)
    assert_covers(text, pf.chunks)
    assert len(pf.chunks) > 2
    assert all(c.text.strip(" \n}") for c in pf.chunks)


def test_a_module_that_holds_functions_names_its_chunk() -> None:
    """Only a namespace around another container gives way; Elixir's module of functions is the chunk's name."""
    text = "defmodule Shop.Billing do\n  def charge(order), do: order.total\n\n  def refund(order), do: 0\nend\n"
    pf = parse_source("lib/shop/billing.ex", text, "elixir")
    assert pf.chunks[0].symbol == "Shop.Billing"


def test_definitions_alone_are_parse_sources_definitions() -> None:
    from semantic.parse import parse_definitions

    for path in sorted((Path(__file__).parent / "workspaces").rglob("*")):
        language = detect_language(str(path)) if path.is_file() else None
        if language is None:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        full = parse_source(str(path), text, language)
        alone = parse_definitions(str(path), text, language)
        assert (alone is None) == (not full.parsed), path
        if alone is not None:
            assert tuple(alone) == full.symbols, path
