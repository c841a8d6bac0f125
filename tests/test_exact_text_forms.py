"""Files saved in other text forms get the same exact answers: a UTF-8 byte-order mark, and
lines ended by a lone CR (old Mac), by CRLF, or holding a form feed (which Python's
``str.splitlines`` — but no language server — treats as a line break).

Real basedpyright on a small workspace written by the fixture (the bytes are the point, so
they are written here rather than committed, where an editor or git could normalise them).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from test_exact_servers import DEADLINE, require_server

from navigator.api import Navigator
from navigator.exact import ExactNavigator, NavigatorTable
from semantic.parse import parse_source

pytestmark = pytest.mark.slow

FILES: dict[str, bytes] = {
    "pkg/__init__.py": b"",
    # the definition on the BOM's own line
    "pkg/bommed.py": b"\xef\xbb\xbfdef first(x):\n    return x\n",
    "pkg/cr.py": b"from pkg.bommed import first\r\r\rdef crwork(x):\r    return first(x)\r\r\rdef crother():\r    return crwork([1])\r",
    "pkg/feed.py": b"from pkg.cr import crwork\n\x0c\n\ndef fed():\n    return crwork([3])\n",
    "pkg/use.py": b"from pkg.bommed import first\r\nfrom pkg.cr import crwork\r\n\r\n\r\ndef use():\r\n    return first(1) + crwork([2])\r\n",
}


@pytest.fixture(scope="module")
def exact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExactNavigator]:
    require_server("python")
    root = tmp_path_factory.mktemp("forms")
    for rel, data in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    nav = Navigator(root)
    nav.index()
    ex = ExactNavigator(nav.root, NavigatorTable(nav))
    yield ex
    ex.close()
    nav.close()


def _at(resp) -> set[tuple[str, int, int]]:  # type: ignore[no-untyped-def]
    return {(h.path, h.line, h.col) for h in resp.items}


def test_a_definition_on_a_bom_line_is_found_by_the_server(exact: ExactNavigator) -> None:
    resp = exact.references("first", deadline_s=DEADLINE)
    assert resp.source is not None and resp.source.startswith("lsp:"), resp.reason
    assert resp.complete, resp.reason
    assert {("pkg/bommed.py", 1, 5), ("pkg/cr.py", 1, 24), ("pkg/cr.py", 5, 12),
            ("pkg/use.py", 1, 24), ("pkg/use.py", 6, 12)} <= _at(resp)  # fmt: skip
    assert all(h.provenance == ("lsp",) for h in resp.items)


def test_functions_in_a_cr_only_file_are_indexed_at_their_lines(exact: ExactNavigator) -> None:
    rows = {r.definition.name: r.definition.name_span.start_line for r in exact.table.symbols_in_file("pkg/cr.py")}
    assert rows == {"crwork": 4, "crother": 8}


def test_refs_and_callers_in_cr_only_and_form_feed_files(exact: ExactNavigator) -> None:
    refs = exact.references("crwork", deadline_s=DEADLINE)
    assert refs.complete, refs.reason
    assert {("pkg/cr.py", 4, 5), ("pkg/cr.py", 9, 12), ("pkg/feed.py", 5, 12), ("pkg/use.py", 6, 23)} <= _at(refs)
    assert all(h.provenance == ("lsp",) for h in refs.items)
    callers = exact.callers("crwork", deadline_s=DEADLINE)
    assert {(h.path, h.line, h.symbol) for h in callers.items} == {
        ("pkg/cr.py", 9, "crother"), ("pkg/feed.py", 5, "fed"), ("pkg/use.py", 6, "use"),
    }  # fmt: skip


def test_the_parser_counts_lines_as_language_servers_do() -> None:
    for text in ("def a():\r    pass\r\rdef b():\r    pass\r", "def a():\n    pass\n\x0c\ndef b():\n    pass\n",
                 "\ufeffdef a():\r\n    pass\r\n\r\ndef b():\r\n    pass\r\n"):  # fmt: skip
        parsed = parse_source("m.py", text, "python")
        assert not parsed.notes, parsed.notes
        assert [(s.name, s.name_span.start_line, s.name_span.start_col) for s in parsed.symbols] == [
            ("a", 1, 5), ("b", 4, 5),
        ]  # fmt: skip
