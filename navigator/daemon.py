"""The daemon: one warm process per root that answers JSON-RPC 2.0 on a local socket.

It keeps the index connection, language servers and the embedding model loaded,
watches the tree (debounced) so the index follows edits, serves several clients at
once (a thread per connection; SQLite connections are per thread), and exits after
an idle timeout. Messages are JSON-RPC 2.0 objects, one per line.

Start-up is race-free: the daemon takes an exclusive lock on ``.nav/daemon.lock``
before it binds the socket, so of two daemons started at once one serves and the
other exits; a socket left behind by a killed daemon is removed by the next one.
The starter learns the outcome from a pipe (``ready`` / ``busy``), never by sleeping.

Run by ``nav daemon start`` or automatically by the CLI; ``python -m navigator.daemon
ROOT`` runs one in the foreground.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import inspect
import json
import logging
import os
import signal
import socketserver
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from navigator.paths import DaemonPaths, daemon_paths
from navigator.wire import encode
from storage.errors import NavError

log = logging.getLogger("nav.daemon")

DEFAULT_IDLE_TIMEOUT_S = 1800.0
DEBOUNCE_S = 0.15
INITIAL_INDEX_WAIT_S = 240.0
SCOPED_SYNC_MAX = 2000
"""Above this many changed paths (a branch switch), a full walk is cheaper than path by path."""
WARMABLE = frozenset({"python", "typescript", "tsx", "javascript", "go", "c", "cpp", "java"})

# Navigator verbs the daemon serves. Anything else is "method not found".
METHODS: frozenset[str] = frozenset(
    {
        "index",
        "status",
        "definitions",
        "symbols",
        "outline",
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
    }
)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


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
        pool: Any = None,
    ) -> None:
        from navigator.api import Navigator

        self.root = root.resolve()
        self.paths = daemon_paths(self.root)
        self.idle_timeout_s = idle_timeout_s
        self.nav = Navigator(self.root)
        self._pool = pool
        if pool is not None:  # servers already starting (early_pool): the exact leg uses them
            from navigator.exact import ExactNavigator, NavigatorTable

            self.nav._exact = ExactNavigator(self.root, NavigatorTable(self.nav), pool=pool)
        self.started_at = time.time()
        self.last_activity = time.monotonic()
        self.active = 0
        self.requests = 0
        self._state = threading.Lock()
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._observer: Any = None
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
        """Language -> "starting" / "ready" / "not available", for the servers warmed at start."""
        self._embed_wake = threading.Event()
        self._embedder: threading.Thread | None = None
        self._initial_done = threading.Event()
        self._changed: set[str] | None = set()
        """Paths the watcher saw change since the last re-index (None: unknown, check all)."""
        self.vectors: tuple[int, int] | None = None
        """(chunks with a vector, chunks) after the last background embedding slice."""

    # -- lifecycle -------------------------------------------------------------------------

    def serve(self, ready_fd: int | None = None) -> int:
        self.paths.nav_dir.mkdir(parents=True, exist_ok=True)
        lock_fd = os.open(self.paths.lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _signal_ready(ready_fd, "busy")
            os.close(lock_fd)
            return 0
        try:
            if self.paths.socket.exists() or self.paths.socket.is_symlink():
                self.paths.socket.unlink()  # left by a daemon that died; we hold the lock now
            self._server = _Server(str(self.paths.socket), _Handler, daemon=self)
            os.chmod(self.paths.socket, 0o600)
            self.paths.info.write_text(
                json.dumps({"pid": os.getpid(), "socket": str(self.paths.socket), "root": str(self.root)}),
                encoding="utf-8",
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
                self._embedder = threading.Thread(target=self._embed_loop, name="nav-embed", daemon=True)
                self._embedder.start()
            _signal_ready(ready_fd, "ready")
            log.info("serving %s on %s (pid %d)", self.root, self.paths.socket, os.getpid())
            self._server.serve_forever(poll_interval=0.2)
        finally:
            self._shutdown_parts()
            with contextlib.suppress(FileNotFoundError):
                self.paths.socket.unlink()
            with contextlib.suppress(FileNotFoundError):
                self.paths.info.unlink()
            os.close(lock_fd)
        return 0

    def stop(self) -> None:
        self._stop.set()
        self._embed_wake.set()
        if self._server is not None:
            threading.Thread(target=self._server.shutdown, daemon=True).start()

    def _shutdown_parts(self) -> None:
        if self._embedder is not None:
            self._embedder.join(timeout=10)  # let a running slice finish and save its vectors
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
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

    def _warm_servers(self) -> None:
        """Start the servers of every language the index holds, now and side by side, so the first
        exact query does not pay a cold start (jdtls needs ~1 min on a mid-size Java repository,
        more than a query's deadline). Returns at once; each server is warmed in a thread."""
        from lsp.registry import server_key

        try:
            languages = self.nav.store.stats().languages
        except NavError as exc:
            log.warning("cannot read languages to warm servers: %s", exc)
            return
        by_server: dict[str, str] = {}
        for language, files in sorted(languages.items(), key=lambda kv: -kv[1]):
            key = server_key(language) if language in WARMABLE and files > 0 else None
            if key is not None:
                by_server.setdefault(key, language)  # one server serves ts, tsx and js
        for language in by_server.values():
            if self._stop.is_set() or self.servers.get(language) in ("starting", "ready"):
                continue
            self.servers[language] = "starting"
            threading.Thread(target=self._warm_one, args=(language,), name=f"nav-warm-{language}", daemon=True).start()

    def _warm_one(self, language: str) -> None:
        try:
            ready = self.nav.exact.pool.warm(self.root, language, deadline_s=300.0)
        except Exception:  # warming is an optimisation: a failure is logged, queries still work
            log.error("warming the %s server failed: %s", language, traceback.format_exc())
            self.servers[language] = "not available"
            return
        self.servers[language] = "ready" if ready else "not available"
        log.info("%s server %s", language, self.servers[language])

    def _embed_loop(self, slice_s: float = 3.0) -> None:
        """Fill in missing vectors in slices, so lexical search answers at once and vectors follow."""
        try:
            import torch

            torch.set_num_threads(1)  # leave the other core to queries
        except ImportError:
            pass
        while not self._stop.is_set():
            if self._stop.is_set():
                return
            try:
                report = self.nav.embed(budget_s=slice_s)
            except NavError as exc:
                log.warning("background embedding stopped: %s", exc)
                return
            except Exception:  # a model failure must not kill the daemon; searches say complete=false
                log.error("background embedding failed: %s", traceback.format_exc())
                return
            self.vectors = (report.vectors, report.chunks)
            if report.complete:
                self._embed_wake.wait(timeout=60.0)  # until the watcher re-indexes something
                self._embed_wake.clear()

    def _idle_clock(self) -> None:
        while not self._stop.wait(min(5.0, self.idle_timeout_s / 4)):
            with self._state:
                idle = time.monotonic() - self.last_activity
                busy = self.active > 0
            if not busy and idle > self.idle_timeout_s:
                log.info("idle for %.0f s; exiting", idle)
                self.stop()
                return

    # -- freshness -------------------------------------------------------------------------

    def _start_watcher(self) -> None:
        try:
            from watchdog.events import FileSystemEvent, FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            log.warning("watchdog is not installed; queries check file stats instead")
            return
        daemon = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                path = str(event.src_path)
                rel = os.path.relpath(path, daemon.root)
                top = rel.split(os.sep, 1)[0]
                if top in (".nav", ".git") or event.event_type in ("opened", "closed_no_write"):
                    return
                if event.is_directory:
                    if event.event_type == "modified":
                        return  # a file inside changed: that file has its own event
                    daemon._schedule_sync(None)  # a folder appeared, went or moved: check everything
                    return
                changed = [path]
                dest = getattr(event, "dest_path", "")
                if dest:
                    changed.append(str(dest))
                daemon._schedule_sync(changed)

        try:
            observer = Observer()
            observer.schedule(Handler(), str(self.root), recursive=True)
            observer.start()
        except OSError as exc:  # e.g. the inotify watch limit
            log.warning("cannot watch %s (%s); queries check file stats instead", self.root, exc)
            return
        self._observer = observer
        self.watching = True

    def _schedule_sync(self, paths: list[str] | None = None) -> None:
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

    def handle(self, raw: bytes) -> dict[str, Any] | None:
        try:
            msg = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            return _error(None, PARSE_ERROR, f"invalid JSON: {exc}")
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0" or not isinstance(msg.get("method"), str):
            return _error(
                msg.get("id") if isinstance(msg, dict) else None,
                INVALID_REQUEST,
                'expected a JSON-RPC 2.0 request object: {"jsonrpc": "2.0", "id": 1, "method": ..., "params": {...}}',
            )
        req_id = msg.get("id")
        method: str = msg["method"]
        params = msg.get("params", {})
        with self._state:
            self.active += 1
            self.requests += 1
            self.last_activity = time.monotonic()
        try:
            result = self._dispatch(method, params)
        except _RpcError as exc:
            return _error(req_id, exc.code, exc.message)
        except NavError as exc:
            data: dict[str, Any] = {"type": type(exc).__name__, "exit_code": exc.exit_code}
            if hasattr(exc, "suggestions"):
                data["suggestions"] = exc.suggestions
                data["name"] = getattr(exc, "name", None)
            return _error(req_id, exc.rpc_code, str(exc), data)
        except Exception as exc:  # a bug must cost one request, not the daemon
            log.error("internal error in %s: %s", method, traceback.format_exc())
            return _error(req_id, INTERNAL_ERROR, f"internal error in {method}: {type(exc).__name__}: {exc}")
        finally:
            with self._state:
                self.active -= 1
                self.last_activity = time.monotonic()
        if req_id is None:
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
            raise _RpcError(METHOD_NOT_FOUND, f"unknown method `{method}`")
        fn = getattr(self.nav, method)
        if method not in ("index", "status") and not self._initial_done.wait(timeout=INITIAL_INDEX_WAIT_S):
            # answering from a half-built index would call real symbols unknown
            raise _RpcError(
                INTERNAL_ERROR, f"the first index of {self.root} is still being built; ask again in a moment"
            )
        if method != "index" and self.watching and not self.wait_fresh():
            log.warning("answering %s before a pending re-index finished", method)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        if isinstance(params, list):
            args = params
        elif isinstance(params, dict):
            kwargs = dict(params)
            extra = kwargs.pop("__args__", [])
            if not isinstance(extra, list):
                raise _RpcError(INVALID_PARAMS, "`__args__` must be a list")
            args = extra
        else:
            raise _RpcError(INVALID_PARAMS, "params must be an array or an object")
        try:
            inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise _RpcError(INVALID_PARAMS, f"bad parameters for `{method}`: {exc}") from None
        return encode(fn(*args, **kwargs))

    def info(self) -> dict[str, Any]:
        import resource

        return {
            "pid": os.getpid(),
            "root": str(self.root),
            "socket": str(self.paths.socket),
            "uptime_s": round(time.time() - self.started_at, 1),
            "requests": self.requests,
            "watching": self.watching,
            "idle_timeout_s": self.idle_timeout_s,
            "last_sync_s": self.last_sync_s,
            "syncs": self.syncs,
            "servers": dict(self.servers),
            "vectors": f"{self.vectors[0]}/{self.vectors[1]}" if self.vectors else None,
            "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }


class _RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _error(req_id: Any, code: int, message: str, data: dict[str, Any] | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": err}


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

    def __init__(
        self, address: str, handler: type[socketserver.BaseRequestHandler], *, daemon: Daemon
    ) -> None:
        self.nav_daemon = daemon
        super().__init__(address, handler)


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        daemon = self.server.nav_daemon
        while True:
            try:
                line = self.rfile.readline(64 * 1024 * 1024)
            except OSError:
                return
            if not line:
                return
            if not line.strip():
                continue
            reply = daemon.handle(line)
            if reply is None:
                continue
            try:
                self.wfile.write(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
                self.wfile.flush()
            except OSError:
                return


def early_pool(root: Path, index_db: Path) -> Any:
    """Start the servers of the languages an existing index holds before the rest of nav is
    imported (the critical path of a cold first query: ~0.5-1 s of imports). Returns the
    pool, or None when there is no index to read yet (the daemon warms after its first run)."""
    import sqlite3

    if not index_db.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"{index_db.as_uri()}?mode=ro", uri=True, timeout=1.0)) as db:
            rows = db.execute("SELECT language, COUNT(*) FROM files GROUP BY language").fetchall()
    except sqlite3.Error as exc:
        log.warning("cannot read languages to warm servers early: %s", exc)
        return None
    from lsp.pool import ServerPool
    from lsp.registry import server_key

    by_server: dict[str, str] = {}
    for language, _ in sorted(rows, key=lambda r: -int(r[1])):
        key = server_key(language) if language in WARMABLE else None
        if key is not None:
            by_server.setdefault(key, language)
    if not by_server:
        return None
    pool = ServerPool()
    for language in by_server.values():
        threading.Thread(
            target=pool.warm, args=(root, language), kwargs={"deadline_s": 300.0}, name=f"nav-early-{language}",
            daemon=True,
        ).start()  # fmt: skip
    return pool


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m navigator.daemon", description="Run nav's daemon for ROOT.")
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
    paths: DaemonPaths = daemon_paths(args.root.resolve())
    paths.nav_dir.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[logging.FileHandler(paths.log, encoding="utf-8")] if args.ready_fd is not None else None,
    )
    daemon = Daemon(
        args.root,
        idle_timeout_s=args.idle_timeout,
        watch=not args.no_watch,
        embed=not args.no_embed,
        warm_servers=not args.no_warm,
        pool=None if args.no_warm else early_pool(args.root.resolve(), paths.nav_dir / "index.db"),
    )
    signal.signal(signal.SIGTERM, lambda *_: daemon.stop())
    signal.signal(signal.SIGINT, lambda *_: daemon.stop())
    return daemon.serve(args.ready_fd)


if __name__ == "__main__":
    sys.exit(main())
