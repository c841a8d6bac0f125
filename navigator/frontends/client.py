"""The daemon's client: what the CLI uses by default. Light to import (no parser, model or server).

``DaemonClient(root)`` has the same verbs as :class:`navigator.api.Navigator` and
returns the same result types; it starts the daemon on first use. A daemon that
died (``kill -9``) leaves a socket nobody listens on: the client sees the refused
connection, starts a new daemon (which removes the stale socket) and retries the
request once. Two clients starting a daemon at once both end up talking to the
one that won the daemon's lock.

Every request names the client's root (``nav_root``: its path, device and inode). A daemon
whose root that is not (the folder was moved, so its socket now sits under another path, or
replaced) refuses it with :data:`OTHER_ROOT`; the client then asks that daemon to stop, waits
for it to go and starts the root's own: a client never gets answers about another path.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import math
import os
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from navigator import errors as nav_errors
from navigator.errors import NavError, ServerError, shorten
from navigator.frontends.wire import MAX_MESSAGE_BYTES, MAX_REPLY_BYTES, WireError, decode, dumps, loads
from navigator.paths import daemon_paths, ensure_nav_dir, ensure_socket_dir, flock_within, open_private
from navigator.results import (
    Found,
    GrepHit,
    Hit,
    HoverInfo,
    IndexReport,
    OutlineEntry,
    RepoMap,
    Response,
    SearchHit,
    Source,
    Status,
    Symbol,
)

if TYPE_CHECKING:
    from navigator.indexer import ProgressFn
    from navigator.public import Availability
    from navigator.verbs import Verbs

R = TypeVar("R")

START_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_S = 300.0
OTHER_ROOT = -32001  # navigator.frontends.daemon.OTHER_ROOT (this module stays light)


class _OtherRoot(Exception):
    """The daemon on our socket serves another root (see the module's docstring)."""


def root_claim(root: str | os.PathLike[str]) -> dict[str, Any]:
    """What a request says about the root it is for: path, device and inode (a daemon compares
    them with its own). :class:`~storage.errors.UsageError` when the root is gone."""
    try:
        st = os.stat(root)
    except OSError as exc:
        raise nav_errors.UsageError(
            f"root `{shorten(os.fspath(root))}` cannot be used: {exc.strerror} (deleted or moved?)"
        ) from None
    return {"path": os.fspath(root), "dev": st.st_dev, "ino": st.st_ino}


def start_daemon(
    root: Path,
    *,
    idle_timeout_s: float | None = None,
    timeout_s: float = START_TIMEOUT_S,
    expect: tuple[str, str] | None = None,
) -> str:
    """Start a daemon for ``root`` and wait until it says ``ready`` (or ``busy``: one already runs).
    ``expect``: the (method, target) about to be asked, which the daemon's servers may start on."""
    paths = daemon_paths(root)
    ensure_nav_dir(paths.nav_dir)
    r, w = os.pipe()
    os.set_inheritable(w, True)
    # -P: not the current folder first on the import path; a repository with its own `storage/` or
    # `navigator/` package must not stand in for nav's (nor run its code in the daemon)
    cmd = [sys.executable, "-P", "-m", "navigator.frontends.daemon", str(root), "--ready-fd", str(w)]
    if idle_timeout_s is not None:
        cmd += ["--idle-timeout", str(idle_timeout_s)]
    if expect is not None:
        cmd += ["--expect", *expect]
    # no empty entry: one (a trailing separator when PYTHONPATH was unset) means the current folder
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([_package_parent(), *inherited])}
    log_fd = open_private(paths.log, os.O_WRONLY | os.O_APPEND)
    try:
        # posix_spawn, not Popen: the daemon outlives this process by design, in its own session
        # (a ^C in the terminal does not reach it); a thread reaps it if we are still alive then.
        pid = os.posix_spawn(
            sys.executable,
            cmd,
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, log_fd, 1),
                (os.POSIX_SPAWN_DUP2, log_fd, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(log_fd)
        os.close(w)
    threading.Thread(target=_reap, args=(pid,), name="nav-daemon-reaper", daemon=True).start()
    try:
        ready, _, _ = select.select([r], [], [], timeout_s)
        word = os.read(r, 64).decode().strip() if ready else ""
    finally:
        os.close(r)
    if word in ("ready", "busy"):
        return word
    raise ServerError(
        f"nav's daemon for {root} did not start within {timeout_s:.0f} s; see {paths.log}, or use --no-daemon"
    )


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of a connected Unix socket (None where the
    platform cannot tell)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


def _check_peer(sock: socket.socket, where: Path) -> None:
    """Refuse a daemon run by another user: it would receive our queries and could forge answers."""
    uid = peer_uid(sock)
    if uid is not None and uid != os.getuid():
        raise nav_errors.UnsafeIndexDirError(
            f"the socket `{str(where)[:100]}` is served by another user (uid {uid}, you are {os.getuid()}); "
            "nav sends no query to it: remove it, or set XDG_RUNTIME_DIR to a folder only you can enter"
        )


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _package_parent() -> str:
    return str(Path(__file__).resolve().parent.parent)


def _raise_remote(error: Any) -> None:
    if not isinstance(error, dict):
        raise ServerError(f"daemon: a malformed error reply: {shorten(error)}")
    raw_data = error.get("data")
    data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
    message = shorten(str(error.get("message", "daemon error")), 2000)
    name = data.get("type")
    cls = getattr(nav_errors, name, None) if isinstance(name, str) else None
    if cls is nav_errors.SymbolNotFoundError:
        suggestions = data.get("suggestions")
        note = data.get("note")
        raise nav_errors.SymbolNotFoundError(
            str(data.get("name") or ""),
            [str(s) for s in suggestions[:20]] if isinstance(suggestions, list) else [],
            note=shorten(note, 500) if isinstance(note, str) and note else None,
        )
    if isinstance(cls, type) and issubclass(cls, NavError):
        raise cls(message)
    if error.get("code") == -32602:
        raise nav_errors.UsageError(message)
    raise ServerError(f"daemon: {message}")


def other_root(line: bytes) -> bool:
    """Whether a reply line is a daemon's "I serve another root" (:data:`OTHER_ROOT`)."""
    if b'"error"' not in line[:200]:
        return False
    try:
        reply = loads(line, max_bytes=MAX_REPLY_BYTES, max_depth=64)
    except WireError:
        return False
    error = reply.get("error") if isinstance(reply, dict) else None
    return isinstance(error, dict) and error.get("code") == OTHER_ROOT


def read_reply(method: str, line: bytes) -> Any:
    """Read one reply line, trusting nothing: a daemon (or whatever answers on the socket)
    that sends too much, bad JSON or the wrong shape gets a clear error, not a traceback."""
    if len(line) > MAX_REPLY_BYTES or not line.endswith(b"\n"):
        raise ServerError(f"nav's daemon sent a reply to `{method}` larger than {MAX_REPLY_BYTES:,} bytes")
    try:
        reply = loads(line, max_bytes=MAX_REPLY_BYTES, max_depth=64)
    except WireError as exc:
        raise ServerError(f"nav's daemon sent an unreadable reply to `{method}`: {exc.message}") from None
    if not isinstance(reply, dict) or ("error" not in reply and "result" not in reply):
        raise ServerError(f"nav's daemon sent an unexpected reply to `{method}`: {shorten(reply)}")
    if "error" in reply:
        _raise_remote(reply["error"])
    result = reply["result"]
    if not isinstance(result, dict):
        raise ServerError(f"nav's daemon sent an unexpected result for `{method}`: {shorten(result)}")
    try:
        return decode(result)
    except (TypeError, ValueError, KeyError, AttributeError, ImportError) as exc:
        raise ServerError(
            f"nav's daemon sent a result for `{method}` this nav cannot read ({type(exc).__name__}: "
            f"{shorten(str(exc))}); restart it with `nav daemon stop`"
        ) from None


def status_at(socket_path: str, *, timeout_s: float = 5.0) -> dict[str, Any] | None:
    """``daemon.status`` of the daemon listening at ``socket_path`` (one of the user's, from the
    registry), or None when it does not answer in time. Refuses another user's socket."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout_s)
        sock.connect(socket_path)
        _check_peer(sock, Path(socket_path))
        with sock.makefile("rwb") as fh:
            fh.write(dumps({"jsonrpc": "2.0", "id": 1, "method": "daemon.status", "params": {}}))
            fh.flush()
            line = fh.readline(MAX_REPLY_BYTES + 1)
        if not line:
            return None
        value = read_reply("daemon.status", line)
        return value if isinstance(value, dict) else None
    except (OSError, ServerError):
        return None
    finally:
        sock.close()


class DaemonClient:
    """Talks JSON-RPC 2.0 to the root's daemon over its Unix socket."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        autostart: bool = True,
        timeout_s: float = REQUEST_TIMEOUT_S,
        idle_timeout_s: float | None = None,
    ) -> None:
        try:
            self.root = Path(root).resolve()
            is_dir = self.root.is_dir()
        except OSError as exc:  # e.g. a name longer than the file system allows
            raise nav_errors.UsageError(
                f"root `{shorten(os.fspath(root))}` cannot be used: {exc.strerror}"
            ) from None
        if not is_dir:
            raise nav_errors.UsageError(
                f"root `{shorten(os.fspath(root))}` is not a directory; pass the repository's top folder"
            )
        self.paths = daemon_paths(self.root)
        self.autostart = autostart
        self.timeout_s = timeout_s
        self.idle_timeout_s = idle_timeout_s
        self._sock: socket.socket | None = None
        self._file: Any = None
        self._ids = itertools.count(1)

    def close(self) -> None:
        if self._file is not None:
            # flushing to a dead daemon fails; the socket is closed below either way
            with contextlib.suppress(OSError, ValueError):
                self._file.close()
            self._file = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _try_connect(self) -> bool:
        ensure_socket_dir(self.paths)  # deep roots: the socket's folder must be ours alone
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(self.paths.socket))
        except OSError:  # no socket yet, or a stale one nobody listens on
            sock.close()
            return False
        try:
            _check_peer(sock, self.paths.socket)
        except NavError:
            sock.close()
            raise
        sock.settimeout(self.timeout_s)
        self._sock = sock
        self._file = sock.makefile("rwb")
        return True

    def connect(self, *, expect: tuple[str, str] | None = None) -> None:
        """Connect, starting a daemon when none runs (``expect``: the question about to be
        asked, a hint for the daemon's start: :func:`start_daemon`)."""
        if self._sock is not None:
            return
        if self._try_connect():
            return
        if not self.autostart:
            raise ServerError(f"no nav daemon is running for {self.root}; start one with `nav daemon start`")
        word = start_daemon(self.root, idle_timeout_s=self.idle_timeout_s, expect=expect)
        if word == "ready" and self._try_connect():
            return
        # "busy": another daemon holds the lock and is about to listen (or just did). The socket
        # appearing is the only signal it gives, so poll for it, briefly and bounded.
        deadline = time.monotonic() + START_TIMEOUT_S
        delay = 0.01
        while time.monotonic() < deadline:
            if self._try_connect():
                return
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
        raise ServerError(
            f"cannot reach nav's daemon for {self.root} at {self.paths.socket}; see {self.paths.log}"
        )

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        params: dict[str, Any] = dict(kwargs)
        if args:
            params["__args__"] = list(args)
        target = args[0] if args else kwargs.get("target")
        expect = (method, target) if isinstance(target, str) and not target.startswith("-") else None
        for attempt in (1, 2):
            self.connect(expect=expect)
            try:
                return self._roundtrip(method, params)
            except _OtherRoot:
                self._retire()  # a daemon of another path: it must not answer, nor hold our lock
                if attempt == 2:
                    raise ServerError(
                        f"the daemon on {self.paths.socket} serves another root, twice; "
                        f"stop it with `nav daemon stop` in {self.root}"
                    ) from None
            except (BrokenPipeError, ConnectionResetError, EOFError):
                self.close()  # the daemon died mid-request: start a new one and retry once
                if attempt == 2:
                    raise ServerError(
                        f"nav's daemon for {self.root} died twice answering `{method}`"
                    ) from None
                self._wait_for_exit()
        raise AssertionError("unreachable")

    def _wait_for_exit(self, timeout_s: float = 10.0) -> None:
        """After a dead connection, wait until the old daemon has really gone (its lock is free).

        A process being killed can still accept connections into its listen backlog for a
        moment; connecting then would only meet the same corpse.
        """
        fd = open_private(self.paths.lock)
        try:
            if flock_within(fd, timeout_s):
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _retire(self) -> None:
        """Ask the daemon on our socket (one of another root) to stop; take its socket off our
        path (it is not this root's: the next connection must not reach it while it goes), and
        wait for our lock (which it holds when our folder is its moved root)."""
        theirs = _file_id(self.paths.socket)
        if self._sock is not None or self._try_connect():
            with contextlib.suppress(OSError, EOFError, NavError):
                self._roundtrip("daemon.stop", {}, claim=False)
        self.close()
        if theirs is not None and _file_id(self.paths.socket) == theirs:
            with contextlib.suppress(OSError):
                os.unlink(self.paths.socket)
        self._wait_for_exit()

    def _roundtrip(self, method: str, params: dict[str, Any], *, claim: bool = True) -> Any:
        assert self._file is not None
        req_id = next(self._ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method, "params": params}
        if claim:
            msg["nav_root"] = root_claim(self.root)
        for key, value in params.items():
            if isinstance(value, float) and not math.isfinite(value):  # JSON cannot carry it
                raise nav_errors.UsageError(f"`{key}` must be a finite number, got {value}")
        try:
            data = dumps(msg)
        except (TypeError, ValueError) as exc:  # e.g. NaN, or an object JSON cannot carry
            raise nav_errors.UsageError(f"cannot send `{method}`: {shorten(str(exc))}") from None
        if len(data) > MAX_MESSAGE_BYTES:
            raise nav_errors.UsageError(
                f"the request for `{method}` is too large ({len(data):,} bytes; the daemon takes at most "
                f"{MAX_MESSAGE_BYTES:,}); shorten the text, or use --no-daemon"
            )
        self._file.write(data)
        self._file.flush()
        line = self._read_line(method, time.monotonic() + self.timeout_s)
        if not line:
            raise EOFError
        return self._reply(method, line)

    def _read_line(self, method: str, deadline: float) -> bytes:
        """The reply line, read within ``deadline`` in all (not per read: a daemon that sends a
        byte now and then cannot hold the client past it); at most MAX_REPLY_BYTES + 1 bytes."""
        assert self._sock is not None
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_REPLY_BYTES:
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise TimeoutError
                self._sock.settimeout(remaining)
                chunk = self._file.read1(min(1 << 20, MAX_REPLY_BYTES + 1 - size))
            except TimeoutError:
                self.close()
                raise nav_errors.DeadlineError(
                    f"nav's daemon did not answer `{method}` within {self.timeout_s:.0f} s"
                ) from None
            if not chunk:
                break
            end = chunk.find(b"\n")
            if end >= 0:
                chunks.append(chunk[: end + 1])
                if end + 1 < len(chunk):
                    self.close()  # one request at a time: bytes after the reply mean a lost sync
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)

    def _reply(self, method: str, line: bytes) -> Any:
        if len(line) > MAX_REPLY_BYTES or not line.endswith(b"\n"):
            self.close()  # the rest of that line is still in the socket: this connection is done
        if other_root(line):
            raise _OtherRoot
        return read_reply(method, line)

    # -- the Navigator's verbs (navigator.verbs.Verbs) ----------------------------------------
    # Each sends its arguments as they are; the daemon checks them against the Navigator's
    # own signature (wire.check_params) and answers with the same result types.

    def index(
        self,
        *,
        progress: ProgressFn | None = None,
        workers: int | None = None,
        only: Sequence[str] | None = None,
    ) -> IndexReport:
        if progress is not None:
            raise nav_errors.UsageError(
                "a progress callback cannot cross the daemon's socket; index in-process (`nav index`)"
            )
        return self._verb("index", IndexReport, workers=workers, only=only)

    def status(self) -> Status:
        return self._verb("status", Status)

    def definitions(
        self, name: str, *, all_repos: bool = False, store: str | None = None
    ) -> Response[Symbol]:
        return self._verb("definitions", Response, name, all_repos=all_repos, store=store)

    def symbols(
        self, pattern: str, *, limit: int = 50, kinds: tuple[str, ...] | None = None
    ) -> Response[Symbol]:
        return self._verb("symbols", Response, pattern, limit=limit, kinds=kinds)

    def outline(self, path: str | os.PathLike[str]) -> Response[OutlineEntry]:
        return self._verb("outline", Response, os.fspath(path) if isinstance(path, os.PathLike) else path)

    def show(self, target: str, *, max_lines: int = 200, limit: int = 5) -> Response[Source]:
        return self._verb("show", Response, target, max_lines=max_lines, limit=limit)

    def repo_map(self, *, tokens: int = 1024) -> RepoMap:
        return self._verb("repo_map", RepoMap, tokens=tokens)

    def search(
        self,
        text: str,
        *,
        k: int = 10,
        paths: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        view: str = "files",
        all_repos: bool = False,
        store: str | None = None,
    ) -> Response[SearchHit]:
        return self._verb(
            "search", Response, text, k=k, paths=paths, languages=languages,
            view=view, all_repos=all_repos, store=store,
        )  # fmt: skip

    def query(self, text: str, *, limit: int = 20, deadline_s: float = 10.0) -> Response[Found]:
        return self._verb("query", Response, text, limit=limit, deadline_s=deadline_s)

    def grep(
        self,
        pattern: str,
        *,
        fixed: bool = False,
        ignore_case: bool = False,
        word: bool = False,
        files_only: bool = False,
        count: bool = False,
        globs: tuple[str, ...] = (),
        types: tuple[str, ...] = (),
        paths: tuple[str, ...] = (),
        before: int = 0,
        after: int = 0,
        max_count: int | None = None,
        limit: int | None = 1000,
        deadline_s: float = 30.0,
        symbols: bool = False,
    ) -> Response[GrepHit]:
        return self._verb(
            "grep", Response, pattern, fixed=fixed, ignore_case=ignore_case, word=word,
            files_only=files_only, count=count, globs=globs, types=types, paths=paths, before=before,
            after=after, max_count=max_count, limit=limit, deadline_s=deadline_s, symbols=symbols,
        )  # fmt: skip

    def definition(self, target: str, *, deadline_s: float = 30.0) -> Response[Hit]:
        return self._verb("definition", Response, target, deadline_s=deadline_s)

    def references(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        return self._verb("references", Response, target, deadline_s=deadline_s, limit=limit)

    def callers(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        return self._verb("callers", Response, target, deadline_s=deadline_s, limit=limit)

    def callees(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        return self._verb("callees", Response, target, deadline_s=deadline_s, limit=limit)

    def implementations(
        self, target: str, *, deadline_s: float = 30.0, limit: int | None = None
    ) -> Response[Hit]:
        return self._verb("implementations", Response, target, deadline_s=deadline_s, limit=limit)

    def hover(self, target: str, *, deadline_s: float = 30.0) -> Response[HoverInfo]:
        return self._verb("hover", Response, target, deadline_s=deadline_s)

    def doctor(self) -> Response[Availability]:
        return self._verb("doctor", Response)

    def _verb(self, method: str, expected: type[R], *args: object, **kwargs: object) -> R:
        """``method``'s answer, checked to be of the type its verb returns: a daemon that sends
        another (a newer nav's, or not nav at all) gets a clear error, not an AttributeError later."""
        result = self.call(method, *args, **kwargs)
        if not isinstance(result, expected):
            raise ServerError(
                f"nav's daemon answered `{method}` with {type(result).__name__}, not {expected.__name__}; "
                "restart it with `nav daemon stop`"
            )
        return result

    # -- the daemon itself -----------------------------------------------------------------

    def daemon_status(self) -> dict[str, Any]:
        status = self.call("daemon.status")
        if not isinstance(status, dict):
            raise ServerError(f"nav's daemon sent an unexpected status: {shorten(status)}")
        return status

    def stop(self) -> bool:
        """Ask the daemon to exit; False when none was running. Never starts one."""
        if self._sock is None and not self._try_connect():
            return False
        try:
            self._roundtrip("daemon.stop", {}, claim=False)  # whatever root it serves: it is on our socket
        except (BrokenPipeError, ConnectionResetError, EOFError):
            pass  # it is gone already
        finally:
            self.close()
        self._wait_for_exit()  # "stopped" means gone, not "asked to go"
        return True


if TYPE_CHECKING:
    _IMPLEMENTS: type[Verbs] = DaemonClient  # mypy holds the client to every verb's signature
