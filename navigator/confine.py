"""Confinement: nav reads and serves only files under its root.

One check for every front end (CLI, Python API, daemon, ``nav lsp``, ``nav mcp``): a path
given by a user (``PATH:LINE:COL``, an outline's file, an editor's URI) is resolved —
``..`` and symlinks included — and refused with :class:`OutsideRootError` when the real
file is not under the root's real path. Files nav opens later (a line of code for a hit)
go through :func:`read_inside`, which checks the file it actually opened, so a symlink
created after indexing cannot make nav read outside the root either.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from storage.errors import FileNotInIndexError, OutsideRootError, shorten

__all__ = ["confine", "is_inside", "open_inside", "read_inside", "read_text_inside", "root_relative", "shown"]

SHOWN_CHARS = 100


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``value`` (a path or text) for a message: :func:`storage.errors.shorten` of its text."""
    text = (
        os.fsdecode(value)
        if isinstance(value, (bytes, os.PathLike))
        else value
        if isinstance(value, str)
        else str(value)
    )
    return shorten(text, limit)


def _real_root(root: Path | str) -> str:
    return os.path.realpath(root)


def _within(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def is_inside(root: Path | str, path: str | os.PathLike[str]) -> bool:
    """True when ``path`` (absolute, or relative to ``root``) resolves to a place under ``root``."""
    real_root = _real_root(root)
    return _within(os.path.realpath(os.path.join(real_root, os.fspath(path))), real_root)


def confine(root: Path | str, path: str | os.PathLike[str], *, given_as: object = None) -> str:
    """The root-relative POSIX path of the real file ``path`` names (absolute, or relative to
    ``root``), after resolving ``..`` and symlinks; :class:`OutsideRootError` when that is not
    under the root. The file need not exist (a missing path inside the root is the caller's
    "no such file"), so nothing about files outside the root is revealed by the answer.
    ``given_as``: how the caller wrote the path, for the message (default: ``path``)."""
    real_root = _real_root(root)
    given = os.fspath(path)
    real = os.path.realpath(os.path.join(real_root, given))
    if not _within(real, real_root):
        lexical = os.path.normpath(os.path.join(real_root, given))
        how = " through a symlink" if _within(lexical, real_root) else ""
        raise OutsideRootError(
            f"`{shown(given if given_as is None else given_as)}` is outside the root {shown(real_root)}{how}; nav only reads files "
            "inside the root: pass a path under it (relative to the root, or absolute)"
        )
    return Path(os.path.relpath(real, real_root)).as_posix()


def root_relative(root: Path, path: str | os.PathLike[str]) -> str:
    """A root-relative POSIX path for a path given absolute or relative to cwd or ``root``
    (the real root): :func:`confine`'s check, then the file must exist. Raises
    :class:`OutsideRootError` for a path that escapes the root, and
    :class:`storage.errors.FileNotInIndexError` naming the path when there is no such file."""
    p = Path(path)
    try:
        if p.is_absolute():
            return confine(root, p)  # `..` and symlinks resolved: the one check
        refused: list[tuple[Path, OutsideRootError]] = []
        for cand in (Path.cwd() / p, root / p):
            try:
                rel = confine(root, cand, given_as=path)
            except OutsideRootError as exc:
                refused.append((cand, exc))
                continue
            if (root / rel).exists():
                return rel
        for cand, refusal in refused:
            if cand == root / p or cand.exists():  # escapes from the root, or names a real file
                raise refusal
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise FileNotInIndexError(f"no file `{shorten(path)}` under {root}: {exc.strerror}") from None
    raise FileNotInIndexError(
        f"no file `{shorten(path)}` under {root}; check the path (relative to the root or cwd)"
    )


def open_inside(root: Path | str, path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of the regular file ``path`` (absolute, or relative to ``root``).
    The check is made on the file actually opened (its ``/proc/self/fd`` link), so a symlink
    swapped in between a check and the open does not get past it. :class:`OutsideRootError`
    when the file is not under the root; ``OSError`` when it cannot be opened or is not a
    regular file (a FIFO or a device is never read)."""
    real_root = _real_root(root)
    full = os.path.join(real_root, os.fspath(path))
    if not _within(os.path.realpath(full), real_root):
        raise OutsideRootError(f"`{shown(path)}` is outside the root {shown(real_root)}")
    fd = os.open(full, os.O_RDONLY | os.O_NOCTTY | getattr(os, "O_NONBLOCK", 0))
    try:
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            opened = os.path.realpath(full)  # no /proc: the check above stands
        if not _within(opened, real_root):
            raise OutsideRootError(f"`{shown(path)}` is outside the root {shown(real_root)}")
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"`{shown(path)}` is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_inside(root: Path | str, path: str | os.PathLike[str]) -> bytes | None:
    """The bytes of ``path`` (see :func:`open_inside`), or None when it cannot be read or is
    not under the root."""
    try:
        fd = open_inside(root, path)
    except (OSError, OutsideRootError):
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            return fh.read()
        except OSError:
            return None


def read_text_inside(root: Path | str, path: str | os.PathLike[str]) -> str | None:
    """:func:`read_inside`, decoded as UTF-8 (invalid bytes replaced)."""
    data = read_inside(root, path)
    return None if data is None else data.decode("utf-8", errors="replace")
