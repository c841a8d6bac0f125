"""Go: gopls, from Debian; a module it cannot load (its Go is older than the module's) is said so."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from lsp.servers.base import ServerDefinition, find_binary, progress_end

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


_REQUIRE = re.compile(
    r"^require[ \t]*\([ \t]*\n([\s\S]*?)^\)[ \t]*\n?|^require[ \t]+(\S+[ \t]+\S+)[^\n]*\n?", re.MULTILINE
)


def strip_requirements(go_mod: str) -> str:
    """go.mod without its ``require`` directives (single lines and blocks)."""
    return _REQUIRE.sub("", go_mod)


def missing_requirements(root: Path) -> list[str]:
    """Modules required by ``root/go.mod`` whose go.mod is not in the module cache."""
    try:
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    cache = Path(
        os.environ.get("GOMODCACHE") or Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg" / "mod"
    )
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


_GO_RELEASE = re.compile(r"go\d+\.\d+(?:\.\d+)?")


def _built_with_cache() -> Path:
    """Where the Go release each gopls binary was built with is remembered, per user:
    ``$NAV_CACHE_DIR``, else ``$XDG_CACHE_HOME/nav``, else ``~/.cache/nav`` — the rule of
    :func:`semantic.onnx_int8.embed_cache_dir`, repeated: ``lsp`` imports nothing of nav's
    (``tests/test_layout.py``)."""
    env = os.environ.get("NAV_CACHE_DIR")
    if env:
        return Path(env).expanduser() / "go-built-with.json"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "nav" / "go-built-with.json"


def _binary_key(binary: str) -> str | None:
    """The binary's real path, inode, size and modification time: a reinstall changes it."""
    try:
        real = os.path.realpath(binary)
        st = os.stat(real)
    except OSError:
        return None
    return f"{real}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def _go_built_with(binary: str) -> str | None:
    """The Go release a Go binary was built with (``go version BINARY``), remembered in the
    user's cache per binary (:func:`_binary_key`): a daemon's start asks before it launches
    gopls, and ``go version`` reads both binaries — seconds on a cold disk, the launch late."""
    key = _binary_key(binary)
    cache = _built_with_cache()
    known: dict[str, Any] = {}
    try:
        loaded = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            known = loaded
    except (OSError, ValueError):
        pass
    hit = known.get(key) if key else None
    if isinstance(hit, str) and _GO_RELEASE.fullmatch(hit):
        return hit
    built = _go_version_of(binary)
    if built and key:
        fresh = {k: v for k, v in known.items() if isinstance(v, str) and _GO_RELEASE.fullmatch(v)}
        fresh = dict(list(fresh.items())[-15:])  # a few binaries at most: old installs drop out
        fresh[key] = built
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(fresh), encoding="utf-8")
            os.replace(tmp, cache)  # whole or not at all: another process may read it now
        except OSError:  # a read-only or full cache: asked again next time, nothing else lost
            with contextlib.suppress(OSError):
                tmp.unlink()
    return built


def _go_version_of(binary: str) -> str | None:
    """``go version BINARY``: the Go release a Go binary was built with."""
    go = shutil.which("go") or find_binary(("go",))
    if not go:
        return None
    try:
        out = subprocess.run([go, "version", binary], capture_output=True, text=True, timeout=20,
                             stdin=subprocess.DEVNULL, env={**os.environ, "GOTOOLCHAIN": "local"})  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    m = _GO_RELEASE.search(out.stdout)
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
        missing = missing_requirements(root)
        if not missing or (root / "vendor" / "modules.txt").exists():
            return []
        text = (root / "go.mod").read_text(encoding="utf-8", errors="replace")
        shadow.mkdir(parents=True, exist_ok=True)
        (shadow / "go.mod").write_text(strip_requirements(text))
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
            return progress_end(params, self._LOADED, self._titles)
        if method == "window/showMessage" and isinstance(params, dict):
            return "Finished loading" in str(params.get("message", ""))
        return False
