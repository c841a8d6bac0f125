"""Untyped CommonJS (issue 17, as mocha 10 writes it): what is defined through
``module.exports``/``exports`` is in the index, and references the server cannot resolve
are possible ones, destructured ``require`` bindings and object keys setting a member
included.

Real typescript-language-server on a copy of the committed JavaScript workspace
(``src/legacy.js``, ``src/fatal.js``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from test_exact_servers import DEADLINE, WORKSPACES, require_server

from navigator.api import Navigator
from navigator.exact import ExactNavigator, NavigatorTable

pytestmark = pytest.mark.slow

LEGACY = "src/legacy.js"


@pytest.fixture(scope="module")
def exact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExactNavigator]:
    require_server("javascript")
    root = tmp_path_factory.mktemp("commonjs") / "javascript"
    shutil.copytree(WORKSPACES / "javascript", root)
    nav = Navigator(root)
    nav.index()
    ex = ExactNavigator(nav.root, NavigatorTable(nav))
    yield ex
    ex.close()
    nav.close()


def _found(resp) -> set[tuple[str, int]]:  # type: ignore[no-untyped-def]
    return {(h.path, h.line) for h in resp.items}


def test_functions_defined_through_exports_are_targets(exact: ExactNavigator) -> None:
    for name, line in (("parseQuery", 5), ("generateDiff", 9), ("inlineDiff", 13)):
        resp = exact.definition(name, deadline_s=DEADLINE)
        assert (LEGACY, line) in _found(resp), (name, resp.items)


def test_a_destructured_require_binding_is_a_reference(exact: ExactNavigator) -> None:
    # a `require` of a computed path: the server cannot link the binding to fatal.js
    resp = exact.references("createFatalError", deadline_s=DEADLINE)
    assert {(LEGACY, 3), (LEGACY, 10), ("src/fatal.js", 3)} <= _found(resp)
    assert not resp.complete


def test_an_object_key_setting_a_member_is_a_possible_reference(exact: ExactNavigator) -> None:
    resp = exact.references("Reporter.prototype.epilogue", deadline_s=DEADLINE)
    keys = [h for h in resp.items if (h.path, h.line) == (LEGACY, 25)]
    assert keys, resp.items
    assert all(h.provenance in (("lsp",), ("possible",)) for h in keys)
    if keys[0].provenance == ("possible",):
        assert not resp.complete
    # `Reporter.prototype.epilogue = function epilogue()`: the function's own name is the member
    assert (LEGACY, 20, 40) in {(h.path, h.line, h.col) for h in resp.items}
