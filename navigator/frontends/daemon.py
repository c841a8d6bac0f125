"""The daemon: one warm process per root that answers JSON-RPC 2.0 on a local socket.

It keeps the index connection, language servers and the embedding model loaded,
watches the tree (debounced) so the index follows edits, serves several clients at
once (a thread per connection; SQLite connections are per thread), and exits after
an idle timeout. Messages are JSON-RPC 2.0 objects, one per line.

Start-up is race-free: the daemon takes an exclusive lock on ``.nav/daemon.lock``
before it binds the socket, so of two daemons started at once one serves and the
other exits; a socket left behind by a killed daemon is removed by the next one.
The starter learns the outcome from a pipe (``ready`` / ``busy``), never by sleeping.

Run by ``nav daemon start`` or automatically by the CLI; ``python -m navigator.frontends.daemon
ROOT`` runs one in the foreground.

A daemon whose code changed on disk since it started (nav upgraded, or pulled in an editable
install) answers no more requests: it closes the asking connection and exits, and the client
starts a daemon running the new code and asks again (see :func:`code_stamp`).

A daemon follows its root. Every :data:`ROOT_CHECK_S`, on the watcher's word that the root
itself went, and before each re-index, it checks that the root's path still leads to the
folder it started on (device and inode) and that ``.nav/daemon.sock`` is still its own socket;
when not (the root deleted, moved or replaced), it exits, stopping its language servers, and
never makes the folder again. Each request names the client's root (``nav_root``); a daemon
of another root (its moved socket reached through the new path) refuses it with
:data:`OTHER_ROOT`, and the client starts the root's own.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import logging
import os
import signal
import socket
import socketserver
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navigator.frontends.registry import (
    DEFAULT_MAX_DAEMONS,
    Registration,
    Want,
    budget_plan,
    live_entries,
    live_wants,
    next_embedder,
    registry_dir,
    runtime_dir,
    turn_cost,
)
from navigator.frontends.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    METHOD_NOT_FOUND,
    Rejected,
    WireError,
    check_message,
    check_params,
    dumps,
    encode,
    error_type,
    is_request_id,
)
from navigator.paths import (
    DaemonPaths,
    daemon_paths,
    ensure_nav_dir,
    ensure_socket_dir,
    flock_within,
    open_private,
)
from storage.errors import NavError, StorageError, shorten

if TYPE_CHECKING:
    from navigator.watch import Watcher

log = logging.getLogger("nav.daemon")

DEFAULT_IDLE_TIMEOUT_S = 1800.0
DEBOUNCE_S = 0.15
INITIAL_INDEX_WAIT_S = 240.0
SCOPED_SYNC_MAX = 2000
"""Above this many changed paths (a branch switch), a full walk is cheaper than path by path."""
ROOT_CHECK_S = 2.0
"""How often the idle clock checks that the root is still there, at its path, with our socket."""
WARMABLE = frozenset({"python", "typescript", "tsx", "javascript", "go", "c", "cpp", "java"})
WARM_SHARE = 0.2
"""Warm-up starts the server of the root's main language (the most lines of code) and of any
other holding at least this share of the code's files or lines; the rest start on first use."""

# Navigator verbs the daemon serves. Anything else is "method not found".
METHODS: frozenset[str] = frozenset(
    {
        "index",
        "status",
        "definitions",
        "symbols",
        "outline",
        "show",
        "references",
        "definition",
        "hover",
        "callers",
        "callees",
        "implementations",
        "doctor",
        "search",
        "query",
        "find",
        "repo_map",
        "grep",
    }
)

EMBED_SLICE_S = 1.0
"""Background embedding works in slices this long (batches of EMBED_BATCH), then looks up."""
EMBED_BATCH = 16
TURN_POLL_S = 0.2
"""How often a daemon waiting for its embedding turn looks at the registry again."""
QUIET_S = 0.25
"""Background embedding starts a slice only after this long with no request in flight."""
DEFAULT_MODEL_IDLE_S = 300.0
"""An idle daemon drops the embedding model after this long (env NAV_MODEL_IDLE_S); it reloads lazily."""
MAX_DRAIN_BYTES = 256 * 1024 * 1024
"""How much of an oversized request line is skipped, unread, before the connection is dropped."""
MAX_CONNECTIONS = 256
"""Connections served at once (a thread each); more are answered "too many connections" and closed."""
SERVER_BUSY = -32000
OTHER_ROOT = -32001
"""The request's ``nav_root`` is not this daemon's root (it moved, or was replaced): ask your own."""
LISTEN_BACKLOG = socket.SOMAXCONN
"""Connections the kernel queues before the daemon accepts them (was 5: a burst of clients got EAGAIN)."""


class Daemon:
    """Owns the Navigator, the watcher, the socket server and the idle clock."""

    def __init__(
        self,
        root: Path,
        *,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        watch: bool = True,
        embed: bool = True,
        warm_servers: bool = True,
        model_idle_s: float = DEFAULT_MODEL_IDLE_S,
        embed_lock: Path | None = None,
        pool: Any = None,
        server_idle_s: float | None = None,
        max_daemons: int = DEFAULT_MAX_DAEMONS,
        registry: Path | None = None,
    ) -> None:
        from lsp.pool import ServerPool
        from navigator.api import Navigator
        from navigator.exact import ExactNavigator, NavigatorTable

        self.root = root.resolve()
        self.paths = daemon_paths(self.root)
        self.idle_timeout_s = idle_timeout_s
        self.nav = Navigator(self.root)
        # the daemon owns the pool (servers maybe already starting: early_pool), so it can say
        # what runs and release it
        if pool is None:
            pool = ServerPool() if server_idle_s is None else ServerPool(idle_timeout_s=server_idle_s)
        self._pool = pool
        self.nav._exact = ExactNavigator(self.root, NavigatorTable(self.nav), pool=pool)
        self.max_daemons = max_daemons
        self.registry = registry if registry is not None else registry_dir()
        self._registration: Registration | None = None
        self.over_budget = False
        self.released: str | None = None
        """Why the servers and model were last given back before their own idle time, if they were."""
        self._passes = 0.0
        self._wanting = False
        self._want_written: Want | None = None
        self.last_used_wall = time.time()
        self.started_at = time.time()
        self.last_activity = time.monotonic()
        self.active = 0
        self.requests = 0
        self._state = threading.Lock()
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._watcher: Watcher | None = None
        self._debounce: threading.Timer | None = None
        self._sync_cond = threading.Condition()
        self._dirty = False
        self._syncing = False
        self.watching = False
        self.watch = watch
        self.last_sync_s: float | None = None
        self.syncs = 0
        self.embed_background = embed
        self.warm_servers = warm_servers
        self.servers: dict[str, str] = {}
        """Language -> "starting" / "ready" / "not available", for the servers warmed at start
        (what runs now: :meth:`server_states`)."""
        self._code_servers: dict[str, str] = {}
        """The index's languages that have a server, most files first: language -> server key."""
        self._embed_wake = threading.Event()
        self._embedder: threading.Thread | None = None
        self._initial_done = threading.Event()
        self._changed: set[str] | None = set()
        """Paths the watcher saw change since the last re-index (None: unknown, check all)."""
        self.vectors: tuple[int, int] | None = None
        """(chunks with a vector, chunks) after the last background embedding slice."""
        self.model_idle_s = model_idle_s
        self.embed_lock = embed_lock if embed_lock is not None else embed_lock_path()
        self.embedding = "off" if not embed else "starting"
        """What background embedding is doing: running / paused for a query / waiting for another
        nav daemon / done / stopped (see ``nav daemon status``)."""
        self.model_releases = 0
        self.embed_slice_s = EMBED_SLICE_S
        """How long one background embedding slice runs before it looks up (env NAV_EMBED_SLICE_S)."""
        self._code = code_stamp()
        self._code_checked = time.monotonic()
        self._code_stale = False
        st = os.stat(self.root)
        self.root_id = (st.st_dev, st.st_ino)
        """The root's identity at start: a folder at the same path with another is not our root."""
        self._socket_id: tuple[int, int] | None = None
        self.root_lost: str | None = None
        """Why this daemon's root is no longer its root (deleted, moved, socket taken), once it is not."""

    # -- lifecycle -------------------------------------------------------------------------

    def serve(self, ready_fd: int | None = None) -> int:
        ensure_nav_dir(self.paths.nav_dir)
        lock_fd = open_private(self.paths.lock)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _signal_ready(ready_fd, "busy")
            os.close(lock_fd)
            return 0
        try:
            ensure_socket_dir(self.paths)  # deep roots: a folder only this user can enter
            if self.paths.socket.exists() or self.paths.socket.is_symlink():
                self.paths.socket.unlink()  # left by a daemon that died; we hold the lock now
            self._server = _Server(str(self.paths.socket), _Handler, daemon=self)
            os.chmod(self.paths.socket, 0o600)  # in a 0700 folder already; this too for good measure
            sock_st = os.stat(self.paths.socket)
            self._socket_id = (sock_st.st_dev, sock_st.st_ino)
            info_fd = open_private(self.paths.info, os.O_WRONLY | os.O_TRUNC)
            with os.fdopen(info_fd, "w", encoding="utf-8") as fh:
                fh.write(
                    json.dumps({"pid": os.getpid(), "socket": str(self.paths.socket), "root": str(self.root)})
                )
            self._registration = Registration(
                self.registry, root=str(self.root), socket=str(self.paths.socket)
            )
            if self.warm_servers:
                self._warm_servers()  # the languages of the index already there, first: the critical path
            if self.watch:
                self._start_watcher()
            self.nav.refresh = not self.watching  # the watcher keeps the index fresh; else stat per query
            threading.Thread(target=self._initial_index, name="nav-initial-index", daemon=True).start()
            threading.Thread(target=self._idle_clock, name="nav-idle", daemon=True).start()
            if self.embed_background:
                self.nav.search_embed_budget_s = 0.0  # queries never wait for the model; this thread embeds
                self._embedder = threading.Thread(
                    target=self._embed_loop, args=(self.embed_slice_s,), name="nav-embed", daemon=True
                )
                self._embedder.start()
            _signal_ready(ready_fd, "ready")
            log.info("serving %s on %s (pid %d)", self.root, self.paths.socket, os.getpid())
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self._shutdown_parts()
            if self.root_lost is None:  # else the paths may be another root's (or daemon's) now
                with contextlib.suppress(FileNotFoundError):
                    self.paths.socket.unlink()
                with contextlib.suppress(FileNotFoundError):
                    self.paths.info.unlink()
            if self._registration is not None:
                self._registration.close()
            os.close(lock_fd)
        return 0

    def code_changed(self) -> bool:
        """Whether nav's code on disk differs from what this daemon runs (read at most every
        :data:`CODE_CHECK_S`; once stale, always stale)."""
        with self._state:
            if self._code_stale or time.monotonic() - self._code_checked < CODE_CHECK_S:
                return self._code_stale
            self._code_checked = time.monotonic()
        stale = code_stamp() != self._code
        with self._state:
            self._code_stale = self._code_stale or stale
            return self._code_stale

    def stop(self) -> None:
        self._stop.set()
        self._embed_wake.set()
        if self._server is not None:
            threading.Thread(target=self._server.shutdown, daemon=True).start()

    def _shutdown_parts(self) -> None:
        if self._embedder is not None:
            self._embedder.join(timeout=10)  # let a running slice finish and save its vectors
        if self._watcher is not None:
            self._watcher.stop()
        closer = getattr(self.nav, "shutdown", None)
        if callable(closer):
            closer()
        self.nav.close()
        if self._pool is not None:
            self._pool.close()

    def _initial_index(self) -> None:
        try:
            self._sync()
        except NavError as exc:
            log.warning("initial index failed: %s", exc)
        finally:
            self._initial_done.set()
        if self.warm_servers:
            self._warm_servers()
        else:
            self._note_languages()

    def _warm_servers(self) -> None:
        """Start the servers of the languages the root is mostly made of (:func:`languages_to_warm`),
        now and side by side, so the first exact query does not pay a cold start (jdtls needs ~1 min
        on a mid-size Java repository, more than a query's deadline); a language with a few files
        (test fixtures) starts on first use. Returns at once; each server is warmed in a thread."""
        sizes = self._note_languages()
        if sizes is None:
            return
        for language in languages_to_warm(sizes):
            if self._stop.is_set() or self.servers.get(language) in ("starting", "ready"):
                continue
            self.servers[language] = "starting"
            threading.Thread(
                target=self._warm_one, args=(language,), name=f"nav-warm-{language}", daemon=True
            ).start()

    def _note_languages(self) -> dict[str, tuple[int, int]] | None:
        """Read the index's languages (files, lines) and remember those with a server, for
        :meth:`server_states`; None when the index cannot be read."""
        from lsp.registry import server_key

        try:
            sizes = self.nav.store.language_sizes()
        except NavError as exc:
            log.warning("cannot read the index's languages: %s", exc)
            return None
        by_files = sorted(
            sizes, key=lambda lang: (-sizes[lang][0], lang)
        )  # a server is named by its main language
        self._code_servers = {
            lang: key for lang in by_files if lang in WARMABLE and (key := server_key(lang)) is not None
        }
        return sizes

    def _warm_one(self, language: str) -> None:
        try:
            ready = self.nav.exact.pool.warm(self.root, language, deadline_s=300.0)
        except Exception:  # warming is an optimisation: a failure is logged, queries still work
            log.error("warming the %s server failed: %s", language, traceback.format_exc())
            self.servers[language] = "not available"
            return
        self.servers[language] = "ready" if ready else "not available"
        log.info("%s server %s", language, self.servers[language])

    def _embed_loop(self, slice_s: float = EMBED_SLICE_S) -> None:
        """Fill in missing vectors in short slices, so lexical search answers at once and vectors follow.

        The machine comes first: a slice starts only when no request has been in flight for
        :data:`QUIET_S` (a query never shares its core with the model), and only while this
        daemon holds the user's embedding lock (:func:`embed_lock_path`): of all the user's
        daemons, one embeds at a time. The lock is taken per slice, and the daemons wanting it
        take turns (:meth:`_my_turn`): the one asked something most recently goes first and most
        often, none waits for ever. When every chunk has its vector the loop sleeps until the
        watcher re-indexes something, so an idle daemon can give the model back. A daemon
        beyond the user's budget (:meth:`keep_budget`) embeds again once it is asked something.
        """
        from semantic.embed import set_thread_limit

        set_thread_limit(1)  # leave the other core to queries (torch or ONNX Runtime alike)
        lock_fd = _open_user_lock(self.embed_lock)
        requests_seen = -1
        try:
            while not self._stop.is_set():
                if not self._wait_for_quiet():
                    return
                if self.over_budget:
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

    def _my_turn(self) -> bool:
        """Say (in the registry) that this daemon wants to embed, and whether the next slice is
        its own (:func:`~navigator.frontends.registry.next_embedder`, the same answer in every
        daemon). A daemon that starts wanting joins at the others' lowest pass, so a newcomer
        does not take every turn until it has caught up. Without a registry: always."""
        reg = self._registration
        if reg is None or not reg.active:
            return True
        others = [w for w in live_wants(reg.folder, live_entries(reg.folder)) if w.id != reg.id]
        if not self._wanting:
            self._passes = max(self._passes, min((w.passes for w in others), default=self._passes))
            self._wanting = True
            self._want_written = None
        mine = Want(reg.id, self.last_used_wall, self._passes)
        if self._want_written != mine:
            reg.want(asked=mine.asked, passes=mine.passes)
            self._want_written = mine
        return next_embedder([*others, mine]) == reg.id

    def _took_turn(self) -> None:
        """After a slice: this daemon's pass moves on by its cost (less for the one asked last)."""
        reg = self._registration
        if reg is None or not reg.active:
            return
        wants = live_wants(reg.folder, live_entries(reg.folder))
        others = [w for w in wants if w.id != reg.id]
        self._passes += turn_cost(reg.id, [*others, Want(reg.id, self.last_used_wall, self._passes)])
        reg.want(asked=self.last_used_wall, passes=self._passes)
        self._want_written = Want(reg.id, self.last_used_wall, self._passes)

    def _unwant(self) -> None:
        if self._wanting and self._registration is not None:
            self._registration.unwant()
        self._wanting = False
        self._want_written = None

    def _wait_for_quiet(self) -> bool:
        """Block while requests are being served (bounded polls); False when the daemon stops."""
        while not self._stop.is_set():
            with self._state:
                busy = self.active > 0 or time.monotonic() - self.last_activity < QUIET_S
            if not busy:
                return True
            self.embedding = "paused for a query"
            self._unwant()  # other roots' daemons embed meanwhile; this one rejoins when quiet
            self._stop.wait(QUIET_S / 2)
        return False

    def _sleep_until_more_to_embed(self, requests_seen: int) -> int:
        """After a complete sync: wait for the watcher's next re-index (or, without a watcher,
        for requests, which refresh the index, and a minute). Returns the request count seen."""
        while not self._stop.is_set():
            if self._embed_wake.wait(timeout=5.0):
                self._embed_wake.clear()
                return self.requests
            if (
                not self.watching
                and self.requests != requests_seen
                and time.monotonic() - self.last_activity > 60
            ):
                return self.requests
        return requests_seen

    def release_model_if_idle(self) -> bool:
        """Give the model's memory back after :attr:`model_idle_s` without requests, unless
        background embedding still has work (it would only load it again)."""
        with self._state:
            idle = time.monotonic() - self.last_activity
        if idle < self.model_idle_s or self.embedding in ("running", "paused for a query"):
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
        reg = self._registration
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
            self.stop()
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

    def _idle_clock(self) -> None:
        while not self._stop.wait(min(ROOT_CHECK_S, self.idle_timeout_s / 4)):
            if self.check_root():
                return
            with self._state:
                idle = time.monotonic() - self.last_activity
                busy = self.active > 0
            if not busy and idle > self.idle_timeout_s:
                log.info("idle for %.0f s; exiting", idle)
                self.stop()
                return
            if not busy:
                self.release_model_if_idle()
                self.keep_budget(idle)

    # -- freshness -------------------------------------------------------------------------

    def _start_watcher(self) -> None:
        """Watch the folders the index covers (see :mod:`navigator.watch`); without a watcher,
        queries check file stats instead."""
        from navigator.watch import start_watcher

        self._watcher = start_watcher(
            self.root,
            options=lambda: self.nav.walk_options,
            on_change=self._schedule_sync,
            on_root_event=self.check_root,
            on_degraded=self._watch_degraded,
        )
        self.watching = self._watcher is not None

    def _watch_degraded(self, why: str) -> None:
        """The watcher gave up (the watch limit): queries check file stats from now on."""
        self.nav.refresh = True
        self.watching = False
        self._schedule_sync(None)  # what changed while the watches went is unknown

    def check_root(self) -> bool:
        """Whether this daemon's root is gone: the path no longer leads to the folder it started
        on (deleted, moved, replaced) or ``.nav/daemon.sock`` is no longer its socket (then no
        client can reach it). A lost root stops the daemon, its language servers with it."""
        if self.root_lost is None:
            self.root_lost = self._why_root_lost()
            if self.root_lost is None:
                return False
            log.warning("%s; exiting", self.root_lost)
            self.stop()
        return True

    def _why_root_lost(self) -> str | None:
        try:
            st = os.stat(self.root)
        except OSError as exc:
            return f"the root {self.root} is gone ({exc.strerror})"
        if (st.st_dev, st.st_ino) != self.root_id:
            return f"the root {self.root} is another folder now (moved or replaced)"
        if self._socket_id is not None:
            try:
                sock = os.stat(self.paths.socket)
            except OSError:
                return f"the socket {self.paths.socket} is gone (the index folder was removed)"
            if (sock.st_dev, sock.st_ino) != self._socket_id:
                return f"the socket {self.paths.socket} is another daemon's now"
        return None

    def serves(self, claimed: Any) -> bool:
        """Whether a client's ``nav_root`` (its root's path, device and inode) is this daemon's root."""
        return (
            isinstance(claimed, dict)
            and claimed.get("path") == str(self.root)
            and (claimed.get("dev"), claimed.get("ino")) == self.root_id
            and self.root_lost is None
        )

    def _schedule_sync(self, paths: list[str] | None = None) -> None:
        if self._stop.is_set():
            return
        with self._sync_cond:
            self._dirty = True
            if paths is None:
                self._changed = None  # unknown: servers re-check everything
            elif self._changed is not None:
                self._changed.update(paths)
        with self._state:
            if self._debounce is not None:
                self._debounce.cancel()
            self._debounce = threading.Timer(DEBOUNCE_S, self._sync_quietly)
            self._debounce.daemon = True
            self._debounce.start()

    def _sync_quietly(self) -> None:
        try:
            self._sync()
        except NavError as exc:
            log.warning("re-index after a change failed: %s", exc)

    def _sync(self) -> None:
        if self.check_root():
            return  # a root that is gone is not re-indexed (nor its folder made again)
        started = time.perf_counter()
        with self._sync_cond:
            self._dirty = False
            self._syncing = True
            changed, self._changed = self._changed, set()
        try:
            rel: list[str] | None = None
            if changed is not None and changed and len(changed) <= SCOPED_SYNC_MAX:
                rel = [os.path.relpath(p, self.root).replace(os.sep, "/") for p in changed]
            self.nav.index(only=rel)  # the watcher's paths only: no walk of the tree
            self.nav.grep_changed(rel)  # the grep index, when one was built: the same paths
            notify = getattr(self.nav, "files_changed", None)
            if callable(notify) and changed != set():
                # the watcher's paths: the servers re-read just those, no walk of the tree
                notify(sorted(changed) if changed is not None else None)
        finally:
            with self._sync_cond:
                self._syncing = False
                self._sync_cond.notify_all()
        self.last_sync_s = time.perf_counter() - started
        self.syncs += 1
        self._embed_wake.set()

    def wait_fresh(self, timeout_s: float = 5.0) -> bool:
        """Block until no change seen by the watcher is waiting to be indexed (bounded)."""
        with self._sync_cond:
            return self._sync_cond.wait_for(lambda: not self._dirty and not self._syncing, timeout=timeout_s)

    # -- requests --------------------------------------------------------------------------

    def handle(self, raw: bytes) -> list[dict[str, Any]]:
        """One request line to its replies: one for a request, none for a notification, one
        per request in a batch (which is refused). Never raises: whatever the line holds, a
        message that may be a request gets a JSON-RPC reply."""
        msg = check_message(raw)
        if isinstance(msg, Rejected):
            if not msg.answer:
                log.warning("ignored a malformed notification or response: %s", msg.message)
            return msg.replies()
        if "method" not in msg:
            log.warning("ignored a response: nav's daemon sends no requests (id %s)", shorten(msg.get("id")))
            return []
        reply = self._handle_request(msg)
        return [] if reply is None else [reply]

    def _handle_request(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        req_id = msg.get("id") if is_request_id(msg.get("id")) else None
        if "id" not in msg and msg["method"] not in METHODS and not msg["method"].startswith("daemon."):
            return None  # a notification of something unknown: nothing to answer, nothing to do
        method: str = msg["method"]
        params = msg.get("params", {})
        if "nav_root" in msg and not self.serves(msg["nav_root"]):
            self.check_root()  # a client at another path: perhaps this root moved
            return _error(
                req_id,
                OTHER_ROOT,
                f"this daemon serves {self.root}, not {shorten(_claimed_path(msg['nav_root']))}; "
                "ask the root's own daemon",
                {"type": "OtherRoot", "root": str(self.root)},
            )
        # asking how the daemon is doing is not using it: it neither pauses embedding nor keeps it from idling
        work = method not in ("daemon.status", "daemon.ping")
        with self._state:
            self.active += work
            self.requests += 1
            if work:
                self.last_activity = time.monotonic()
                self.last_used_wall = time.time()
                self.released = None  # in use again: what it needs starts again
        if work and self._registration is not None:
            self._registration.touch()  # the user's daemons are ranked by use (the budget)
        try:
            result = self._dispatch(method, params)
        except WireError as exc:
            return _error(req_id, exc.code, exc.message)
        except NavError as exc:
            data: dict[str, Any] = {"type": error_type(exc), "exit_code": exc.exit_code}
            if hasattr(exc, "suggestions"):
                data["suggestions"] = exc.suggestions
                data["name"] = getattr(exc, "name", None)
                data["note"] = getattr(exc, "note", None)
            return _error(req_id, exc.rpc_code, str(exc), data)
        except Exception as exc:  # a bug must cost one request, not the daemon
            log.error("internal error in %s: %s", shorten(method), traceback.format_exc())
            return _error(
                req_id,
                INTERNAL_ERROR,
                f"internal error in {shorten(method)}: {type(exc).__name__}: {shorten(str(exc), 300)}; "
                f"details in {self.paths.log}",
            )
        finally:
            with self._state:
                self.active -= work
                if work:
                    self.last_activity = time.monotonic()
        if "id" not in msg:
            return None  # a notification gets no response
        return {"jsonrpc": "2.0", "id": req_id, "result": result}

    def _dispatch(self, method: str, params: Any) -> Any:
        if method == "daemon.ping":
            return {"value": "pong"}
        if method == "daemon.status":
            return {"value": self.info()}
        if method == "daemon.stop":
            self.stop()
            return {"value": "stopping"}
        if method not in METHODS or not callable(getattr(self.nav, method, None)):
            raise WireError(
                METHOD_NOT_FOUND, f"unknown method `{shorten(method)}`; one of: {', '.join(sorted(METHODS))}"
            )
        fn = getattr(self.nav, method)
        # the team store answers --all-repos, not this root's index (which answers only when the
        # store cannot, and then says it is a partial answer): no wait for the local index
        team_store = isinstance(params, dict) and params.get("all_repos") is True
        if (
            method not in ("index", "status", "grep")  # grep reads its own index, not this one
            and not team_store
            and not self._initial_done.wait(timeout=INITIAL_INDEX_WAIT_S)
        ):
            # answering from a half-built index would call real symbols unknown
            raise WireError(
                INTERNAL_ERROR, f"the first index of {self.root} is still being built; ask again in a moment"
            )
        if method != "index" and not team_store and self.watching and not self.wait_fresh():
            log.warning("answering %s before a pending re-index finished", method)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        if isinstance(params, list):
            args = params
        elif isinstance(params, dict):
            kwargs = dict(params)
            extra = kwargs.pop("__args__", [])
            if not isinstance(extra, list):
                raise WireError(INVALID_PARAMS, f"`__args__` must be an array, got {shorten(extra)}")
            args = extra
        else:
            raise WireError(INVALID_PARAMS, f"params must be an array or an object, got {shorten(params)}")
        return encode(fn(**check_params(fn, args, kwargs)))

    def server_states(self) -> dict[str, str]:
        """Per language with a server (one per server: ts, tsx and js share one), what runs now:
        ``running``, ``starting``, ``stopped idle``, ``released`` (the daemon budget, or other
        roots in use), ``crashed``, ``not available: <why>``, or ``not started`` (starts on
        first use)."""
        live = self._pool.states(self.root)
        out: dict[str, str] = {}
        named: set[str] = set()
        for language, key in list(self._code_servers.items()):
            if key in named:
                continue
            named.add(key)
            warmed = next(
                (lang for lang, k in self._code_servers.items() if k == key and lang in self.servers), None
            )
            out[warmed or language] = live.get(key) or (
                "not available" if self.servers.get(warmed or "") == "not available" else "not started"
            )
        for key, state in live.items():
            if key not in named:
                out[key] = state
        return out

    def info(self) -> dict[str, Any]:
        import resource

        return {
            "pid": os.getpid(),
            "root": str(self.root),
            "socket": str(self.paths.socket),
            "uptime_s": round(time.time() - self.started_at, 1),
            "requests": self.requests,
            "watching": self.watching,
            "watcher": self._watcher.describe() if self._watcher is not None else None,
            "idle_timeout_s": self.idle_timeout_s,
            "last_sync_s": self.last_sync_s,
            "syncs": self.syncs,
            "servers": self.server_states(),
            "servers_rss_mb": self._pool.rss_mb(self.root),
            "idle_s": round(time.monotonic() - self.last_activity, 1),
            "budget": {"max_daemons": self.max_daemons, "over": self.over_budget, "released": self.released},
            "vectors": f"{self.vectors[0]}/{self.vectors[1]}" if self.vectors else None,
            "embedding": self.embedding,
            "model_releases": self.model_releases,
            "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "rss_now_mb": _rss_now_mb(),
        }


def _claimed_path(claimed: Any) -> Any:
    return claimed.get("path") if isinstance(claimed, dict) else claimed


def _error(req_id: Any, code: int, message: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": err}


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


def _rss_now_mb() -> float | None:
    """Resident memory now (``rss_mb`` is the peak), from /proc; None where there is none."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def _trim_heap() -> None:
    """Hand freed memory back to the OS (glibc keeps it otherwise); a no-op elsewhere."""
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _signal_ready(fd: int | None, word: str) -> None:
    if fd is None:
        return
    try:
        os.write(fd, (word + "\n").encode())
        os.close(fd)
    except OSError:
        pass


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self, address: str, handler: type[socketserver.BaseRequestHandler], *, daemon: Daemon
    ) -> None:
        self.nav_daemon = daemon
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per connection, up to :data:`MAX_CONNECTIONS`; past that, a connection is
        told why and closed at once, so no number of clients can exhaust the daemon's threads."""
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                request.settimeout(1.0)
                request.sendall(
                    dumps(
                        _error(
                            None, SERVER_BUSY, f"too many connections (at most {MAX_CONNECTIONS}); try again"
                        )
                    )
                )
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()  # the thread never started
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


CODE_CHECK_S = 1.0
"""How often (at most) a request re-reads the stamp of nav's own code."""


def code_stamp() -> tuple[tuple[str, int], ...]:
    """nav's own code as it is on disk: every module and query file of its packages with its
    modification time. A different stamp than at start means the running code is stale."""
    import lsp
    import navigator
    import semantic
    import storage

    out: list[tuple[str, int]] = []
    for pkg in (navigator, semantic, storage, lsp):
        base = Path(pkg.__file__ or "").parent
        for pattern in ("**/*.py", "**/*.scm"):
            for path in base.glob(pattern):
                with contextlib.suppress(OSError):
                    out.append((str(path), path.stat().st_mtime_ns))
    return tuple(sorted(out))


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        """Read request lines and answer each. A line longer than :data:`MAX_MESSAGE_BYTES` is
        skipped to its end unread (a bounded drain: memory stays flat, no parsing) and answered
        with "request too large"; a client that streams on without a line end past
        :data:`MAX_DRAIN_BYTES` is answered and disconnected."""
        daemon = self.server.nav_daemon
        while True:
            try:
                line = self.rfile.readline(MAX_MESSAGE_BYTES + 1)
            except OSError:
                return
            if not line:
                return
            if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                ended = self._drain_line()
                message = f"request too large: more than {MAX_MESSAGE_BYTES:,} bytes (at most {MAX_MESSAGE_BYTES:,})"
                if not ended:
                    message += "; closing the connection"
                if not self._send(_error(None, INVALID_REQUEST, message)) or not ended:
                    return
                continue
            if daemon.code_changed():
                # no answer from stale code: the client sees the connection close, starts a
                # daemon running the new code and asks again
                log.warning("nav's code changed on disk since this daemon started; stopping")
                daemon.stop()
                return
            # every line is answered, an empty one too (a parse error): a client never waits
            for reply in daemon.handle(line):
                if not self._send(reply):
                    return

    def _drain_line(self) -> bool:
        """Discard the rest of an oversized line; True when its end was reached within the bound."""
        drained = 0
        while drained < MAX_DRAIN_BYTES:
            try:
                chunk = self.rfile.readline(64 * 1024)
            except OSError:
                return False
            if not chunk:
                return False
            drained += len(chunk)
            if chunk.endswith(b"\n"):
                return True
        return False

    def _send(self, reply: dict[str, Any]) -> bool:
        try:
            data = dumps(reply)
        except (TypeError, ValueError) as exc:  # a result JSON cannot carry: say so, keep serving
            log.error("cannot encode the reply to request %r: %s", reply.get("id"), exc)
            data = dumps(
                _error(reply.get("id"), INTERNAL_ERROR, f"cannot encode the reply: {shorten(str(exc))}")
            )
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            return False
        return True


def languages_to_warm(sizes: dict[str, tuple[int, int]]) -> list[str]:
    """Which languages' servers a daemon starts before the first query, from the index's
    (files, lines) per language: the main language (most lines among languages with a server),
    and any other server's languages holding at least :data:`WARM_SHARE` of those files or
    lines. One language per server (ts, tsx and js share one), the one with the most files."""
    from lsp.registry import server_key

    groups: dict[str, list[Any]] = {}  # server key -> [files, lines, language with most files, its files]
    for language, (files, lines) in sizes.items():
        key = server_key(language) if language in WARMABLE and files > 0 else None
        if key is None:
            continue
        g = groups.setdefault(key, [0, 0, language, files])
        g[0] += files
        g[1] += lines
        if files > g[3] or (files == g[3] and language < g[2]):
            g[2], g[3] = language, files
    if not groups:
        return []
    total_files = sum(g[0] for g in groups.values())
    total_lines = sum(g[1] for g in groups.values())
    main = max(groups, key=lambda k: (groups[k][1], groups[k][0], k))
    out = [groups[main][2]]
    for key, (files, lines, language, _) in sorted(groups.items(), key=lambda kv: (-kv[1][1], kv[0])):
        if key != main and (
            files >= WARM_SHARE * total_files or (total_lines and lines >= WARM_SHARE * total_lines)
        ):
            out.append(language)
    return out


def early_pool(root: Path, index_db: Path, *, server_idle_s: float | None = None) -> Any:
    """Start the servers of the languages an existing index holds before the rest of nav is
    imported (the critical path of a cold first query: ~0.5-1 s of imports). Returns the
    pool, or None when there is no index to read yet (the daemon warms after its first run)."""
    from storage.peek import language_sizes

    if not index_db.is_file():
        return None
    try:
        sizes = language_sizes(index_db, timeout_s=1.0)
    except StorageError as exc:
        log.warning("cannot read languages to warm servers early: %s", exc)
        return None
    from lsp.pool import ServerPool

    warm = languages_to_warm(sizes)
    if not warm:
        return None
    pool = ServerPool() if server_idle_s is None else ServerPool(idle_timeout_s=server_idle_s)
    for language in warm:
        threading.Thread(
            target=pool.warm, args=(root, language), kwargs={"deadline_s": 300.0}, name=f"nav-early-{language}",
            daemon=True,
        ).start()  # fmt: skip
    return pool


def _env_number(name: str, default: float, *, low: float = 0.0) -> float:
    """A positive number from the environment; the default, with a warning naming the bad value."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value >= low and value != float("inf")):
        log.warning("%s=%s is not a usable number (at least %g); using %g", name, shorten(raw), low, default)
        return default
    return value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m navigator.frontends.daemon", description="Run nav's daemon for ROOT."
    )
    ap.add_argument("root", type=Path)
    ap.add_argument("--idle-timeout", type=float, default=DEFAULT_IDLE_TIMEOUT_S)
    ap.add_argument("--no-watch", action="store_true")
    ap.add_argument(
        "--no-embed",
        action="store_true",
        default=os.environ.get("NAV_DAEMON_NO_EMBED") == "1",
        help="Do not embed missing vectors in the background (env NAV_DAEMON_NO_EMBED=1).",
    )
    ap.add_argument("--ready-fd", type=int, default=None)
    ap.add_argument(
        "--no-warm",
        action="store_true",
        default=os.environ.get("NAV_DAEMON_NO_WARM") == "1",
        help="Do not start language servers before the first query (env NAV_DAEMON_NO_WARM=1).",
    )
    args = ap.parse_args(argv)
    if not args.idle_timeout > 0 or args.idle_timeout == float("inf"):
        ap.error(f"--idle-timeout must be a positive number of seconds, got {args.idle_timeout}")
    paths: DaemonPaths = daemon_paths(args.root.resolve())
    ensure_nav_dir(paths.nav_dir)
    if args.ready_fd is not None:
        os.close(open_private(paths.log, os.O_WRONLY | os.O_APPEND))  # 0600 before logging opens it
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.FileHandler(paths.log, encoding="utf-8")] if args.ready_fd is not None else None,
    )
    from lsp.pool import DEFAULT_IDLE_TIMEOUT_S as DEFAULT_SERVER_IDLE_S

    model_idle_s = _env_number("NAV_MODEL_IDLE_S", DEFAULT_MODEL_IDLE_S)
    server_idle_s = _env_number("NAV_SERVER_IDLE_S", DEFAULT_SERVER_IDLE_S)
    slice_s = _env_number("NAV_EMBED_SLICE_S", EMBED_SLICE_S)
    max_daemons = int(_env_number("NAV_MAX_DAEMONS", DEFAULT_MAX_DAEMONS, low=1))
    daemon = Daemon(
        args.root,
        idle_timeout_s=args.idle_timeout,
        watch=not args.no_watch,
        embed=not args.no_embed,
        warm_servers=not args.no_warm,
        model_idle_s=model_idle_s,
        server_idle_s=server_idle_s,
        max_daemons=max_daemons,
        pool=None
        if args.no_warm
        else early_pool(args.root.resolve(), paths.nav_dir / "index.db", server_idle_s=server_idle_s),
    )
    daemon.embed_slice_s = slice_s
    signal.signal(signal.SIGTERM, lambda *_: daemon.stop())
    signal.signal(signal.SIGINT, lambda *_: daemon.stop())
    return daemon.serve(args.ready_fd)


if __name__ == "__main__":
    sys.exit(main())
