"""TypeScript and JavaScript: typescript-language-server over tsserver, from nav's npm prefix."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, ClassVar

from lsp.servers.base import SKIP_DIRS, ServerDefinition, find_binary, node_bin_dir, progress_end

# -- TypeScript / JavaScript -------------------------------------------------------------


class TypeScriptLanguageServer(ServerDefinition):
    name = "typescript-language-server"
    key = "typescript"
    languages = frozenset({"typescript", "tsx", "javascript"})
    extensions = frozenset({".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"})
    binaries = ("typescript-language-server",)
    args = ("--stdio",)
    install = 'npm install --prefix "$VIRTUAL_ENV/lsp-node" typescript-language-server@4.3.3 typescript@5'
    ready_after_initialize = False
    open_before_ready = True
    loading = re.compile(r"Initializing JS/TS")

    _IDS: ClassVar[dict[str, str]] = {
        ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
        ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
    }  # fmt: skip

    def locate(self) -> str | None:
        binary = find_binary(self.binaries)
        return binary if binary and node_bin_dir() else None

    def env(self, root: Path) -> dict[str, str]:
        node = node_bin_dir()
        if node and not shutil.which("node"):
            return {"PATH": node + os.pathsep + os.environ.get("PATH", "")}
        return {}

    def __init__(self) -> None:
        self._titles: dict[str, str] = {}

    def prepare(self, root: Path) -> list[str]:
        # tsserver reports loading (and so readiness) only for configured projects.
        configs = ("tsconfig.json", "jsconfig.json")
        if not any((root / c).exists() for c in configs) and not any(
            p.name in configs
            for d in root.iterdir()
            if d.is_dir() and d.name not in SKIP_DIRS
            for p in d.iterdir()
        ):
            self.ready_after_initialize = True
            return [
                "no tsconfig.json/jsconfig.json: files are seen as loose scripts; "
                "cross-file answers may be incomplete"
            ]
        return []

    def language_id(self, path: str) -> str:
        return self._IDS.get(Path(path).suffix.lower(), "typescript")

    def is_ready_event(self, method: str, params: Any) -> bool:
        assert self.loading is not None
        return method == "$/progress" and progress_end(params, self.loading, self._titles)

    def _tsserver(self) -> str | None:
        binary = self.locate()
        if binary is None:
            return None
        # <prefix>/node_modules/.bin/typescript-language-server -> <prefix>/node_modules/typescript
        modules = Path(binary).resolve().parents[2]
        candidate = modules / "typescript" / "lib" / "tsserver.js"
        return str(candidate) if candidate.exists() else None

    def initialization_options(self, root: Path) -> dict[str, Any] | None:
        opts: dict[str, Any] = {
            "hostInfo": "nav",
            # Automatic type acquisition runs npm: never at run time.
            "disableAutomaticTypingAcquisition": True,
            "preferences": {"includeCompletionsForModuleExports": False},
        }
        tsserver = self._tsserver()
        local = root / "node_modules" / "typescript" / "lib" / "tsserver.js"
        if local.exists():
            tsserver = str(local)
        if tsserver:
            opts["tsserver"] = {"path": tsserver}
        return opts

    def version(self, binary: str, *, timeout_s: float = 10.0) -> str | None:
        own = super().version(binary, timeout_s=timeout_s)
        tsserver = self._tsserver()
        if tsserver:
            pkg = Path(tsserver).parents[1] / "package.json"
            try:
                ts = json.loads(pkg.read_text()).get("version")
                return f"{own} (typescript {ts})"
            except (OSError, ValueError):
                pass
        return own
