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
