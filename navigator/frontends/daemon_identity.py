"""Whether a daemon is still the one to answer for its root: the root's identity, its socket, its code.

:class:`Identity` owns the root's device and inode at start, the socket's once bound, why the
root stopped being this daemon's (deleted, moved, replaced, the socket taken), whether a
client's ``nav_root`` names this root, and whether nav's code on disk still is the code running
(:func:`code_stamp`). It only answers; :class:`navigator.frontends.daemon.Daemon` acts on the
answers (it stops, or refuses a request).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Any

CODE_CHECK_S = 1.0
"""How often (at most) a request re-reads the stamp of nav's own code."""


class Identity:
    """The root, socket and code a daemon started with, and whether they are still its own."""

    def __init__(self, root: Path, socket: Path) -> None:
        self.root = root
        self.socket = socket
        self._code = code_stamp()
        self._code_checked = time.monotonic()
        self._code_stale = False
        self._lock = threading.Lock()
        st = os.stat(self.root)
        self.root_id = (st.st_dev, st.st_ino)
        """The root's identity at start: a folder at the same path with another is not our root."""
        self.socket_id: tuple[int, int] | None = None
        """The socket's identity once bound (:meth:`bound`)."""
        self.lost: str | None = None
        """Why the daemon's root is no longer its root (deleted, moved, socket taken), once it is not."""

    def bound(self) -> None:
        """The socket is bound: from now on, a socket at its path that is not this one is another daemon's."""
        st = os.stat(self.socket)
        self.socket_id = (st.st_dev, st.st_ino)

    def why_lost(self) -> str | None:
        """Why the root is not this daemon's any more, or None while it is."""
        try:
            st = os.stat(self.root)
        except OSError as exc:
            return f"the root {self.root} is gone ({exc.strerror})"
        if (st.st_dev, st.st_ino) != self.root_id:
            return f"the root {self.root} is another folder now (moved or replaced)"
        if self.socket_id is not None:
            try:
                sock = os.stat(self.socket)
            except OSError:
                return f"the socket {self.socket} is gone (the index folder was removed)"
            if (sock.st_dev, sock.st_ino) != self.socket_id:
                return f"the socket {self.socket} is another daemon's now"
        return None

    def serves(self, claimed: Any) -> bool:
        """Whether a client's ``nav_root`` (its root's path, device and inode) is this daemon's root."""
        return (
            isinstance(claimed, dict)
            and claimed.get("path") == str(self.root)
            and (claimed.get("dev"), claimed.get("ino")) == self.root_id
            and self.lost is None
        )

    def code_changed(self) -> bool:
        """Whether nav's code on disk differs from what this daemon runs (read at most every
        :data:`CODE_CHECK_S`; once stale, always stale)."""
        with self._lock:
            if self._code_stale or time.monotonic() - self._code_checked < CODE_CHECK_S:
                return self._code_stale
            self._code_checked = time.monotonic()
        stale = code_stamp() != self._code
        with self._lock:
            self._code_stale = self._code_stale or stale
            return self._code_stale


def code_stamp() -> tuple[tuple[str, int], ...]:
    """nav's own code as it is on disk: every module and query file of its packages with its
    modification time. A different stamp than at start means the running code is stale."""
    import importlib

    from navigator.public import PACKAGES

    out: list[tuple[str, int]] = []
    for name in PACKAGES:
        base = Path(importlib.import_module(name).__file__ or "").parent
        for pattern in ("**/*.py", "**/*.scm"):
            for path in base.glob(pattern):
                with contextlib.suppress(OSError):
                    out.append((str(path), path.stat().st_mtime_ns))
    return tuple(sorted(out))
