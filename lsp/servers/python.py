"""Python's servers: basedpyright (preferred) and jedi-language-server."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from lsp.servers.base import ServerDefinition

# -- Python ------------------------------------------------------------------------------


def target_python(root: Path) -> str | None:
    """The target repository's own interpreter: its virtualenv, else a system python —
    never nav's own virtualenv."""
    for name in (".venv", "venv", "env", ".env"):
        for exe in ("bin/python", "Scripts/python.exe"):
            p = root / name / exe
            if p.exists():
                return str(p)
    own = {str(Path(v).resolve()) for v in (sys.prefix, os.environ.get("VIRTUAL_ENV") or sys.prefix)}
    for d in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin", "/usr/local/bin"]:
        for exe in ("python3", "python"):
            p = Path(d) / exe
            if (
                p.is_file()
                and os.access(p, os.X_OK)
                and not any(str(p.resolve()).startswith(o + os.sep) for o in own)
                and not any(str(Path(d).resolve()).startswith(o) for o in own)
            ):
                return str(p)
    return None


def python_extra_paths(root: Path) -> list[str]:
    """``src/`` layouts: make ``src`` an import root."""
    return [str(root / "src")] if (root / "src").is_dir() else []


class BasedPyright(ServerDefinition):
    name = "basedpyright"
    key = "python"
    languages = frozenset({"python"})
    extensions = frozenset({".py", ".pyi"})
    binaries = ("basedpyright-langserver",)
    args = ("--stdio",)
    install = "pip install basedpyright"
    ready_after_initialize = False
    open_to_ask = False
    bom_is_text = True  # pyright's positions count it (issue 17: a BOM line's names were missed)
    # Its incoming calls walk the parse tree of every file of the program for each question (72-115
    # ms on pytest's 590 files against 32-47 for references, which read only the files holding the
    # name) and keep the references that are calls or uses of a member on an instance: the same
    # 1,964 sites over 300 pytest names, bar 2 of 300 names (bench/callers_oracle.py).
    callers_from_references = True
    uncancellable = frozenset(
        {"textDocument/references", "textDocument/implementation", "workspace/executeCommand"}
    )
    """basedpyright 1.40 (pyright's ``onReferences``, ``onImplementation``, ``onExecuteCommand``): a cancel that
    arrives before the search starts (while it waits for ``window/workDoneProgress/create``,
    i.e. whenever the server is busy) leaves a cancellation source whose ``cancel()`` throws;
    it stays the "pending" source, and every later request of that method answers -32603
    ``this._token.cancel is not a function`` until the server restarts. Not cancelling costs
    nothing lasting: the server cancels a pending references search itself when the next
    one arrives."""
    _READY = re.compile(r"Found \d+ source files?|No source files found|No configuration file found")
    _FOUND = re.compile(r"Found \d+ source files?|No source files found")

    def version(self, binary: str, *, timeout_s: float = 10.0) -> str | None:
        cli = Path(binary).with_name("basedpyright")
        return super().version(str(cli) if cli.exists() else binary, timeout_s=timeout_s)

    def settings(self, root: Path) -> dict[str, Any]:
        analysis = {
            "typeCheckingMode": "off",
            "diagnosticMode": "openFilesOnly",
            "autoSearchPaths": True,
            "useLibraryCodeForTypes": True,
            "extraPaths": python_extra_paths(root),
        }
        python: dict[str, Any] = {"analysis": analysis}
        interpreter = target_python(root)
        if interpreter:
            python["pythonPath"] = interpreter
        return {
            "python": python,
            "python.analysis": analysis,
            "basedpyright": {"analysis": analysis},
            "basedpyright.analysis": analysis,
        }

    def is_ready_event(self, method: str, params: Any) -> bool:
        # FINDINGS.md: answers are empty until the log line "Found N source files".
        if method == "window/logMessage" and isinstance(params, dict):
            return bool(self._FOUND.search(str(params.get("message", ""))))
        return False


class JediLanguageServer(ServerDefinition):
    """Fallback for Python only: its references stop after 30 files."""

    name = "jedi-language-server"
    key = "python"
    languages = frozenset({"python"})
    extensions = frozenset({".py", ".pyi"})
    binaries = ("jedi-language-server",)
    install = "pip install jedi-language-server"

    def initialization_options(self, root: Path) -> dict[str, Any] | None:
        opts: dict[str, Any] = {"workspace": {"extraPaths": python_extra_paths(root)}}
        interpreter = target_python(root)
        if interpreter:
            opts["workspace"]["environmentPath"] = interpreter
        return opts
