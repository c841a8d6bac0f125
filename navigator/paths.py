"""Where a root's index and daemon live (``.nav``: socket, locks, log, info file), made private
to the user. Light to import.

``.nav`` is created 0700 and its files 0600 (an index holds copies of the code, whatever
the code's own permissions); a ``.nav`` that is a symlink or someone else's folder is
refused, never written through. When ``.nav/daemon.sock`` would be too long for a Unix
socket, the socket goes into a folder only the user can enter (``$XDG_RUNTIME_DIR``, else
``<tmp>/nav-<uid>``, else, when another user made that first, ``~/.cache/nav/run``; checked:
a real folder, owned by the user, mode 0700).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from navigator.printing import printable as printable  # re-exported: it lived here
from storage.errors import UnsafeIndexDirError

NAV_DIR = ".nav"
# sun_path holds 108 bytes on Linux; leave room for the terminating NUL.
_MAX_SOCKET_PATH = 100


@dataclass(frozen=True, slots=True)
class DaemonPaths:
    nav_dir: Path
    socket: Path
    lock: Path
    log: Path
    info: Path


def daemon_paths(root: Path) -> DaemonPaths:
    nav_dir = root / NAV_DIR
    sock = nav_dir / "daemon.sock"
    if len(os.fsencode(sock)) > _MAX_SOCKET_PATH:
        import hashlib  # only for very deep roots

        digest = hashlib.blake2b(os.fsencode(root), digest_size=8).hexdigest()
        sock = _socket_dir_path() / f"nav-{digest}.sock"  # checked by ensure_socket_dir before use
    return DaemonPaths(
        nav_dir=nav_dir,
        socket=sock,
        lock=nav_dir / "daemon.lock",
        log=nav_dir / "daemon.log",
        info=nav_dir / "daemon.json",
    )


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def _refuse(path: Path, what: str, why: str, fix: str) -> UnsafeIndexDirError:
    return UnsafeIndexDirError(f"{what} `{printable(str(path))[:100]}` {why}; nav refuses to use it: {fix}")


class MissingFolderError(FileNotFoundError):
    """The folder ``.nav`` (or the socket folder) would go in does not exist."""

    def __init__(self, folder: Path) -> None:
        shown = printable(str(folder))[:100]
        super().__init__(
            errno.ENOENT,
            f"the folder `{shown}` does not exist (deleted or moved?); nav makes no folder above its own",
        )
        self.filename = str(folder)


def ensure_private_dir(
    path: Path, *, what: str = "nav's folder", fix: str | None = None, parents: bool = False
) -> Path:
    """Create ``path`` with mode 0700, or check an existing one: a real folder (not a symlink),
    owned by this user; a group/world-accessible one (an older nav's) loses its group and
    other bits (0755 -> 0700).
    :class:`UnsafeIndexDirError` otherwise, naming the path and the fix.

    The folder it goes in must exist: nav never makes a root (or any folder above ``.nav``),
    so a daemon whose root was deleted or moved cannot bring it back holding only ``.nav``;
    :class:`MissingFolderError` (a ``FileNotFoundError``) names it. ``parents``: make the
    folders above too (only for the user's own cache and runtime folders, never a root's)."""
    path = Path(path)
    if parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    fix = fix or f"remove it (`rm -r {printable(str(path))[:100]}`) and run nav again"
    try:
        os.mkdir(path, PRIVATE_DIR_MODE)
    except FileExistsError:
        pass
    except FileNotFoundError:
        raise MissingFolderError(path.parent) from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if os.path.islink(path):
            raise _refuse(
                path, what, f"is a symlink (to `{printable(os.readlink(path))[:100]}`)", fix
            ) from None
        raise _refuse(path, what, f"is not a folder nav can open ({exc.strerror})", fix) from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid():
            raise _refuse(
                path, what, f"belongs to another user (uid {st.st_uid}, you are {os.getuid()})", fix
            )
        if stat.S_IMODE(st.st_mode) & 0o077:
            with contextlib.suppress(OSError):  # a read-only file system: nothing is written there either
                os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o700)  # the owner's bits stay as they are
    finally:
        os.close(fd)
    return path


def ensure_nav_dir(nav_dir: Path) -> Path:
    """The one way ``.nav`` is made: private to the user (0700), never a symlink or someone
    else's folder; its files are tightened to 0600 (an index copies the code it indexes)."""
    ensure_private_dir(nav_dir, what="the index folder")
    try:
        entries = list(os.scandir(nav_dir))
    except OSError:
        return nav_dir
    for entry in entries:
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            mode = stat.S_IMODE(entry.stat(follow_symlinks=False).st_mode)
            if mode & 0o077:
                # By path, never through a descriptor: closing a descriptor of the index (or its
                # -wal / -shm) would drop every SQLite lock this process holds on it.
                os.chmod(entry.path, mode & 0o700)  # others lose access; the owner's bits stay
        except OSError:
            continue
    return nav_dir


def open_private(path: Path, flags: int = os.O_RDWR) -> int:
    """``os.open(path, flags | O_CREAT)`` with mode 0600 and no symlink followed (locks, logs)."""
    return os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW, PRIVATE_FILE_MODE)


def _socket_dir_path() -> Path:
    """Where :func:`socket_dir` is, without creating or checking anything."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and _private_runtime_dir(runtime):
        return Path(runtime)
    tmp = _fallback_socket_dir()
    # `<tmp>/nav-<uid>` is a name another local user can take first (a folder of theirs, a
    # symlink): then the sockets go under the user's own cache folder instead
    return tmp if _free_or_ours(tmp) else _cache_socket_dir()


def _fallback_socket_dir() -> Path:
    import tempfile  # only for very deep roots; keeps the CLI's import path short

    return Path(tempfile.gettempdir()) / f"nav-{os.getuid()}"


def _cache_socket_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache"
    return base / "nav" / "run"


def _free_or_ours(path: Path) -> bool:
    """Nothing there yet, or a real folder of this user's."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


def _private_runtime_dir(runtime: str) -> bool:
    if not os.path.isabs(runtime):
        return False
    try:
        st = os.lstat(runtime)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0


def ensure_socket_dir(paths: DaemonPaths) -> None:
    """Before binding or connecting: a socket outside ``.nav`` must sit in :func:`socket_dir`."""
    if paths.socket.parent != paths.nav_dir:
        socket_dir()


def socket_dir() -> Path:
    """A folder only this user can enter, for sockets whose ``.nav`` path is too long:
    ``$XDG_RUNTIME_DIR`` when it is this user's and 0700, else ``<tmp>/nav-<uid>``, else (when
    another user took that name first) ``~/.cache/nav/run``; created 0700 and checked (a real
    folder, owned by the user, 0700). :func:`daemon_paths` picks the same folder."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and _private_runtime_dir(runtime):
        return Path(runtime)
    path = _socket_dir_path()
    fix = "remove it if it is yours, or set XDG_RUNTIME_DIR (or TMPDIR) to a folder only you can enter"
    ensure_private_dir(path, what="the socket folder", fix=fix, parents=True)  # ~/.cache/nav/run may be new
    st = os.lstat(path)
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise _refuse(
            path, "the socket folder", f"is open to others (mode {stat.S_IMODE(st.st_mode):o})", fix
        )
    return path


def own_nav_dir(path: Path | str) -> bool:
    """A ``.nav`` that marks a root: a real folder (not a symlink) owned by this user. Anyone
    can make ``/tmp/.nav``; that must not make ``/tmp`` the root of every checkout below it."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


def find_root(start: Path) -> Path:
    """The nearest folder at or above ``start`` holding ``.git`` or this user's own ``.nav``
    (:func:`own_nav_dir`), else ``start``. The nearest wins: a repository inside a folder that
    has an index is a root of its own."""
    start = start.resolve()
    for cand in (start, *start.parents):
        if own_nav_dir(cand / NAV_DIR) or (cand / ".git").exists():
            return cand
    return start


def flock_within(fd: int, timeout_s: float) -> bool:
    """Take an exclusive flock on ``fd``, waiting at most ``timeout_s``; False if it stayed held.

    flock has no timed wait, so this polls, backing off from 5 ms to 100 ms.
    """
    import fcntl
    import time

    deadline = time.monotonic() + timeout_s
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def daemon_possible(root: Path) -> bool:
    """Whether a daemon can keep its lock, log and socket in ``root/.nav``: not when that folder
    (or, before it exists, the root) is read-only. Then queries run in-process, reading the index."""
    folder = root / NAV_DIR
    try:
        probe = folder if folder.is_dir() else root
        if not os.access(probe, os.W_OK):
            return False
        return not os.statvfs(probe).f_flag & os.ST_RDONLY
    except OSError:
        return False
