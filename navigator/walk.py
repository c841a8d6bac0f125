"""Walking a repository: which files nav indexes, and why it skips the others.

Honours ``.gitignore`` files at every level (and ``.navignore``, same syntax), the
repository's ``.git/info/exclude`` and the user's global excludes file (git's
``core.excludesFile``, by default ``~/.config/git/ignore``), as git does; skips
``.git``, virtualenvs, ``node_modules`` and other vendored or generated trees,
binary files and files above a size limit. Unreadable entries are reported, never fatal.

Trust boundaries (README, "What gets indexed"):

- Symlinks are never followed: not to directories (no loops), not to files. A link whose
  target is under the root changes nothing (the target is indexed under its own path); a
  link that leaves the root is reported and left out, so nothing outside the root is read.
- Likely-secret files (:data:`SECRET_NAMES`, :data:`SECRET_SUFFIXES`, ``.env.*``, ``*.env``) are left
  out and reported, unless ``[index] include_secrets = true``.
- A file or folder whose name is not valid UTF-8 is left out and reported (escaped),
  since paths are stored and printed as text; rename it to index it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pathspec

from navigator.confine import is_inside
from navigator.paths import printable

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

# Likely-secret files: private keys, credential stores, environment files. Matched on the
# lower-cased file name; a template (`.env.example`, `secrets.json.sample`) is not a secret.
SECRET_NAMES: frozenset[str] = frozenset(
    {
        ".env", ".envrc", ".netrc", "_netrc", ".pgpass", ".pypirc", ".npmrc", ".git-credentials",
        ".htpasswd", ".secrets", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk",
        "id_ed25519_sk", "credentials", "credentials.json", "credentials.yml", "credentials.yaml",
        "secrets.json", "secrets.yml", "secrets.yaml", "secrets.toml", "secrets.env",
        "client_secret.json", "service-account.json", "terraform.tfstate",
    }
)  # fmt: skip
SECRET_SUFFIXES: tuple[str, ...] = (
    ".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", ".ppk", ".kdbx", ".gpg", ".tfstate",
    ".tfstate.backup",
)  # fmt: skip
_TEMPLATE_SUFFIXES: tuple[str, ...] = (".example", ".sample", ".template", ".dist", ".tmpl")
SECRET_REASON = (
    "likely secret (private key, credentials or .env); `[index] include_secrets = true` indexes it"
)


def looks_secret(name: str) -> bool:
    """True for a file name that usually holds a private key or credentials."""
    low = name.lower()
    if low.endswith(_TEMPLATE_SUFFIXES):
        return False
    return (
        low in SECRET_NAMES
        or low.endswith(SECRET_SUFFIXES)
        or low.startswith(".env.")
        or low.endswith(".env")  # prod.env, docker.env: environment files by another name
        or (low.startswith("client_secret") and low.endswith(".json"))
    )


def printable_path(path: str) -> str:
    """``path`` for a report: bytes that are not UTF-8 as ``\\xff``, control characters escaped."""
    return printable(path)


def _valid_name(rel: str) -> bool:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # os.scandir's surrogate escapes of bytes that are not UTF-8
        return False
    return True


NOT_UTF8_REASON = "file name is not valid UTF-8; rename it to index it"


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
    dirs: list[str] = field(default_factory=list)
    """Root-relative folders the walk entered (``""``: the root), in the order entered."""


@dataclass(frozen=True, slots=True)
class WalkOptions:
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    skip_dirs: frozenset[str] = DEFAULT_SKIP_DIRS
    extra_ignores: tuple[str, ...] = ()
    include_secrets: bool = False
    """Index likely-secret files (:func:`looks_secret`) too."""


class _Spec(Protocol):
    def check_file(self, file: str) -> Any: ...


@dataclass(frozen=True, slots=True)
class _Under:
    """Ignore rules written relative to a folder above the root (the repository's top)."""

    prefix: str
    spec: pathspec.GitIgnoreSpec

    def check_file(self, file: str) -> Any:
        return self.spec.check_file(self.prefix + file)


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return []


def _git_dir(top: str) -> str | None:
    """The git folder of the repository whose top is ``top`` (a ``.git`` file of a worktree or
    submodule points at it), its common folder for a linked worktree."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        git_dir = dot_git
    else:
        first = (_read_lines(dot_git) or [""])[0]
        if not first.startswith("gitdir:"):
            return None
        git_dir = os.path.join(top, first.removeprefix("gitdir:").strip())
    common = (_read_lines(os.path.join(git_dir, "commondir")) or [""])[0].strip()
    return os.path.join(git_dir, common) if common else git_dir


_EXCLUDES_FILE = re.compile(r"^\s*excludesfile\s*=\s*(.+?)\s*$", re.IGNORECASE)


def _global_excludes_file() -> str:
    """git's ``core.excludesFile`` from the user's git config (a plain read: no git process),
    else its default, ``$XDG_CONFIG_HOME/git/ignore``."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    found = os.path.join(xdg, "git", "ignore")
    for config in (os.path.join(xdg, "git", "config"), os.path.expanduser("~/.gitconfig")):
        section = ""
        for line in _read_lines(config):
            stripped = line.strip()
            if stripped.startswith("["):
                section = stripped.strip("[]").strip().lower()
            elif section == "core" and (m := _EXCLUDES_FILE.match(stripped)):
                found = os.path.expanduser(m.group(1).strip('"'))
    return found


def git_excludes(root: str) -> list[tuple[str, _Spec]]:
    """The rules git applies besides ``.gitignore`` files: the user's global excludes file,
    then the repository's ``info/exclude`` (which wins), both relative to the repository's
    top (the nearest folder at or above ``root`` holding ``.git``)."""
    top = root
    while not os.path.lexists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:
            return []
        top = parent
    git_dir = _git_dir(top)
    prefix = "" if top == root else os.path.relpath(root, top).replace(os.sep, "/") + "/"
    specs: list[tuple[str, _Spec]] = []
    sources = [_global_excludes_file()] + ([os.path.join(git_dir, "info", "exclude")] if git_dir else [])
    for source in sources:
        lines = _read_lines(source)
        if any(line.strip() and not line.startswith("#") for line in lines):
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
            specs.append(("", _Under(prefix, spec) if prefix else spec))
    return specs


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


def _ignored(specs: list[tuple[str, _Spec]], rel: str, is_dir: bool) -> bool:
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


def _root_specs(root: str, opts: WalkOptions) -> list[tuple[str, _Spec]]:
    """The ignore rules that apply from the root down before any ``.gitignore`` is read: git's
    excludes (global, ``info/exclude``), then ``[index] ignore``. The walk and the watcher both
    start here, so they agree on what is indexed."""
    specs: list[tuple[str, _Spec]] = git_excludes(root)
    if opts.extra_ignores:
        specs.append(("", pathspec.GitIgnoreSpec.from_lines(list(opts.extra_ignores))))
    return specs


def walk(root: Path, options: WalkOptions | None = None, *, under: str = "") -> WalkResult:
    """List the indexable files under ``root``, in a stable order.

    ``under``: a root-relative folder; only its part of the tree, with the same verdicts as
    the whole walk (nothing when the walk would not enter it)."""
    opts = options or WalkOptions()
    root_s = os.path.abspath(root)
    result = WalkResult()
    specs = _specs_down_to(root_s, under, opts)
    if specs is not None:
        for item in _walk_dir(root_s, under, specs, opts, result):
            result.files.append(item)
    result.files.sort(key=lambda f: f.path)
    return result


def walk_dirs(root: Path, options: WalkOptions | None = None, *, under: str = "") -> list[str]:
    """The folders :func:`walk` enters (root-relative, ``""`` for the root), without looking at
    files: what a watcher must watch, and nothing it need not."""
    opts = options or WalkOptions()
    root_s = os.path.abspath(root)
    result = WalkResult()
    specs = _specs_down_to(root_s, under, opts)
    if specs is not None:
        for _ in _walk_dir(root_s, under, specs, opts, result, dirs_only=True):
            pass
    return result.dirs


def _specs_down_to(root: str, rel_dir: str, opts: WalkOptions) -> list[tuple[str, _Spec]] | None:
    """The ignore rules in force inside ``rel_dir`` before its own ignore files are read, or
    None when the walk would not enter it (or one of the folders above it)."""
    specs = _root_specs(root, opts)
    if not rel_dir:
        return specs
    parts = rel_dir.split("/")
    if ".." in parts or "" in parts or rel_dir.startswith("/"):
        return None
    for depth in range(len(parts)):
        above = "/".join(parts[:depth])
        abs_above = os.path.join(root, above) if above else root
        spec = _load_spec(abs_above, {".gitignore", ".navignore"})
        if spec is not None:
            specs = [*specs, (above, spec)]
        rel = "/".join(parts[: depth + 1])
        path = os.path.join(root, rel)
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode) or _skip_dir(parts[depth], path, rel, specs, opts) is not None:
            return None
    return specs


def _skip_dir(
    name: str, path: str, rel: str, specs: list[tuple[str, _Spec]], opts: WalkOptions
) -> str | None:
    """Why the walk does not enter the real (not symlinked) folder ``rel``: ``""`` for a silent
    skip, else a reason worth reporting; None when it enters it."""
    if name in opts.skip_dirs or _ignored(specs, rel, True):
        return ""  # vendored/generated tree, or ignored
    if not _valid_name(rel):
        return "folder name is not valid UTF-8; rename it to index it"
    if os.path.exists(os.path.join(path, "pyvenv.cfg")):
        return ""  # a virtualenv under any name
    return None


def walk_paths(root: Path, paths: Iterable[str], options: WalkOptions | None = None) -> WalkResult:
    """The same verdicts as :func:`walk`, for a few root-relative paths only (no tree walk).

    A path that is missing, ignored, in a skipped directory, binary by name or too large is
    simply absent from ``files``: for an incremental update that means "not in the index".
    """
    opts = options or WalkOptions()
    root_s = os.path.abspath(root)
    result = WalkResult()
    base = git_excludes(root_s)
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
            st = os.lstat(abspath)  # a symlink is never indexed (see the module's docstring)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and (wf := _take_file(rel, abspath, st, opts, result)) is not None:
            result.files.append(wf)
    return result


def _take_file(
    rel: str, abspath: str, st: os.stat_result, opts: WalkOptions, result: WalkResult
) -> WalkedFile | None:
    """The verdict on one regular, not-ignored file: binary by name, a bad name or likely secret
    or too large (reported), or taken."""
    name = rel.rsplit("/", 1)[-1].lower()
    if os.path.splitext(name)[1] in BINARY_EXTENSIONS or name.endswith(BINARY_SUFFIXES):
        return None
    if not _valid_name(rel):
        result.skipped.append((printable_path(rel), NOT_UTF8_REASON))
        return None
    if not opts.include_secrets and looks_secret(name):
        result.skipped.append((rel, SECRET_REASON))
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
    specs: list[tuple[str, _Spec]],
    opts: WalkOptions,
    result: WalkResult,
    *,
    dirs_only: bool = False,
) -> Iterator[WalkedFile]:
    abs_dir = os.path.join(root, rel_dir) if rel_dir else root
    try:
        entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
    except OSError as exc:
        result.skipped.append((rel_dir or ".", f"unreadable directory: {exc.strerror}"))
        return
    result.dirs.append(rel_dir)
    spec = _load_spec(abs_dir, {e.name for e in entries})
    if spec is not None:
        specs = [*specs, (rel_dir, spec)]
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        if dirs_only:
            try:
                real_dir = entry.is_dir(follow_symlinks=False)  # the file type from readdir: no stat
            except OSError:
                continue
            if real_dir and _skip_dir(entry.name, entry.path, rel, specs, opts) is None:
                yield from _walk_dir(root, rel, specs, opts, result, dirs_only=True)
            continue
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
            if is_link:
                continue  # a directory symlink (could loop)
            why = _skip_dir(entry.name, entry.path, rel, specs, opts)
            if why:
                result.skipped.append((printable_path(rel) + "/", why))
            if why is None:
                yield from _walk_dir(root, rel, specs, opts, result)
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        if _ignored(specs, rel, False):
            continue
        if is_link:
            if not is_inside(root, entry.path):
                result.skipped.append(
                    (printable_path(rel), "symlink to a file outside the root: not followed")
                )
            continue  # a link inside the root: its target is indexed under its own path
        if (wf := _take_file(rel, entry.path, st, opts, result)) is not None:
            yield wf
