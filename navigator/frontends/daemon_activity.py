"""The daemon's activity counters: requests in flight, requests served, when it was last used.

Kept by the request dispatch (:meth:`navigator.frontends.daemon.Daemon.handle`), read by what
must yield to requests or follow their use: background embedding waits for quiet, the idle
clock and the budget count idle time (:mod:`navigator.frontends.daemon_embed`). One lock
guards the counters and nothing else.
"""

from __future__ import annotations

import threading
import time


class Activity:
    """How the daemon is being used. Asking how it is doing (``daemon.status``, ``daemon.ping``)
    is not using it: such a request is counted, but it is not work in flight and it leaves the
    idle time as it was."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active = 0
        """Requests of work in flight."""
        self.requests = 0
        """Requests received, status and ping included."""
        self.last_activity = time.monotonic()
        """When work last started or ended (monotonic clock)."""
        self.last_used_wall = time.time()
        """When work last started (wall clock: the user's daemons are ranked by it)."""

    def begin(self, *, work: bool) -> None:
        """A request arrived; ``work``: it is not a status or ping."""
        with self.lock:
            self.active += work
            self.requests += 1
            if work:
                self.last_activity = time.monotonic()
                self.last_used_wall = time.time()

    def end(self, *, work: bool) -> None:
        """The request :meth:`begin` counted is answered."""
        with self.lock:
            self.active -= work
            if work:
                self.last_activity = time.monotonic()

    def now(self) -> tuple[bool, float]:
        """Whether work is in flight, and the seconds since work last started or ended, read together."""
        with self.lock:
            return self.active > 0, time.monotonic() - self.last_activity


class IndexUsers:
    """The threads using the index's connections now (the first index, a re-index, a request),
    so that a stopping daemon closes them only once none is: CPython's sqlite3 reads a handle
    closed by another thread mid-statement and the process dies by SIGSEGV. :meth:`close_gate`
    lets no new user in and waits, bounded, for those inside."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._inside = 0
        self._closed = False

    def enter(self) -> bool:
        """Count the calling thread in; False (not counted) once the gate is closed."""
        with self._cond:
            if self._closed:
                return False
            self._inside += 1
            return True

    def leave(self) -> None:
        """The thread :meth:`enter` counted is done with the index."""
        with self._cond:
            self._inside -= 1
            self._cond.notify_all()

    def close_gate(self, timeout_s: float) -> bool:
        """Let no new user in; True once none is inside, False when some still are after ``timeout_s``."""
        with self._cond:
            self._closed = True
            return self._cond.wait_for(lambda: self._inside == 0, timeout=max(0.0, timeout_s))
