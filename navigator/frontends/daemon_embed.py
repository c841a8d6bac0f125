"""The daemon's background work on its memory: embedding missing vectors, and the user's budget.

:class:`BackgroundEmbedder` fills in missing vectors in short slices while no request is in
flight, one daemon of the user's at a time (a lock and turns in the registry).
:class:`MemoryBudget` gives the embedding model back after its idle time, and the language
servers and the model when the daemon is beyond the user's budget of daemons. Both read the
request counters (:class:`~navigator.frontends.daemon_activity.Activity`), never the request
dispatch, which stays in :mod:`navigator.frontends.daemon`.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from navigator.errors import NavError
from navigator.frontends.registry import EmbedTurns, Registration, budget_plan, live_entries, runtime_dir
from navigator.paths import flock_within

if TYPE_CHECKING:
    from navigator.api import Navigator
    from navigator.frontends.daemon_activity import Activity
    from navigator.public import ServerPool

log = logging.getLogger("nav.daemon")

EMBED_SLICE_S = 1.0
"""Background embedding works in slices this long (batches of EMBED_BATCH), then looks up."""
EMBED_BATCH = 16
TURN_POLL_S = 0.2
"""How often a daemon waiting for its embedding turn looks at the registry again."""
QUIET_S = 0.25
"""Background embedding starts a slice only after this long with no request in flight."""
DEFAULT_MODEL_IDLE_S = 300.0
"""An idle daemon drops the embedding model after this long (env NAV_MODEL_IDLE_S); it reloads lazily."""


class BackgroundEmbedder:
    """Owns background embedding: its loop, its turn among the user's daemons, and what it is
    doing (:attr:`embedding`, :attr:`vectors`, for ``nav daemon status``)."""

    def __init__(
        self,
        nav: Navigator,
        activity: Activity,
        *,
        stopping: threading.Event,
        enabled: bool,
        lock_path: Path,
        max_daemons: int,
        over_budget: Callable[[], bool],
        watching: Callable[[], bool],
    ) -> None:
        self.nav = nav
        self.activity = activity
        self._stop = stopping
        self.lock_path = lock_path
        self.max_daemons = max_daemons
        self._over_budget = over_budget
        self._watching = watching
        self.registration: Registration | None = None
        """The daemon's entry in the user's registry, once it serves (the turns are taken there)."""
        self._turns = EmbedTurns()
        self.wake = threading.Event()
        """Set when a re-index may have left chunks without a vector, and when the daemon stops."""
        self.vectors: tuple[int, int] | None = None
        """(chunks with a vector, chunks) after the last background embedding slice."""
        self.embedding = "off" if not enabled else "starting"
        """What background embedding is doing: running / paused for a query / waiting for another
        nav daemon / done / stopped (see ``nav daemon status``)."""

    def run(self, slice_s: float = EMBED_SLICE_S) -> None:
        """Fill in missing vectors in short slices, so lexical search answers at once and vectors follow.

        The machine comes first: a slice starts only when no request has been in flight for
        :data:`QUIET_S` (a query never shares its core with the model), and only while this
        daemon holds the user's embedding lock (:func:`embed_lock_path`): of all the user's
        daemons, one embeds at a time. The lock is taken per slice, and the daemons wanting it
        take turns (:meth:`_my_turn`): the one asked something most recently goes first and most
        often, none waits for ever. When every chunk has its vector the loop sleeps until the
        watcher re-indexes something, so an idle daemon can give the model back. A daemon
        beyond the user's budget (:meth:`MemoryBudget.keep_budget`) embeds again once it is asked something.
        """
        from navigator.public import set_thread_limit

        set_thread_limit(1)  # leave the other core to queries (torch or ONNX Runtime alike)
        lock_fd = _open_user_lock(self.lock_path)
        requests_seen = -1
        try:
            while not self._stop.is_set():
                if not self.wait_for_quiet():
                    return
                if self._over_budget():
                    self._unwant()
                    self.embedding = f"paused: beyond the budget of {self.max_daemons} daemons (until asked)"
                    self._stop.wait(1.0)
                    continue
                if not self._my_turn():
                    self.embedding = "waiting for another nav daemon"
                    self._stop.wait(TURN_POLL_S)
                    continue  # another root's daemon goes first; look again (and at _stop)
                if lock_fd is not None and not flock_within(lock_fd, 2.0):
                    self.embedding = "waiting for another nav daemon"
                    continue  # another root's daemon is embedding; look again (and at _stop)
                if lock_fd is not None and not self._my_turn():  # the turn moved while we waited
                    fcntl.flock(lock_fd, fcntl.LOCK_UN)
                    continue
                try:
                    self.embedding = "running"
                    report = self.nav.embed(budget_s=slice_s, batch_size=EMBED_BATCH)
                except NavError as exc:
                    self.embedding = "stopped"
                    log.warning("background embedding stopped: %s", exc)
                    return
                except Exception:  # a model failure must not kill the daemon; searches say complete=false
                    self.embedding = "stopped"
                    log.error("background embedding failed: %s", traceback.format_exc())
                    return
                finally:
                    if lock_fd is not None:
                        fcntl.flock(lock_fd, fcntl.LOCK_UN)
                self._took_turn()
                self.vectors = (report.vectors, report.chunks)
                if report.complete:
                    self._unwant()
                    self.embedding = "done"
                    requests_seen = self._sleep_until_more_to_embed(requests_seen)
        finally:
            self._unwant()
            if lock_fd is not None:
                os.close(lock_fd)

    def rate(self) -> float | None:
        """Chunks per second the model embeds here, as measured (None before it is)."""
        rate = self.nav.embed_rate()
        return None if rate is None else round(rate, 2)

    def runtime(self) -> str | None:
        """The runtime the model embeds on (None before it was chosen)."""
        return self.nav.embed_runtime()

    def eta_s(self) -> float | None:
        """Seconds until every chunk has its vector at the measured rate (None: unknown or none left)."""
        rate, vectors = self.nav.embed_rate(), self.vectors
        if not rate or vectors is None or vectors[0] >= vectors[1]:
            return None
        return round((vectors[1] - vectors[0]) / rate, 1)

    def _my_turn(self) -> bool:
        """Whether the next embedding slice is this daemon's (:class:`EmbedTurns`)."""
        return self._turns.mine(self.registration, self.activity.last_used_wall)

    def _took_turn(self) -> None:
        self._turns.took(self.registration, self.activity.last_used_wall)

    def _unwant(self) -> None:
        self._turns.unwant(self.registration)

    def wait_for_quiet(self) -> bool:
        """Block while requests are being served (bounded polls); False when the daemon stops."""
        while not self._stop.is_set():
            active, idle = self.activity.now()
            if not (active or idle < QUIET_S):
                return True
            self.embedding = "paused for a query"
            self._unwant()  # other roots' daemons embed meanwhile; this one rejoins when quiet
            self._stop.wait(QUIET_S / 2)
        return False

    def _sleep_until_more_to_embed(self, requests_seen: int) -> int:
        """After a complete sync: wait for the watcher's next re-index (or, without a watcher,
        for requests, which refresh the index, and a minute). Returns the request count seen."""
        while not self._stop.is_set():
            if self.wake.wait(timeout=5.0):
                self.wake.clear()
                return self.activity.requests
            if (
                not self._watching()
                and self.activity.requests != requests_seen
                and time.monotonic() - self.activity.last_activity > 60
            ):
                return self.activity.requests
        return requests_seen


class MemoryBudget:
    """Owns what the daemon gives back and why: the model after :attr:`model_idle_s` without
    requests, the servers and the model beyond the user's :attr:`max_daemons` most recently used."""

    def __init__(
        self,
        nav: Navigator,
        pool: ServerPool,
        root: Path,
        activity: Activity,
        embedder: BackgroundEmbedder,
        *,
        max_daemons: int,
        model_idle_s: float,
        stop: Callable[[], None],
    ) -> None:
        self.nav = nav
        self._pool = pool
        self.root = root
        self.activity = activity
        self.embedder = embedder
        self.max_daemons = max_daemons
        self.model_idle_s = model_idle_s
        self._stop = stop
        self.registration: Registration | None = None
        """The daemon's entry in the user's registry, once it serves (the budget ranks those)."""
        self.over_budget = False
        self.released: str | None = None
        """Why the servers and model were last given back before their own idle time, if they were."""
        self.model_releases = 0

    def in_use(self) -> None:
        """Work arrived: what it needs starts again, so nothing stands released."""
        self.released = None

    def release_model_if_idle(self) -> bool:
        """Give the model's memory back after :attr:`model_idle_s` without requests, unless
        background embedding still has work (it would only load it again)."""
        _, idle = self.activity.now()
        if idle < self.model_idle_s or self.embedder.embedding in ("running", "paused for a query"):
            return False
        if not self.nav.release_model():
            return False
        _trim_heap()
        self.model_releases += 1
        log.info("idle for %.0f s: embedding model released (it reloads when needed)", idle)
        return True

    def keep_budget(self, idle: float) -> str:
        """Keep the user's budget of daemons (:func:`~navigator.frontends.registry.budget_plan`):
        beyond the :attr:`max_daemons` most recently used, give the servers and the model back
        (they start again on the next query), and exit once idle for :attr:`model_idle_s`.
        Returns the plan followed."""
        reg = self.registration
        if reg is None or not reg.active:
            return "keep"
        entries = live_entries(reg.folder)
        ranked = [e.id for e in entries]
        self.over_budget = reg.id in ranked and ranked.index(reg.id) >= self.max_daemons
        servers = any(state in ("running", "starting") for state in self._pool.states(self.root).values())
        # the model counts beyond the budget; within it, it has its own idle time (model_idle_s)
        holding = servers or (self.over_budget and self.nav.model_loaded())
        plan = budget_plan(
            reg.id,
            entries,
            budget=self.max_daemons,
            idle_s=idle,
            exit_idle_s=self.model_idle_s,
            holding=holding,
        )
        if plan == "exit":
            log.info("beyond the budget of %d daemons and idle for %.0f s; exiting", self.max_daemons, idle)
            self._stop()
        elif plan == "release":
            why = (
                f"beyond the budget of {self.max_daemons} daemons (NAV_MAX_DAEMONS)"
                if self.over_budget
                else f"idle for {idle:.0f} s while other roots are in use"
            )
            self.released = why  # first: a status that sees the servers released also sees why
            stopped = self._pool.release(self.root)
            model = self.over_budget and self.nav.release_model()
            if model:
                self.model_releases += 1
            _trim_heap()
            log.info("%s: released %d servers%s", why, stopped, " and the model" if model else "")
        return plan


def embed_lock_path() -> Path:
    """The user's embedding lock: one per user, shared by every root's daemon.

    In ``$NAV_RUNTIME_DIR`` (tests), else ``$XDG_RUNTIME_DIR/nav``, else ``~/.cache/nav``:
    folders only the user can write, never a shared /tmp name another user could take first.
    """
    return runtime_dir() / "embed.lock"


def _open_user_lock(path: Path) -> int | None:
    """The lock file, opened; None (embedding uncapped, with a warning) when it cannot be used."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.parent.stat().st_uid != os.getuid():
            log.warning("%s is not ours; background embedding is not capped across roots", path.parent)
            return None
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        log.warning("cannot open the embedding lock %s (%s); embedding is not capped across roots", path, exc)
        return None


def _trim_heap() -> None:
    """Hand freed memory back to the OS (glibc keeps it otherwise); a no-op elsewhere."""
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
