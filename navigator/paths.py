"""Where a root's daemon keeps its socket, lock, log and info file. Pure; light to import."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

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
        import hashlib  # only for very deep roots, like tempfile below

        digest = hashlib.blake2b(os.fsencode(root), digest_size=8).hexdigest()
        import tempfile  # only for very deep roots; keeps the CLI's import path short

        sock = Path(tempfile.gettempdir()) / f"nav-{os.getuid()}-{digest}.sock"
    return DaemonPaths(
        nav_dir=nav_dir,
        socket=sock,
        lock=nav_dir / "daemon.lock",
        log=nav_dir / "daemon.log",
        info=nav_dir / "daemon.json",
    )


def find_root(start: Path) -> Path:
    """The nearest ancestor with a ``.nav`` index, else with ``.git``, else ``start``."""
    start = start.resolve()
    for marker in (NAV_DIR, ".git"):
        for cand in (start, *start.parents):
            if (cand / marker).exists():
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
    probe = folder if folder.is_dir() else root
    try:
        if not os.access(probe, os.W_OK):
            return False
        return not os.statvfs(probe).f_flag & os.ST_RDONLY
    except OSError:
        return False
