"""The package's layering, read from the source (DESIGN: the front ends live in
``navigator/frontends/`` and import the engine, never the other way round; the engine's own
imports point one way).

Every ``import`` statement counts, at module level or inside a function, except those under
``if TYPE_CHECKING:`` — which the engine is asked not to need for a cycle either (see
``test_engine_has_no_type_checking_cycles``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

NAVIGATOR = Path(__file__).resolve().parent.parent / "navigator"
FRONTENDS = NAVIGATOR / "frontends"


def _engine_modules() -> dict[str, Path]:
    return {f"navigator.{p.stem}": p for p in sorted(NAVIGATOR.glob("*.py")) if p.stem != "__init__"}


def _frontend_modules() -> dict[str, Path]:
    return {
        f"navigator.frontends.{p.stem}": p for p in sorted(FRONTENDS.glob("*.py")) if p.stem != "__init__"
    }


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, *, type_checking: bool) -> set[str]:
    """The ``navigator`` modules ``path`` imports; ``type_checking`` says whether imports
    under ``if TYPE_CHECKING:`` count."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "navigator")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").startswith("navigator")
        ):
            assert node.module is not None
            found.add(node.module)
            # `from navigator import checks` / `from navigator.frontends import display`
            found.update(f"{node.module}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _is_frontend(module: str) -> bool:
    return module == "navigator.frontends" or module.startswith("navigator.frontends.")


def _graph(*, type_checking: bool) -> dict[str, set[str]]:
    engine = _engine_modules()
    return {
        name: {m for m in _imports(path, type_checking=type_checking) if m in engine and m != name}
        for name, path in engine.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := dfs(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := dfs(node)):
            return found
    return None


def test_the_front_ends_have_a_package_of_their_own() -> None:
    fronts = set(_frontend_modules())
    for name in ("cli", "entry", "daemon", "client", "wire", "editor", "mcp_server", "display", "textout"):
        assert f"navigator.frontends.{name}" in fronts
        assert not (NAVIGATOR / f"{name}.py").exists(), f"navigator/{name}.py is a front end"


def test_the_engine_never_imports_a_front_end() -> None:
    bad = {
        name: sorted(m for m in _imports(path, type_checking=True) if _is_frontend(m))
        for name, path in _engine_modules().items()
    }
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"engine modules import front ends: {bad}"
    init = _imports(NAVIGATOR / "__init__.py", type_checking=True)
    assert not any(_is_frontend(m) for m in init)
    # nor do the layers below it (storage, lsp, semantic)
    for pkg in ("storage", "lsp", "semantic"):
        for path in sorted((NAVIGATOR.parent / pkg).rglob("*.py")):
            hits = sorted(m for m in _imports(path, type_checking=True) if _is_frontend(m))
            assert not hits, f"{path.relative_to(NAVIGATOR.parent)} imports front ends: {hits}"


def test_engine_imports_point_one_way() -> None:
    cycle = _cycle(_graph(type_checking=False))
    assert cycle is None, "import cycle among navigator's engine modules: " + " -> ".join(cycle or [])


def test_engine_has_no_type_checking_cycles() -> None:
    cycle = _cycle(_graph(type_checking=True))
    assert cycle is None, "import cycle (through TYPE_CHECKING imports): " + " -> ".join(cycle or [])


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": set(), "b": {"b"}}, ["b", "b"]),
    ],
)
def test_cycle_finder(graph: dict[str, set[str]], expected: list[str] | None) -> None:
    assert _cycle(graph) == expected


def test_import_reader_sees_function_level_and_skips_type_checking(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "from navigator import checks\n"
        "if TYPE_CHECKING:\n    from navigator.api import Navigator\n"
        "def f():\n    from navigator.frontends.cli import run\n    import navigator.find\n",
        encoding="utf-8",
    )
    without = _imports(src, type_checking=False)
    assert {"navigator.checks", "navigator.frontends.cli", "navigator.find"} <= without
    assert "navigator.api" not in without
    assert "navigator.api" in _imports(src, type_checking=True)


ROOT = NAVIGATOR.parent
OURS = ("navigator", "semantic", "storage", "lsp")
# Which of our packages each layer may import (DESIGN: storage at the bottom; lsp and semantic
# beside each other, never importing each other; the engine, navigator/, over all three).
MAY_IMPORT = {
    "storage": set(),
    "lsp": set(),
    "semantic": {"storage"},
    # the front ends reach the layers below only through the engine (navigator.public, navigator.errors)
    "navigator/frontends": {"navigator"},
}


def _our_packages(path: Path) -> dict[str, int]:
    """Our top-level packages ``path`` imports (any level, TYPE_CHECKING included), each with the
    first line that does."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top in OURS:
                found.setdefault(top, node.lineno)
    return found


@pytest.mark.parametrize("layer", sorted(MAY_IMPORT))
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    allowed = MAY_IMPORT[layer] | {layer.split("/")[0]}
    bad = {
        f"{path.relative_to(ROOT)}:{line}": package
        for path in sorted((ROOT / layer).rglob("*.py"))
        for package, line in _our_packages(path).items()
        if package not in allowed
    }
    assert not bad, f"{layer}/ may import only {sorted(allowed)}; these reach further: {bad}"


def test_the_layer_reader_sees_every_import_form(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "import os\nimport storage.db\nfrom semantic import parse\n"
        "def f():\n    from lsp.pool import ServerPool\n"
        "from . import sibling\n",
        encoding="utf-8",
    )
    assert _our_packages(src) == {"storage": 2, "semantic": 3, "lsp": 5}


BIG_MODULE_LINES = 600
LARGE_MODULES = {
    "navigator/api.py": "Navigator, the facade of every verb: each verb's documented signature, input checks and "
    "delegation to its parts (index_handle, calls, symbol_table, show, exact, search, grep)",
    "storage/pg.py": "the team store's adapter over one connection: its error mapping, schema and migration, "
    "vector cache and read legs (the write path is pg_write.py)",
    "storage/db.py": "the SQLite Store: a connection per thread, writes in transactions, and the recovery of a "
    "damaged file, which needs the store itself (reads: sqlite_queries.py, sqlite_text.py; schema: sqlite_schema.py; "
    "the file as a file: sqlite_files.py)",
    "storage/fake.py": "an in-memory fake of the whole IndexQueries Protocol with its MATCH parser, kept in one "
    "reading so the contract tests hold it against the real stores as one thing",
    "lsp/pool.py": "ServerPool: one asyncio loop and one lock over every session's lifecycle (start, readiness, "
    "restart with backoff, idle stop, release); its answers and requests are answers.py and requests.py",
    "lsp/session.py": "ServerSession: one server process, its pending requests, readiness and file freshness "
    "share that process's state",
    "navigator/team.py": "TeamStore: warm, publish, search and definitions over one store and one checkout; its "
    "ranking is navigator.pipeline's",
    "navigator/frontends/agent_setup.py": "six agents' file formats and scopes and the plan that edits them (the "
    "JSONC editor is jsonc_text.py)",
    "navigator/frontends/daemon.py": "Daemon: lifecycle, watcher with debounced re-index, request dispatch; its "
    "parts are daemon_activity, daemon_embed, daemon_identity, daemon_socket and daemon_servers",
}
"""Modules over :data:`BIG_MODULE_LINES` lines, each with the reason it stays one module."""


def _module_lines() -> dict[str, int]:
    return {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for layer in ("navigator", "semantic", "storage", "lsp")
        for path in sorted((ROOT / layer).rglob("*.py"))
    }


def test_no_module_is_over_600_lines_without_a_stated_reason() -> None:
    lines = _module_lines()
    unexplained = {m: n for m, n in lines.items() if n > BIG_MODULE_LINES and not LARGE_MODULES.get(m)}
    assert not unexplained, f"split these along a seam, or state why they stay whole: {unexplained}"


def test_every_stated_reason_is_still_needed() -> None:
    lines = _module_lines()
    stale = sorted(m for m in LARGE_MODULES if lines.get(m, 0) <= BIG_MODULE_LINES)
    assert not stale, (
        f"no longer over {BIG_MODULE_LINES} lines (or gone): drop them from LARGE_MODULES: {stale}"
    )
