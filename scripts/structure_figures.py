"""The structure figures of issue 20, read from the source by its AST (nothing is imported or run).

    python scripts/structure_figures.py            # this checkout, a Markdown table
    python scripts/structure_figures.py --json     # the same as JSON
    python scripts/structure_figures.py --root DIR # another checkout (e.g. a worktree of an older commit)

Figures:

- **SQL outside storage**: string literals in ``navigator/``, ``semantic/`` and ``lsp/`` that start
  with an upper-case SQL keyword (SELECT, INSERT, UPDATE, DELETE, WITH, CREATE, DROP, ALTER, PRAGMA, REPLACE,
  BEGIN, VACUUM; an f-string counts by its first literal part), plus calls of ``.execute``,
  ``.executemany`` or ``.executescript`` there whose first argument is not such a literal, and calls
  of a ``*_where`` method (an SQL condition passed as text). Beside it, the reads of a ``.conn``
  attribute there: a database connection handled outside the store.
- **Front-end imports past the engine**: ``import`` statements in ``navigator/frontends/`` (module
  level or inside a function, ``TYPE_CHECKING`` ones included) that name ``storage``, ``semantic``
  or ``lsp``.
- **Module sizes**: physical lines of every module of the four packages; those over 600 lines and
  their share of the code; the largest classes (lines, methods).
- **Ranking switches left off**: upper-case module constants of the ranking modules (and the fields of
  a ``RankingConfig`` dataclass, wherever it lives) whose shipped value does nothing: ``False``,
  ``0``/``0.0``, ``None``, or ``1.0`` for a ``*_PENALTY``/``*_BOOST`` multiplier.
- **Engine constants patched from outside** (and of them, ranking settings: names defined in the
  ranking modules): ``setattr(module, "NAME", ...)`` and
  ``monkeypatch.setattr(module, "NAME", ...)``/``monkeypatch.setattr("pkg.mod.NAME", ...)`` in
  ``tests/`` and ``bench/`` whose target is an upper-case name of an engine module.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

PACKAGES = ("navigator", "semantic", "storage", "lsp")
OUTSIDE_STORAGE = ("navigator", "semantic", "lsp")
RANKING_MODULES = (
    "semantic/fusion.py",
    "semantic/lexical.py",
    "navigator/search.py",
    "navigator/team.py",
    "navigator/find.py",
)
SQL_START = re.compile(
    r"\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER|PRAGMA|REPLACE|BEGIN|VACUUM)\s"
)
EXECUTE = frozenset({"execute", "executemany", "executescript"})
BIG = 600


@dataclass
class Figures:
    sql_outside_storage: int = 0
    sql_by_file: dict[str, int] = field(default_factory=dict)
    raw_connections_outside_storage: int = 0
    frontend_imports_past_engine: int = 0
    frontend_imports_by_package: dict[str, int] = field(default_factory=dict)
    modules: int = 0
    lines: int = 0
    modules_over_600: list[tuple[str, int]] = field(default_factory=list)
    share_over_600: float = 0.0
    largest_classes: list[tuple[str, int, int]] = field(default_factory=list)
    switches_left_off: list[str] = field(default_factory=list)
    settings_patched_from_outside: int = 0
    ranking_settings_patched_from_outside: int = 0
    patched_by_file: dict[str, int] = field(default_factory=dict)


def _py_files(root: Path, package: str) -> list[Path]:
    return sorted(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError):
        return None


def _literal_text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        first = node.values[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def _is_sql(node: ast.AST) -> bool:
    text = _literal_text(node)
    return text is not None and SQL_START.match(text) is not None


def count_sql(tree: ast.Module) -> int:
    """SQL literals, plus execute calls whose statement is not a literal (built elsewhere)."""
    found = 0
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    inside_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if id(node) in docstrings or id(node) in inside_fstring:
            continue
        if (
            isinstance(node, (ast.Constant, ast.JoinedStr))
            and _is_sql(node)
            or (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in EXECUTE
                and not (node.args and _is_sql(node.args[0]))
            )
        ):
            found += 1
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr.endswith("_where")
        ):
            found += 1  # an SQL condition handed to the store as text
    return found


def count_raw_connections(tree: ast.Module) -> int:
    """``x.conn`` reads: a database connection handled outside the store."""
    return sum(isinstance(n, ast.Attribute) and n.attr == "conn" for n in ast.walk(tree))


def imported_packages(tree: ast.Module) -> list[str]:
    """The top-level package of every import statement's module(s), one entry per name imported."""
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append(node.module.split(".")[0])
    return out


def _noop_value(name: str, value: ast.expr) -> bool:
    if not isinstance(value, ast.Constant):
        return False
    v = value.value
    if v is None or v is False:
        return True
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)) and v == 0:
        return True
    multiplier = name.upper().endswith(("_PENALTY", "_BOOST"))
    return multiplier and isinstance(v, (int, float)) and v == 1


def switches_left_off(tree: ast.Module, where: str) -> list[str]:
    out: list[str] = []
    for node in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            name = target.id
            if name.isupper() and not name.startswith("_") and _noop_value(name, value):
                out.append(f"{where}:{name}")
        if isinstance(node, ast.ClassDef) and node.name == "RankingConfig":
            for item in node.body:
                named = isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                if named and item.value and _noop_value(item.target.id, item.value):
                    out.append(f"{where}:RankingConfig.{item.target.id}")
    return out


def _patch_target(call: ast.Call) -> str | None:
    """The patched attribute name of a setattr/monkeypatch.setattr call, if it is upper-case."""
    func = call.func
    is_setattr = (isinstance(func, ast.Name) and func.id == "setattr") or (
        isinstance(func, ast.Attribute) and func.attr == "setattr"
    )
    if not is_setattr or not call.args:
        return None
    if len(call.args) >= 2:
        name = _literal_text(call.args[1])
        if name and name.isupper():
            return name
    dotted = _literal_text(call.args[0])
    if dotted and "." in dotted:
        last = dotted.rsplit(".", 1)[1]
        if last.isupper() and dotted.split(".")[0] in PACKAGES:
            return last
    return None


def _upper_names(tree: ast.Module) -> set[str]:
    """The upper-case names a module assigns at its top level (its constants)."""
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names.update(t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper())
    return names


def _engine_constants(root: Path) -> set[str]:
    names: set[str] = set()
    for package in PACKAGES:
        for path in _py_files(root, package):
            tree = _parse(path)
            names |= _upper_names(tree) if tree else set()
    return names


def measure(root: Path) -> Figures:
    fig = Figures()
    for package in OUTSIDE_STORAGE:
        for path in _py_files(root, package):
            tree = _parse(path)
            n = count_sql(tree) if tree else 0
            fig.raw_connections_outside_storage += count_raw_connections(tree) if tree else 0
            if n:
                fig.sql_by_file[str(path.relative_to(root))] = n
    fig.sql_outside_storage = sum(fig.sql_by_file.values())

    for path in _py_files(root, "navigator/frontends"):
        tree = _parse(path)
        for package in imported_packages(tree) if tree else []:
            if package in ("storage", "semantic", "lsp"):
                fig.frontend_imports_by_package[package] = fig.frontend_imports_by_package.get(package, 0) + 1
    fig.frontend_imports_past_engine = sum(fig.frontend_imports_by_package.values())

    sizes: list[tuple[str, int]] = []
    classes: list[tuple[str, int, int]] = []
    for package in PACKAGES:
        for path in _py_files(root, package):
            rel = str(path.relative_to(root))
            text = path.read_text(encoding="utf-8", errors="replace")
            sizes.append((rel, len(text.splitlines())))
            tree = _parse(path)
            for node in ast.walk(tree) if tree else []:
                if isinstance(node, ast.ClassDef) and node.end_lineno:
                    methods = sum(isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) for b in node.body)
                    classes.append((f"{rel}:{node.name}", node.end_lineno - node.lineno + 1, methods))
    fig.modules = len(sizes)
    fig.lines = sum(n for _, n in sizes)
    fig.modules_over_600 = sorted(((p, n) for p, n in sizes if n > BIG), key=lambda x: -x[1])
    fig.share_over_600 = round(sum(n for _, n in fig.modules_over_600) / max(fig.lines, 1), 3)
    fig.largest_classes = sorted(classes, key=lambda c: -c[1])[:8]

    ranking = [Path(m) for m in RANKING_MODULES]
    ranking += [p.relative_to(root) for p in _py_files(root, "semantic") if p.name == "ranking.py"]
    for rel in dict.fromkeys(ranking):
        path = root / rel
        tree = _parse(path) if path.exists() else None
        if tree:
            fig.switches_left_off.extend(switches_left_off(tree, str(rel)))

    constants = _engine_constants(root)
    ranking_names: set[str] = set()
    for rel in RANKING_MODULES:
        tree = _parse(root / rel) if (root / rel).exists() else None
        ranking_names |= _upper_names(tree) if tree else set()
    for folder in ("tests", "bench"):
        for path in sorted((root / folder).rglob("*.py")):
            if "corpora" in path.parts or "workspaces" in path.parts or "archive" in path.parts:
                continue
            tree = _parse(path)
            n = 0
            for node in ast.walk(tree) if tree else []:
                if isinstance(node, ast.Call) and (name := _patch_target(node)) and name in constants:
                    n += 1
                    fig.ranking_settings_patched_from_outside += name in ranking_names
            if n:
                fig.patched_by_file[str(path.relative_to(root))] = n
    fig.settings_patched_from_outside = sum(fig.patched_by_file.values())
    return fig


def markdown(fig: Figures) -> str:
    lines = [
        "| figure | value |",
        "|---|---|",
        f"| SQL statements outside storage/ | {fig.sql_outside_storage} |",
        f"| database connections read outside storage/ (`.conn`) | {fig.raw_connections_outside_storage} |",
        f"| front-end imports past the engine (storage, semantic, lsp) | {fig.frontend_imports_past_engine} "
        f"({', '.join(f'{k} {v}' for k, v in sorted(fig.frontend_imports_by_package.items())) or '-'}) |",
        f"| modules / lines | {fig.modules} / {fig.lines} |",
        f"| modules over {BIG} lines (share of the code) | {len(fig.modules_over_600)} ({fig.share_over_600:.0%}) |",
        f"| ranking switches left off | {len(fig.switches_left_off)} |",
        f"| engine constants patched from tests/bench (of them ranking settings) | "
        f"{fig.settings_patched_from_outside} ({fig.ranking_settings_patched_from_outside}) |",
        "",
        "SQL by file: " + (", ".join(f"{k} {v}" for k, v in fig.sql_by_file.items()) or "none"),
        "",
        "Modules over 600 lines: " + (", ".join(f"{p} {n}" for p, n in fig.modules_over_600) or "none"),
        "",
        "Largest classes (lines, methods): " + ", ".join(f"{c} {n} ({m})" for c, n, m in fig.largest_classes),
        "",
        "Switches left off: " + (", ".join(fig.switches_left_off) or "none"),
        "",
        "Patched from outside, by file: "
        + (", ".join(f"{k} {v}" for k, v in fig.patched_by_file.items()) or "none"),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent), help="a checkout of nav")
    ap.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    if not (root / "navigator").is_dir():
        print(
            f"nav: {str(root)[:80]} is not a checkout of nav (no navigator/ folder); pass --root",
            file=sys.stderr,
        )
        return 2
    fig = measure(root)
    print(json.dumps(asdict(fig), indent=1) if args.json else markdown(fig))
    return 0


if __name__ == "__main__":
    sys.exit(main())
