"""TypeScript in a monorepo of several tsconfig projects with no ``node_modules`` (issue 17,
as vscode-languageserver-node is before ``npm install``): answers are honest about what
tsserver cannot see.

- A package imported by its name (``from 'tiny-rpc'``) does not resolve: its uses are
  possible references and callers, and the answer is not complete.
- tsserver's call hierarchy stays inside the project of the file it is asked in, its
  references do not: callers are filled in from the references at call positions.
- Its implementation search does too, and lists the namespace merged with an interface:
  the namespace is left out, and classes of other projects that name the interface (or a
  base of theirs) in ``extends``/``implements`` are possible implementations.

Real typescript-language-server on a copy of ``tests/lsp_workspaces/ts_monorepo``.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_exact_servers import DEADLINE, require_server

from navigator.api import Navigator
from navigator.exact import ExactNavigator, NavigatorTable

pytestmark = pytest.mark.slow

WORKSPACE = Path(__file__).parent / "lsp_workspaces" / "ts_monorepo"
TEST = "packages/rpc/src/node/test/connection.test.ts"
PROTO = "packages/proto/src/connection.ts"
MAIN = "packages/rpc/src/node/main.ts"


@pytest.fixture(scope="module")
def exact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExactNavigator]:
    require_server("typescript")
    root = tmp_path_factory.mktemp("monorepo") / "ts_monorepo"
    shutil.copytree(WORKSPACE, root)
    # a UTF-8 byte-order mark before a definition on line 1 (written here: an editor or git
    # could drop it from a committed file)
    common = root / "packages/rpc/src/common"
    (common / "bommed.ts").write_bytes(b"\xef\xbb\xbfexport function bommed(): number { return 1; }\n")
    (common / "usesbom.ts").write_text("import { bommed } from './bommed.js';\n\nexport const one = bommed();\n")
    nav = Navigator(root)
    nav.index()
    ex = ExactNavigator(nav.root, NavigatorTable(nav))
    yield ex
    ex.close()
    nav.close()


def _by(items: tuple, provenance: str) -> set[tuple[str, int, int]]:  # type: ignore[type-arg]
    return {(h.path, h.line, h.col) for h in items if h.provenance == (provenance,)}


def test_uses_through_an_unresolved_package_are_possible_references(exact: ExactNavigator) -> None:
    resp = exact.references("createMessageConnection", deadline_s=DEADLINE)
    assert {(TEST, 5, 16), (TEST, 6, 17), (TEST, 11, 9), (MAIN, 26, 17)} <= _by(resp.items, "lsp")
    assert _by(resp.items, "possible") == {(PROTO, 3, 25), (PROTO, 6, 9)}
    assert not resp.complete and "possible" in (resp.reason or "")
    kinds = [h.provenance for h in resp.items]
    assert kinds == sorted(kinds, key=lambda p: p == ("possible",)), "possible hits come after the server's"


def test_an_answer_nothing_is_missing_from_stays_complete(exact: ExactNavigator) -> None:
    resp = exact.references("IPCMessageReader", deadline_s=DEADLINE)
    assert resp.complete, resp.reason
    assert {(MAIN, 8, 14), (TEST, 1, 35), (TEST, 5, 44), (TEST, 11, 37)} <= _by(resp.items, "lsp")
    assert not _by(resp.items, "possible")


def test_callers_agree_with_references(exact: ExactNavigator) -> None:
    resp = exact.callers("createMessageConnection", deadline_s=DEADLINE)
    calls = {(h.path, h.line, h.symbol) for h in resp.items if h.provenance == ("lsp",)}
    assert {(TEST, 5, "opensTwo"), (TEST, 6, "opensTwo"), (TEST, 11, "opensOne"),
            (MAIN, 27, "createMessageConnection")} <= calls  # fmt: skip
    assert not any(h.is_definition or "import" in h.code for h in resp.items)
    assert {(h.path, h.line, h.symbol) for h in resp.items if h.provenance == ("possible",)} == {
        (PROTO, 6, "createProtocolConnection")
    }
    assert not resp.complete


def test_a_call_with_type_arguments_is_a_possible_caller(exact: ExactNavigator) -> None:
    resp = exact.callers("decode", deadline_s=DEADLINE)
    assert {(h.path, h.line, h.symbol) for h in resp.items} == {(PROTO, 16, "readSettings")}
    assert not resp.complete


def test_implementations_leave_out_the_merged_namespace_and_find_other_projects(exact: ExactNavigator) -> None:
    resp = exact.implementations("MessageReader", deadline_s=DEADLINE)
    names = {h.symbol for h in resp.items}
    assert names == {"AbstractMessageReader", "ReadableStreamMessageReader", "IPCMessageReader",
                     "PortMessageReader", "SocketMessageReader", "ProtocolReader"}  # fmt: skip
    assert not any("namespace" in h.code for h in resp.items)
    assert len(resp.items) == len(names)
    assert not resp.complete, "some implementations are only syntactic"


def test_a_definition_after_a_byte_order_mark(exact: ExactNavigator) -> None:
    resp = exact.references("bommed", deadline_s=DEADLINE)
    assert resp.complete, resp.reason
    common = "packages/rpc/src/common"
    assert _by(resp.items, "lsp") == {(f"{common}/bommed.ts", 1, 17), (f"{common}/usesbom.ts", 1, 10),
                                      (f"{common}/usesbom.ts", 3, 20)}  # fmt: skip
