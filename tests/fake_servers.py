"""Stand-in language servers for fault tests: small Python scripts in ``tests/lsp_workspaces/``
(a server that hangs, one too busy to answer, one slow to load...), run as real processes
over stdio, registered the way nav's real servers are (:class:`lsp.registry.ServerDefinition`)."""

from __future__ import annotations

import sys
from pathlib import Path

import lsp.registry as registry

SCRIPTS = Path(__file__).resolve().parent / "lsp_workspaces"


class ScriptServer(registry.ServerDefinition):
    """``python SCRIPT ARGS...`` as the Python language server."""

    name = "script"
    key = "python"
    languages = frozenset({"python"})
    extensions = frozenset({".py"})
    binaries = ()
    install = "-"
    script = "hanging_server.py"
    args: tuple[str, ...] = ()

    def locate(self) -> str | None:
        return sys.executable

    def launch(self, root: Path, binary: str) -> registry.Launch:
        return registry.Launch(cmd=(binary, str(SCRIPTS / self.script), *self.args), cwd=str(root))


def script_server(name: str, script: str, *args: str) -> type[ScriptServer]:
    """A :class:`ScriptServer` named ``name`` that runs ``script`` with ``args``."""
    return type(f"{name.title()}Server", (ScriptServer,), {"name": name, "script": script, "args": args})
