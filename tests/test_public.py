"""The front ends import the engine only; what they need of storage, semantic and lsp the
engine offers in :mod:`navigator.public`, loaded on first use."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import navigator.public as public

REPO = Path(__file__).resolve().parent.parent
BELOW = ("storage", "semantic", "lsp")


def _imports_below(path: Path) -> list[str]:
    """Every import of ``storage``, ``semantic`` or ``lsp`` in ``path``, at any level (function
    bodies and ``if TYPE_CHECKING:`` included)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in BELOW]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] in BELOW
        ):
            found.append(f"{node.lineno}: from {node.module}")
    return found


def test_the_front_ends_import_nothing_below_the_engine() -> None:
    bad = {
        str(path.relative_to(REPO)): hits
        for path in sorted((REPO / "navigator" / "frontends").glob("*.py"))
        if (hits := _imports_below(path))
    }
    assert not bad, f"front ends reaching past the engine (offer it in navigator/public.py): {bad}"


@pytest.mark.parametrize("name", sorted(set(public.__all__) - {"PACKAGES"}))
def test_each_offered_name_is_the_lower_layers_own(name: str) -> None:
    module, attr = public._WHERE[name]
    assert getattr(public, name) is getattr(importlib.import_module(module), attr)


def test_the_static_names_are_the_lazy_ones() -> None:
    """What mypy sees (the ``TYPE_CHECKING`` imports) is what runs (``_WHERE``)."""
    tree = ast.parse(Path(public.__file__).read_text(encoding="utf-8"))
    static: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in BELOW:
            assert node.module is not None
            static.update({a.asname or a.name: (node.module, a.name) for a in node.names})
    assert static == public._WHERE
    assert set(public.__all__) == {*static, "PACKAGES"}
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        public.nope  # noqa: B018 - the access itself is the test


def test_importing_it_loads_nothing_below_and_a_name_only_its_module() -> None:
    code = (
        "import sys, navigator.public as p\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('storage', 'semantic', 'lsp', 'multilspy')))\n"
        "p.redact\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('semantic', 'lsp', 'multilspy', 'numpy')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO, check=True
    )
    assert out.stdout.splitlines() == ["[]", "[]"], out.stdout
    assert [p for p in public.PACKAGES if not (REPO / p / "__init__.py").is_file()] == []
