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
starts a daemon running the new code and asks again (see
:func:`~navigator.frontends.daemon_identity.code_stamp`).

A daemon follows its root. Every :data:`ROOT_CHECK_S`, on the watcher's word that the root
itself went, and before each re-index, it checks that the root's path still leads to the
folder it started on (device and inode) and that ``.nav/daemon.sock`` is still its own socket;
when not (the root deleted, moved or replaced), it exits, stopping its language servers, and
never makes the folder again. Each request names the client's root (``nav_root``); a daemon
of another root (its moved socket reached through the new path) refuses it with
:data:`OTHER_ROOT`, and the client starts the root's own.

This module holds the daemon's lifecycle, its freshness (watcher, debounced re-index) and the
request dispatch. Beside it: the request counters (:mod:`~navigator.frontends.daemon_activity`),
background embedding and the user's budget of daemons (:mod:`~navigator.frontends.daemon_embed`),
the root's and the code's identity (:mod:`~navigator.frontends.daemon_identity`), the socket
(:mod:`~navigator.frontends.daemon_socket`) and the early start of language servers
(:mod:`~navigator.frontends.daemon_servers`).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import logging
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navigator.errors import NavError, shorten
from navigator.frontends.daemon_activity import Activity, IndexUsers
from navigator.frontends.daemon_embed import (
    DEFAULT_MODEL_IDLE_S,
    EMBED_SLICE_S,
    BackgroundEmbedder,
    MemoryBudget,
    embed_lock_path,
)
from navigator.frontends.daemon_identity import Identity
from navigator.frontends.daemon_servers import EarlyStart, ServerWarmup, early_pool, open_asked_files
from navigator.frontends.daemon_socket import (
    MAX_CONNECTIONS as MAX_CONNECTIONS,  # bench/fault_scenarios reads it here
)
from navigator.frontends.daemon_socket import SocketServer, signal_ready
from navigator.frontends.registry import DEFAULT_MAX_DAEMONS, Registration, registry_dir
from navigator.frontends.wire import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Rejected,
    WireError,
    check_message,
    check_params,
    encode,
    error_reply,
    error_type,
    is_request_id,
)
from navigator.paths import (
    DaemonPaths,
    daemon_paths,
    ensure_nav_dir,
    ensure_socket_dir,
    open_private,
)
from navigator.verbs import SERVED, served

if TYPE_CHECKING:
    from navigator.public import ServerPool
    from navigator.watch import Watcher

log = logging.getLogger("nav.daemon")

DEFAULT_IDLE_TIMEOUT_S = 1800.0
DEBOUNCE_S = 0.15
INITIAL_INDEX_WAIT_S = 240.0
SCOPED_SYNC_MAX = 2000
"""Above this many changed paths (a branch switch), a full walk is cheaper than path by path."""
ROOT_CHECK_S = 2.0
"""How often the idle clock checks that the root is still there, at its path, with our socket."""
METHODS: frozenset[str] = frozenset(SERVED)
"""The verbs the daemon serves (:data:`navigator.verbs.SERVED`). Anything else is "method not found"."""

OTHER_ROOT = -32001
"""The request's ``nav_root`` is not this daemon's root (it moved, or was replaced): ask your own."""
STOP_WAIT_S = 10.0
"""How long a stopping daemon waits for the threads at work (the first index, a re-index, a
request, the language servers' early launch) before it exits without them."""


class Daemon:
    """Owns the Navigator, the watcher, the socket server, the idle clock and the request
    dispatch; the request counters are its :class:`Activity`, background embedding its
    :class:`BackgroundEmbedder`, what it gives back its :class:`MemoryBudget`."""

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
        pool: ServerPool | None = None,
        early: EarlyStart | None = None,
        server_idle_s: float | None = None,
        max_daemons: int = DEFAULT_MAX_DAEMONS,
        registry: Path | None = None,
    ) -> None:
        from navigator.api import Navigator
        from navigator.exact import ExactNavigator, NavigatorTable
        from navigator.public import ServerPool

        self.root = root.resolve()
        self.paths = daemon_paths(self.root)
        self.idle_timeout_s = idle_timeout_s
        self.nav = Navigator(self.root)
        # the daemon owns the pool (servers maybe already starting: early_pool), so it can say
        # what runs and release it
        if pool is None and early is not None:
            pool = early.pool
        if pool is None:
            pool = ServerPool() if server_idle_s is None else ServerPool(idle_timeout_s=server_idle_s)
        self._pool = pool
        self._early = early
        """The threads launching servers before the pool existed (:func:`early_pool`), if any."""
        self.nav._exact = ExactNavigator(self.root, NavigatorTable(self.nav), pool=pool)
        self._verbs = served(self.nav)
        """The one table from a request's method to the verb that answers it."""
        self.max_daemons = max_daemons
        self.registry = registry if registry is not None else registry_dir()
        self._registration: Registration | None = None
        self.started_at = time.time()
        self.activity = Activity()
        self._state = threading.Lock()
        self._stop = threading.Event()
        self._users = IndexUsers()
        """The threads using the index's connections: they are closed only once none is."""
        self._threads: list[threading.Thread] = []
        """The daemon's own threads (first index, idle clock, embedder), joined when it stops."""
        self._server: SocketServer | None = None
        self._watcher: Watcher | None = None
        self._debounce: threading.Timer | None = None
        self._sync_cond = threading.Condition()
        self._dirty = False
        self._syncing = False
        self._grep_syncing = False
        """The grep index's part of a sync is running (it goes first: grep waits only for it)."""
        self.watching = False
        self.watch = watch
        self.last_sync_s: float | None = None
        self.syncs = 0
        self.embed_background = embed
        self.warm_servers = warm_servers
        self._warmup = ServerWarmup(self.root, self._pool, stopping=self._stop)
        self._embedder: threading.Thread | None = None
        self._initial_done = threading.Event()
        self._changed: set[str] | None = set()
        """Paths the watcher saw change since the last re-index (None: unknown, check all)."""
        self.embedder = BackgroundEmbedder(
            self.nav,
            self.activity,
            stopping=self._stop,
            enabled=embed,
            lock_path=embed_lock if embed_lock is not None else embed_lock_path(),
            max_daemons=max_daemons,
            over_budget=lambda: self.budget.over_budget,
            watching=lambda: self.watching,
        )
        self.budget = MemoryBudget(
            self.nav,
            self._pool,
            self.root,
            self.activity,
            self.embedder,
            max_daemons=max_daemons,
            model_idle_s=model_idle_s,
            stop=self.stop,
        )
        self.embed_slice_s = EMBED_SLICE_S
        """How long one background embedding slice runs before it looks up (env NAV_EMBED_SLICE_S)."""
        self.identity = Identity(self.root, self.paths.socket)
        """The root, socket and code this daemon started with, and whether they still are its own."""

    # -- lifecycle -------------------------------------------------------------------------

    def serve(self, ready_fd: int | None = None) -> int:
        ensure_nav_dir(self.paths.nav_dir)
        lock_fd = open_private(self.paths.lock)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            signal_ready(ready_fd, "busy")
            os.close(lock_fd)
            return 0
        try:
            ensure_socket_dir(self.paths)  # deep roots: a folder only this user can enter
            if self.paths.socket.exists() or self.paths.socket.is_symlink():
                self.paths.socket.unlink()  # left by a daemon that died; we hold the lock now
            self._server = SocketServer(str(self.paths.socket), self)
            os.chmod(self.paths.socket, 0o600)  # in a 0700 folder already; this too for good measure
            self.identity.bound()
            info_fd = open_private(self.paths.info, os.O_WRONLY | os.O_TRUNC)
            with os.fdopen(info_fd, "w", encoding="utf-8") as fh:
                fh.write(
                    json.dumps({"pid": os.getpid(), "socket": str(self.paths.socket), "root": str(self.root)})
                )
            self._registration = Registration(
                self.registry, root=str(self.root), socket=str(self.paths.socket)
            )
            self.embedder.registration = self.budget.registration = self._registration
            if self.warm_servers:
                self._warm_servers()  # the languages of the index already there, first: the critical path
            if self.watch:
                self._start_watcher()
            self.nav.refresh = not self.watching  # the watcher keeps the index fresh; else stat per query
            self.nav.watched_changes = self._unindexed_changes
            self._threads += [
                threading.Thread(target=self._initial_index, name="nav-initial-index", daemon=True),
                threading.Thread(target=self._idle_clock, name="nav-idle", daemon=True),
            ]
            if self.embed_background:
                self.nav.search_embed_budget_s = 0.0  # queries never wait for the model; this thread embeds
                self._embedder = threading.Thread(
                    target=self.embedder.run, args=(self.embed_slice_s,), name="nav-embed", daemon=True
                )
                self._threads.append(self._embedder)
            for thread in self._threads:
                thread.start()
            signal_ready(ready_fd, "ready")
            log.info("serving %s on %s (pid %d)", self.root, self.paths.socket, os.getpid())
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self._shutdown_parts()
            if self.identity.lost is None:  # else the paths may be another root's (or daemon's) now
                with contextlib.suppress(FileNotFoundError):
                    self.paths.socket.unlink()
                with contextlib.suppress(FileNotFoundError):
                    self.paths.info.unlink()
            if self._registration is not None:
                self._registration.close()
            os.close(lock_fd)
        return 0

    def code_changed(self) -> bool:
        """Whether nav's code on disk differs from what this daemon runs (:meth:`Identity.code_changed`)."""
        return self.identity.code_changed()

    def stop(self) -> None:
        self._stop.set()
        self.embedder.wake.set()
        if self._server is not None:
            threading.Thread(target=self._server.shutdown, daemon=True).start()

    def stopping(self) -> bool:
        """Whether the daemon is on its way out (then it answers nothing more)."""
        return self._stop.is_set()

    def _shutdown_parts(self) -> None:
        """Stop every language server, then close the index's connections once no thread uses
        them. A connection closed under a thread in the middle of a statement crashed the
        daemon (SIGSEGV: CPython's sqlite3 reads the closed handle), so the threads at work are
        waited for, within :data:`STOP_WAIT_S`; one still at work then (a long first index)
        keeps its connections, which the process's exit closes (SQLite's journal keeps the
        index whole), and the log says so."""
        deadline = time.monotonic() + STOP_WAIT_S
        if self._watcher is not None:
            self._watcher.stop()
        with self._state:
            if self._debounce is not None:
                self._debounce.cancel()  # a re-index not begun yet is not begun
        if self._pool is not None:
            self._pool.close()  # every server stopped; a question waiting on one ends now
        late = self._early.join(deadline - time.monotonic()) if self._early is not None else []
        if late:  # a server it launches now is killed by the closed pool, once it gets there
            log.warning("stopping while %s still launching a server", ", ".join(late))
        quiet = self._users.close_gate(deadline - time.monotonic())
        for thread in self._threads:  # the embedder: a running slice finishes and saves its vectors
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        busy = [t.name for t in self._threads if t.is_alive()] + ([] if quiet else ["a request or re-index"])
        if busy:
            log.warning(
                "exiting while %s still at work: its connections to the index close with the process",
                ", ".join(busy),
            )
            return
        self.nav.close()

    def _initial_index(self) -> None:
        try:
            self._sync()
        except NavError as exc:
            log.warning("initial index failed: %s", exc)
        finally:
            self._initial_done.set()
        if not self._users.enter():
            return  # stopping: no server to warm
        try:
            if self.warm_servers:
                self._warm_servers()
            else:
                self._note_languages()
        finally:
            self._users.leave()

    def _warm_servers(self) -> None:
        """Start the servers of the languages the root is mostly made of (see
        :mod:`navigator.frontends.daemon_servers`); returns at once."""
        self._warmup.warm(self._language_sizes)

    def _note_languages(self) -> None:
        self._warmup.note_languages(self._language_sizes)

    def _language_sizes(self) -> dict[str, tuple[int, int]]:
        return self.nav.store.language_sizes()

    def _idle_clock(self) -> None:
        while not self._stop.wait(min(ROOT_CHECK_S, self.idle_timeout_s / 4)):
            if self.check_root():
                return
            busy, idle = self.activity.now()
            if not busy and idle > self.idle_timeout_s:
                log.info("idle for %.0f s; exiting", idle)
                self.stop()
                return
            if not busy:
                self.budget.release_model_if_idle()
                self.budget.keep_budget(idle)

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
        if self.identity.lost is None:
            self.identity.lost = self.identity.why_lost()
            if self.identity.lost is None:
                return False
            log.warning("%s; exiting", self.identity.lost)
            self.stop()
        return True

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
        if not self._users.enter():
            return  # stopping: the index's connections are about to close
        try:
            self._sync_index()
        finally:
            self._users.leave()

    def _sync_index(self) -> None:
        if self.check_root():
            return  # a root that is gone is not re-indexed (nor its folder made again)
        started = time.perf_counter()
        with self._sync_cond:
            self._dirty = False
            self._syncing = self._grep_syncing = True
            changed, self._changed = self._changed, set()
        try:
            rel: list[str] | None = None
            if changed is not None and changed and len(changed) <= SCOPED_SYNC_MAX:
                rel = [os.path.relpath(p, self.root).replace(os.sep, "/") for p in changed]
            try:
                # the grep index first, when one was built (the same paths): a stat per file,
                # so a grep need not wait for the parse of a first index of millions of lines
                self.nav.grep_changed(rel)
            finally:
                with self._sync_cond:
                    self._grep_syncing = False
                    self._sync_cond.notify_all()
            self.nav.index(only=rel)  # the watcher's paths only: no walk of the tree
            if changed != set():
                # the watcher's paths: the servers re-read just those, no walk of the tree
                self.nav.files_changed(sorted(changed) if changed is not None else None)
        finally:
            with self._sync_cond:
                self._syncing = False
                self._sync_cond.notify_all()
        self.last_sync_s = time.perf_counter() - started
        self.syncs += 1
        self.embedder.wake.set()

    def _unindexed_changes(self) -> int | None:
        """Paths the watcher saw change that are not indexed yet (None: not watching, or it
        does not know which: ``status`` walks the tree then)."""
        if not self.watching:
            return None
        with self._sync_cond:
            changed = self._changed
            return None if changed is None else len(changed)

    def wait_fresh(self, timeout_s: float = 5.0, *, grep: bool = False) -> bool:
        """Block until no change seen by the watcher is waiting to be indexed (bounded); with
        ``grep``, until none is waiting for the grep index (the symbol index may still be at work)."""

        def fresh() -> bool:
            return not self._dirty and not (self._grep_syncing if grep else self._syncing)

        with self._sync_cond:
            return self._sync_cond.wait_for(fresh, timeout=timeout_s)

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
        if "nav_root" in msg and not self.identity.serves(msg["nav_root"]):
            self.check_root()  # a client at another path: perhaps this root moved
            return error_reply(
                req_id,
                OTHER_ROOT,
                f"this daemon serves {self.root}, not {shorten(_claimed_path(msg['nav_root']))}; "
                "ask the root's own daemon",
                {"type": "OtherRoot", "root": str(self.root)},
            )
        # asking how the daemon is doing is not using it: it neither pauses embedding nor keeps it from idling
        work = method not in ("daemon.status", "daemon.ping")
        self.activity.begin(work=work)
        if work:
            self.budget.in_use()
        if work and self._registration is not None:
            self._registration.touch()  # the user's daemons are ranked by use (the budget)
        using = method not in ("daemon.stop", "daemon.ping")
        try:
            if using and not self._users.enter():
                raise WireError(INTERNAL_ERROR, f"nav's daemon for {self.root} is stopping; ask again")
            try:
                result = self._dispatch(method, params)
            finally:
                if using:
                    self._users.leave()
        except WireError as exc:
            return error_reply(req_id, exc.code, exc.message)
        except NavError as exc:
            data: dict[str, Any] = {"type": error_type(exc), "exit_code": exc.exit_code}
            if hasattr(exc, "suggestions"):
                data["suggestions"] = exc.suggestions
                data["name"] = getattr(exc, "name", None)
                data["note"] = getattr(exc, "note", None)
            return error_reply(req_id, exc.rpc_code, str(exc), data)
        except Exception as exc:  # a bug must cost one request, not the daemon
            log.error("internal error in %s: %s", shorten(method), traceback.format_exc())
            return error_reply(
                req_id,
                INTERNAL_ERROR,
                f"internal error in {shorten(method)}: {type(exc).__name__}: {shorten(str(exc), 300)}; "
                f"details in {self.paths.log}",
            )
        finally:
            self.activity.end(work=work)
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
        fn = self._verbs.get(method)
        if fn is None:
            raise WireError(
                METHOD_NOT_FOUND, f"unknown method `{shorten(method)}`; one of: {', '.join(sorted(METHODS))}"
            )
        # the team store answers --all-repos, not this root's index (which answers only when the
        # store cannot, and then says it is a partial answer): no wait for the local index
        team_store = isinstance(params, dict) and params.get("all_repos") is True
        if not self._initial_done.is_set() and self._pool is not None and not team_store:
            open_asked_files(self._pool, self.root, self.paths.nav_dir / "index.db", method, params)
        if (
            method not in ("index", "status", "grep")  # grep reads its own index, not this one
            and not team_store
            and not self._initial_done.wait(timeout=INITIAL_INDEX_WAIT_S)
        ):
            # answering from a half-built index would call real symbols unknown
            raise WireError(
                INTERNAL_ERROR, f"the first index of {self.root} is still being built; ask again in a moment"
            )
        if (
            method != "index"
            and not team_store
            and self.watching
            and not self.wait_fresh(grep=method == "grep")
        ):
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
        """Per language with a server, what runs now (:meth:`ServerWarmup.states`)."""
        return self._warmup.states()

    def info(self) -> dict[str, Any]:
        import resource

        return {
            "pid": os.getpid(),
            "root": str(self.root),
            "socket": str(self.paths.socket),
            "uptime_s": round(time.time() - self.started_at, 1),
            "requests": self.activity.requests,
            "watching": self.watching,
            "watcher": self._watcher.describe() if self._watcher is not None else None,
            "idle_timeout_s": self.idle_timeout_s,
            "last_sync_s": self.last_sync_s,
            "syncs": self.syncs,
            "servers": self.server_states(),
            "servers_rss_mb": self._pool.rss_mb(self.root),
            "idle_s": round(time.monotonic() - self.activity.last_activity, 1),
            "budget": {
                "max_daemons": self.max_daemons,
                "over": self.budget.over_budget,
                "released": self.budget.released,
            },
            "vectors": f"{vectors[0]}/{vectors[1]}" if (vectors := self.embedder.vectors) else None,
            "embed_rate": self.embedder.rate(),
            "embed_runtime": self.embedder.runtime(),
            "vectors_eta_s": self.embedder.eta_s(),
            "embedding": self.embedder.embedding,
            "model_releases": self.budget.model_releases,
            "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "rss_now_mb": _rss_now_mb(),
        }


def _claimed_path(claimed: Any) -> Any:
    return claimed.get("path") if isinstance(claimed, dict) else claimed


def _rss_now_mb() -> float | None:
    """Resident memory now (``rss_mb`` is the peak), from /proc; None where there is none."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


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


def _record_native_crashes(log_path: Path | None) -> None:
    """A native crash (SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL) in any thread writes every
    thread's Python stack to the daemon's log (``log_path``; stderr in the foreground): the only
    trace such a crash leaves, as no traceback is printed. The descriptor stays open for the
    process's life (faulthandler writes to it from the signal handler)."""
    import faulthandler

    if log_path is None:
        faulthandler.enable(all_threads=True)
        return
    faulthandler.enable(file=open_private(log_path, os.O_WRONLY | os.O_APPEND), all_threads=True)


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
    ap.add_argument(
        "--expect",
        nargs=2,
        metavar=("METHOD", "TARGET"),
        default=None,
        help="The question the starting client will ask first (a hint: the servers that load a "
        "project only once one of its files is open are given the target's files at launch).",
    )
    args = ap.parse_args(argv)
    if not args.idle_timeout > 0 or args.idle_timeout == float("inf"):
        ap.error(f"--idle-timeout must be a positive number of seconds, got {args.idle_timeout}")
    paths: DaemonPaths = daemon_paths(args.root.resolve())
    ensure_nav_dir(paths.nav_dir)
    if args.ready_fd is not None:
        os.close(open_private(paths.log, os.O_WRONLY | os.O_APPEND))  # 0600 before logging opens it
    _record_native_crashes(paths.log if args.ready_fd is not None else None)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.FileHandler(paths.log, encoding="utf-8")] if args.ready_fd is not None else None,
    )
    from navigator.public import DEFAULT_SERVER_IDLE_S

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
        early=None
        if args.no_warm
        else early_pool(
            args.root.resolve(),
            paths.nav_dir / "index.db",
            server_idle_s=server_idle_s,
            expect=(args.expect[0], args.expect[1]) if args.expect else None,
        ),
    )
    daemon.embed_slice_s = slice_s
    signal.signal(signal.SIGTERM, lambda *_: daemon.stop())
    signal.signal(signal.SIGINT, lambda *_: daemon.stop())
    return daemon.serve(args.ready_fd)


if __name__ == "__main__":
    sys.exit(main())
