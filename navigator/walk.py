"""Walking a repository: which files nav indexes, and why it skips the others.

Honours ``.gitignore`` files at every level (and ``.navignore``, same syntax), skips
``.git``, virtualenvs, ``node_modules`` and other vendored or generated trees,
binary files and files above a size limit. Symlinks to directories are not
followed (no loops); unreadable entries are reported, never fatal.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

DEFAULT_SKIP_DIRS: frozenset[str] = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".nav",
        ".venv",
        "venv",
        ".env",
        "env",
        "node_modules",
        "bower_components",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".idea",
        ".vscode",
        "site-packages",
        "dist",
        "build",
        "target",
        ".gradle",
        ".next",
        ".cache",
        "vendor",
        "third_party",
    }
)

# Extensions that are never source code, so nav does not even open them.
BINARY_EXTENSIONS: frozenset[str] = frozenset(
    {
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".svgz", ".pdf", ".zip",
        ".gz", ".tgz", ".bz2", ".xz", ".7z", ".tar", ".jar", ".war", ".class", ".so", ".dll",
        ".dylib", ".a", ".o", ".obj", ".exe", ".bin", ".pyc", ".pyo", ".whl", ".egg", ".db",
        ".sqlite", ".sqlite3", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4",
        ".wav", ".ogg", ".flac", ".mov", ".avi", ".mkv", ".npy", ".npz", ".pkl", ".pt", ".onnx",
        ".safetensors", ".parquet", ".lock", ".map",
    }
)  # fmt: skip
# Compound suffixes checked by endswith (few, so cheap).
BINARY_SUFFIXES: tuple[str, ...] = (".min.js", ".min.css")

DEFAULT_MAX_FILE_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class WalkedFile:
    path: str
    """Root-relative POSIX path."""
    abspath: str
    size: int
    mtime_ns: int


@dataclass
class WalkResult:
    files: list[WalkedFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(path, reason) for files that were seen and left out for a reason worth reporting."""


@dataclass(frozen=True, slots=True)
class WalkOptions:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    skip_dirs: frozenset[str] = DEFAULT_SKIP_DIRS
    extra_ignores: tuple[str, ...] = ()


def _load_spec(directory: str, names: set[str]) -> pathspec.GitIgnoreSpec | None:
    lines: list[str] = []
    for name in (".gitignore", ".navignore"):
        if name not in names:
            continue
        p = os.path.join(directory, name)
        try:
            with open(p, encoding="utf-8", errors="replace") as fh:
                lines.extend(fh.read().splitlines())
        except OSError:
            continue
    if not lines:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
    """Apply the ignore files from the root down; a deeper file's rules win (negations work)."""
    verdict = False
    candidate = rel + "/" if is_dir else rel
    for base, spec in specs:
        if base:
            if not candidate.startswith(base + "/"):
                continue
            sub = candidate[len(base) + 1 :]
        else:
            sub = candidate
        result = spec.check_file(sub)
        if result.include is not None:
            verdict = bool(result.include)
    return verdict


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first block means binary (git's own heuristic)."""
    return b"\x00" in head


def walk(root: Path, options: WalkOptions | None = None) -> WalkResult:
    """List the indexable files under ``root``, in a stable order."""
    opts = options or WalkOptions()
    root_s = os.path.abspath(root)
    result = WalkResult()
    root_specs: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    if opts.extra_ignores:
        root_specs.append(("", pathspec.GitIgnoreSpec.from_lines(list(opts.extra_ignores))))
    for item in _walk_dir(root_s, "", root_specs, opts, result):
        result.files.append(item)
    result.files.sort(key=lambda f: f.path)
    return result


def walk_paths(root: Path, paths: Iterable[str], options: WalkOptions | None = None) -> WalkResult:
    """The same verdicts as :func:`walk`, for a few root-relative paths only (no tree walk).

    A path that is missing, ignored, in a skipped directory, binary by name or too large is
    simply absent from ``files``: for an incremental update that means "not in the index".
    """
    opts = options or WalkOptions()
    root_s = os.path.abspath(root)
    result = WalkResult()
    base: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    if opts.extra_ignores:
        base.append(("", pathspec.GitIgnoreSpec.from_lines(list(opts.extra_ignores))))
    spec_cache: dict[str, pathspec.GitIgnoreSpec | None] = {}

    def spec_of(rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        if rel_dir not in spec_cache:
            abs_dir = os.path.join(root_s, rel_dir) if rel_dir else root_s
            spec_cache[rel_dir] = _load_spec(abs_dir, {".gitignore", ".navignore"})
        return spec_cache[rel_dir]

    for rel in sorted(set(paths)):
        parts = rel.split("/")
        if not rel or ".." in parts or rel.startswith("/"):
            continue
        specs = list(base)
        excluded = False
        for depth in range(len(parts)):
            rel_dir = "/".join(parts[:depth])
            if depth and (
                parts[depth - 1] in opts.skip_dirs
                or os.path.islink(os.path.join(root_s, rel_dir))
                or os.path.exists(os.path.join(root_s, rel_dir, "pyvenv.cfg"))
                or _ignored(specs, rel_dir, True)
            ):
                excluded = True
                break
            spec = spec_of(rel_dir)
            if spec is not None:
                specs.append((rel_dir, spec))
        if excluded or _ignored(specs, rel, False):
            continue
        abspath = os.path.join(root_s, rel)
        try:
            st = os.stat(abspath)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and (wf := _take_file(rel, abspath, st, opts, result)) is not None:
            result.files.append(wf)
    return result


def _take_file(
    rel: str, abspath: str, st: os.stat_result, opts: WalkOptions, result: WalkResult
) -> WalkedFile | None:
    """The verdict on one regular, not-ignored file: binary by name, too large (reported), or taken."""
    name = rel.rsplit("/", 1)[-1].lower()
    if os.path.splitext(name)[1] in BINARY_EXTENSIONS or name.endswith(BINARY_SUFFIXES):
        return None
    if st.st_size > opts.max_file_bytes:
        result.skipped.append(
            (rel, f"larger than the size limit ({st.st_size} > {opts.max_file_bytes} bytes)")
        )
        return None
    return WalkedFile(rel, abspath, st.st_size, st.st_mtime_ns)


def _walk_dir(
    root: str,
    rel_dir: str,
    specs: list[tuple[str, pathspec.GitIgnoreSpec]],
    opts: WalkOptions,
    result: WalkResult,
) -> Iterator[WalkedFile]:
    abs_dir = os.path.join(root, rel_dir) if rel_dir else root
    try:
        entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
    except OSError as exc:
        result.skipped.append((rel_dir or ".", f"unreadable directory: {exc.strerror}"))
        return
    spec = _load_spec(abs_dir, {e.name for e in entries})
    if spec is not None:
        specs = [*specs, (rel_dir, spec)]
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        try:
            is_link = entry.is_symlink()
            st = entry.stat(follow_symlinks=True)
        except OSError:
            if entry.is_symlink():
                result.skipped.append((rel, "broken symlink"))
            else:
                result.skipped.append((rel, "unreadable"))
            continue
        if stat.S_ISDIR(st.st_mode):
            if entry.name in opts.skip_dirs or is_link:
                continue  # vendored/generated tree, or a directory symlink (could loop)
            if _ignored(specs, rel, True):
                continue
            if os.path.exists(os.path.join(entry.path, "pyvenv.cfg")):
                continue  # a virtualenv under any name
            yield from _walk_dir(root, rel, specs, opts, result)
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if _ignored(specs, rel, False):
            continue
        if (wf := _take_file(rel, entry.path, st, opts, result)) is not None:
            yield wf
