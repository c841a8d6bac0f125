"""The per-call notes record: what one call of a verb must say about the index it answered from.

A verb call (with the verbs a compound verb such as ``query`` runs inside it) gets one
:class:`Call`, kept per thread, so no other thread's call can clear its notes. :class:`Calls`
owns those records and the rebuilds no call asked for (the index opened outside a verb), which
the next answer reports, once. The index handle (:mod:`navigator.index_handle`) writes into the
record; the facade's answers read it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@dataclasses.dataclass
class Call:
    """What one call of a verb (with the verbs it runs inside it) must say about the index it
    answered from. Each call has its own, so no other thread's call can clear it."""

    stale: str | None = None
    """Why the index may be behind the files (another process updating it, a read-only index)."""
    rebuilt: list[str] = dataclasses.field(default_factory=list)
    """The damaged index this call found was rebuilt: what was kept."""


class Calls:
    """Each thread's verb call in progress, and the rebuild notes no call has reported yet."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._lock = threading.Lock()
        self._rebuilt_outside: list[str] = []
        """Rebuilds no call asked for (the index opened outside a verb): the next answer says them."""

    @contextmanager
    def call(self) -> Iterator[Call]:
        """This thread's verb call: a new one, or the one a compound verb (``query``) runs in."""
        current = self.current()
        if current is not None:
            yield current
            return
        current = self._local.current = Call()
        try:
            yield current
        finally:
            self._local.current = None

    def current(self) -> Call | None:
        call: Call | None = getattr(self._local, "current", None)
        return call

    def rebuilt(self, note: str) -> None:
        """Record a rebuild of the index: in this thread's call, else for the next answer."""
        call = self.current()
        if call is not None:
            call.rebuilt.append(note)
        else:
            with self._lock:
                self._rebuilt_outside.append(note)

    def rebuilt_notes(self, call: Call) -> list[str]:
        """The rebuilds ``call`` must report: its own, and any that no call has reported yet
        (taken by this one, so each is said once)."""
        if self._rebuilt_outside:
            with self._lock:
                call.rebuilt += self._rebuilt_outside
                self._rebuilt_outside = []
        return call.rebuilt
