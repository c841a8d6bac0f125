"""The pool: one warm language server per (root, server), behind a synchronous facade.

- started lazily on the first query for its language;
- answers only once the server has signalled it is ready; before that a query that runs
  out of time says ``server still indexing``;
- a server that exits is restarted by the next query (immediately the first time, then
  with a growing delay while it keeps crashing);
- stopped after ``idle_timeout_s`` without queries (default :data:`DEFAULT_IDLE_TIMEOUT_S`), or
  released on request (:meth:`ServerPool.release`: the daemon's per-user budget); the next
  query starts it again and waits for it within its deadline;
- :meth:`ServerPool.states` says, per server, what is running now (running, starting, stopped
  idle, released, not available, crashed);
- every query carries a deadline; one language's failure never touches another's session;
- :meth:`ServerPool.close` (also run at exit) stops every server and kills its process group.

An asyncio loop runs in a daemon thread; the public methods are plain and synchronous.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import CancelledError as FutureCancelled
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsp.answers import LanguageServers, Location, LspAnswer, Operation, Position, RawAnswer
from lsp.launch import SERVER_IDLE_S, Prelaunched
from lsp.registry import UNAVAILABLE, available_definition, install_command, server_key
from lsp.requests import ask_one
from lsp.session import RequestFailed, ServerExited, ServerSession, _process_tree

__all__ = ["LanguageServers", "Location", "LspAnswer", "Operation", "Position", "RawAnswer", "ServerPool"]

log = logging.getLogger("nav.lsp")


_CAPABILITIES: dict[str, str] = {
    "definition": "definitionProvider",
    "references": "referencesProvider",
    "implementation": "implementationProvider",
    "hover": "hoverProvider",
    "callers": "callHierarchyProvider",
    "callees": "callHierarchyProvider",
}


DEFAULT_IDLE_TIMEOUT_S = SERVER_IDLE_S
"""A server with no query for this long is stopped (:data:`lsp.launch.SERVER_IDLE_S`)."""

STOPPED_IDLE = "stopped idle"
RELEASED = "released"


class _NoServer(Exception):
    pass


class _Backoff(Exception):
    pass


class _Broken(Exception):
    """The server is up but no longer answers (internal errors on a retried request, or a
    stopped process): it is replaced."""


@dataclass
class _Crashes:
    count: int = 0
    last: float = 0.0


class ServerPool:
    """Warm language servers for any number of roots. Thread-safe, synchronous API."""

    def __init__(
        self,
        *,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        start_timeout_s: float = 120.0,
        hung_after: int = 3,
        hung_silent_s: float = 60.0,
    ) -> None:
        self.idle_timeout_s = idle_timeout_s
        self.start_timeout_s = start_timeout_s
        self.hung_after = hung_after
        """A server whose last ``hung_after`` requests went unanswered, and that has said nothing
        for ``hung_silent_s``, is killed and started afresh by the next query."""
        self.hung_silent_s = hung_silent_s
        self._sessions: dict[tuple[Path, str], ServerSession] = {}
        self._starting: dict[tuple[Path, str], asyncio.Task[ServerSession]] = {}
        self._crashes: dict[tuple[Path, str], _Crashes] = {}
        self._in_use: dict[tuple[Path, str], int] = {}
        """Queries being served per server: the reaper never stops one mid-answer."""
        self._stopped: dict[tuple[Path, str], tuple[str, float]] = {}
        """Servers that are not running and why (:data:`STOPPED_IDLE`, :data:`RELEASED`, "not
        available: ..."), with when; a start clears the entry."""
        self._background: set[asyncio.Future[None]] = set()
        self._overlays: dict[Path, dict[str, str]] = {}
        """Per root: editor buffers (absolute path -> text) the servers see instead of the disk."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._prelaunched: dict[tuple[Path, str], Prelaunched] = {}
        """Servers launched before this pool existed (:mod:`lsp.launch`), until a start adopts them."""

    # -- the loop thread ---------------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError("the server pool is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name="nav-lsp-pool", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
                atexit.register(self.close)
                loop.call_soon_threadsafe(self._schedule_reaper)
            return self._loop

    def _call(self, coro: Any, timeout_s: float) -> Any:
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        try:
            return future.result(timeout=timeout_s)
        except FutureTimeout:
            future.cancel()
            raise

    def _schedule_reaper(self) -> None:
        assert self._loop is not None
        interval = max(1.0, min(30.0, self.idle_timeout_s / 4))
        self._loop.call_later(interval, self._reap)

    def _reap(self) -> None:
        now = time.monotonic()
        for key, session in list(self._sessions.items()):
            # idle since its last request, or since it finished loading (a warmed server is not
            # stopped the moment it is ready because its start took longer than the timeout)
            since = max(session.last_used, session.ready_at or 0.0)
            if now - since > self.idle_timeout_s and not self._in_use.get(key):
                log.info("stopping idle %s for %s", session.definition.name, key[0])
                del self._sessions[key]
                self._stopped[key] = (STOPPED_IDLE, now)
                asyncio.ensure_future(session.stop())
        if not self._closed:
            self._schedule_reaper()

    # -- public, synchronous -----------------------------------------------------------------

    def query(
        self,
        root: Path,
        language: str,
        op: Operation,
        positions: Sequence[Position],
        *,
        deadline_s: float,
        rescan: bool = True,
    ) -> LspAnswer:
        """Ask the server for ``language`` under ``root`` about each position; merged.

        With ``rescan`` (the default) files changed on disk are found by walking the root
        before asking (~0.1–0.3 s on Django's 2,800 files); without it the caller promises
        to report changes through :meth:`files_changed` (a file watcher), and only those
        are told to the server."""
        deadline = time.monotonic() + deadline_s
        try:
            answer: LspAnswer = self._call(
                self._query(root.resolve(), language, op, positions, deadline, rescan), deadline_s + 15.0
            )
            return answer
        except FutureTimeout:
            return LspAnswer(complete=False, reason="deadline reached", answered=False)

    def files_changed(self, root: Path, paths: Iterable[str | Path] | None = None) -> None:
        """Files under ``root`` changed (``paths``, absolute or relative to ``root``; None:
        any file may have). Returns at once: ready servers are told in the background now,
        so they re-analyse before the next query; servers still loading when they are ready."""
        loop = self._loop
        if loop is None or self._closed:
            return  # no server started yet: each reads the disk as it starts
        root = root.resolve()
        absolute = None if paths is None else [str(p if Path(p).is_absolute() else root / p) for p in paths]

        def mark() -> None:
            for (session_root, _), session in self._sessions.items():
                if session_root != root:
                    continue
                session.note_changed(absolute)
                if session.ready.is_set() and session.alive:
                    task = asyncio.ensure_future(self._flush(session))
                    self._background.add(task)
                    task.add_done_callback(self._background.discard)

        loop.call_soon_threadsafe(mark)

    def set_buffer(self, root: Path, path: str | Path, text: str | None) -> None:
        """An editor holds ``path`` (absolute, under ``root``) open with ``text``; None: closed,
        back to the disk. Returns at once: ready servers of the file's language are sent the
        text now (didOpen, then didChange with a new version), others when they are ready.
        Only this pool's servers see it: another process's servers (the daemon's) keep the
        disk's view."""
        root = root.resolve()
        key = str(path)

        def mark() -> None:
            overlay = self._overlays.setdefault(root, {})
            if text is None:
                overlay.pop(key, None)
            else:
                overlay[key] = text
            for (session_root, _), session in self._sessions.items():
                if session_root == root and session.ready.is_set() and session.alive:
                    session.sync_overlay()

        self._ensure_loop().call_soon_threadsafe(mark)

    def request(
        self,
        root: Path,
        language: str,
        method: str,
        params: Any,
        *,
        path: str,
        capability: str,
        deadline_s: float,
        rescan: bool = True,
    ) -> RawAnswer:
        """Send ``method`` with ``params`` as they are to the server for ``language`` (after
        it is ready, ``path`` open, changed files and editor buffers told), and return its
        own result: for requests nav has no verb of its own for (declaration, type
        hierarchy, call-hierarchy items an editor passes back...)."""
        deadline = time.monotonic() + deadline_s

        async def go() -> RawAnswer:
            name: str | None = None
            try:
                session = await self._session(root.resolve(), language, deadline)
                name = session.definition.name
                with self._using((root.resolve(), session.definition.key), session):
                    if not session.ready.is_set():
                        if session.definition.open_before_ready:
                            session.sync_overlay()
                            session.ensure_open(path)
                        await asyncio.wait_for(
                            _ready_or_exit(session), max(0.001, deadline - time.monotonic())
                        )
                        if session.exited.is_set():
                            raise ServerExited(f"{name} exited while loading (code {session.returncode})")
                    if not session.supports(capability):
                        return RawAnswer(complete=False, reason=f"{name} does not support {method}", server=name,
                                         answered=False)  # fmt: skip
                    await (session.sync_files() if rescan else session.sync_pending())
                    session.sync_overlay()
                    session.ensure_open(path)
                    if not session.quiet.is_set():  # still loading the project: its answer would be partial
                        await asyncio.wait_for(session.quiet.wait(), max(0.001, deadline - time.monotonic()))
                    left = max(0.001, deadline - time.monotonic())
                    return RawAnswer(await session.request(method, params, timeout_s=left), server=name)
            except (_NoServer, _Backoff) as exc:
                return RawAnswer(complete=False, reason=str(exc), server=name, answered=False)
            except TimeoutError:
                why = "deadline reached while the server was starting" if name is None else "deadline reached"
                return RawAnswer(complete=False, reason=why, server=name, answered=False)
            except (ServerExited, RequestFailed, OSError) as exc:
                return RawAnswer(complete=False, reason=str(exc), server=name, answered=False)

        try:
            answer: RawAnswer = self._call(go(), deadline_s + 15.0)
            return answer
        except FutureTimeout:
            return RawAnswer(complete=False, reason="deadline reached", answered=False)

    async def _flush(self, session: ServerSession) -> None:
        try:
            told = await session.sync_pending()
            if told:
                log.debug("told %s about %d changed files", session.definition.name, told)
        except (ServerExited, ConnectionError, RuntimeError) as exc:
            log.warning(
                "could not tell %s about changed files (%s); the next query retries",
                session.definition.name,
                exc,
            )
            session.note_changed(None)

    def warm(self, root: Path, language: str, *, deadline_s: float) -> bool:
        """Start the server for ``language`` and wait until it is ready; True if it is (False
        too when the pool is closed meanwhile: a warm-up is never an error)."""
        deadline = time.monotonic() + deadline_s

        async def go() -> bool:
            try:
                session = await self._session(root.resolve(), language, deadline)
                if not session.ready.is_set() and session.definition.open_before_ready:
                    first = session.definition.warm_file(session.root)
                    if first is not None:  # its loading starts now, not at the first question
                        session.ensure_open(first)
                await asyncio.wait_for(_ready_or_exit(session), max(0.001, deadline - time.monotonic()))
                return session.ready.is_set() and not session.exited.is_set()
            except (TimeoutError, _NoServer, _Backoff, ServerExited, OSError):
                return False

        try:
            return bool(self._call(go(), deadline_s + 15.0))
        except (FutureTimeout, FutureCancelled):  # FutureCancelled: close() cancelled it
            return False

    def open_early(self, root: Path, language: str, path: str) -> None:
        """A hint, returning at once: a server that loads the project of the file it is given
        (:attr:`~lsp.servers.base.ServerDefinition.open_before_ready`) and is still loading (or
        starting) is given ``path`` (absolute) now, not once its question gets there. Changes
        no answer; does nothing for other servers, or when no server is starting."""
        key = server_key(language)
        loop = self._loop
        if key is None or loop is None or self._closed:
            return
        where = (root.resolve(), key)

        async def go() -> None:
            session = self._sessions.get(where)
            task = self._starting.get(where)
            if session is None and task is not None:
                try:
                    session = await asyncio.shield(task)
                except (Exception, asyncio.CancelledError):  # its question reports the failure
                    return
            if (
                session is not None
                and session.definition.open_before_ready
                and not session.ready.is_set()
                and not session.exited.is_set()
            ):
                session.ensure_open(path)

        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            asyncio.run_coroutine_threadsafe(go(), loop)

    def session_info(self, root: Path, language: str) -> dict[str, Any] | None:
        key = server_key(language)
        session = self._sessions.get((root.resolve(), key)) if key else None
        if session is None:
            return None
        return {
            "server": session.definition.name,
            "pid": session.pid,
            "alive": session.alive,
            "ready": session.ready.is_set(),
            "ready_after_s": None if session.ready_at is None else session.ready_at - session.started_at,
            "answers_remembered": session.memo.served,
            "launched_early": session.prelaunched is not None,
        }

    def states(self, root: Path) -> dict[str, str]:
        """Per server key (``python``, ``typescript``, ``cpp``...) under ``root``: what it is doing
        now — ``running``, ``starting``, ``stopped idle``, ``released``, ``crashed`` (restarted by
        the next query) or ``not available: <why>``. Servers never asked for are absent."""
        root = root.resolve()
        loop = self._loop
        if loop is None or self._closed:
            return {}

        async def read() -> dict[str, str]:
            out: dict[str, str] = {}
            for (r, key), (why, _) in self._stopped.items():
                if r == root:
                    out[key] = why
            for r, key in self._starting:
                if r == root:
                    out[key] = "starting"
            for (r, key), session in self._sessions.items():
                if r != root:
                    continue
                if session.exited.is_set():
                    out[key] = "crashed"
                else:
                    out[key] = "running" if session.ready.is_set() else "starting"
            return out

        try:
            states: dict[str, str] = self._call(read(), 5.0)
        except (FutureTimeout, RuntimeError):
            return {}
        return states

    def rss_mb(self, root: Path) -> float:
        """Resident memory of ``root``'s servers and their children now, from /proc (0 elsewhere)."""
        root = root.resolve()
        pids = [s.pid for (r, _), s in list(self._sessions.items()) if r == root and s.pid is not None]
        total = 0
        page = os.sysconf("SC_PAGE_SIZE")
        for pid in pids:
            for p in _process_tree(pid):
                with (
                    contextlib.suppress(OSError, ValueError, IndexError),
                    open(f"/proc/{p}/statm", encoding="ascii") as fh,
                ):
                    total += int(fh.read().split()[1]) * page
        return round(total / 2**20, 1)

    def release(self, root: Path) -> int:
        """Stop every server of ``root`` now (and any still starting), to give their memory back;
        the next query for a language starts its server again. Returns how many were running."""
        root = root.resolve()
        if self._loop is None or self._closed:
            return 0

        async def go() -> int:
            now = time.monotonic()
            starting = [(k, t) for k, t in self._starting.items() if k[0] == root]
            for key, task in starting:
                task.cancel()
                self._stopped[key] = (RELEASED, now)
            await asyncio.gather(*(t for _, t in starting), return_exceptions=True)
            sessions = [(k, s) for k, s in self._sessions.items() if k[0] == root]
            for key, _ in sessions:
                del self._sessions[key]
                self._stopped[key] = (RELEASED, now)
            await asyncio.gather(*(s.stop() for _, s in sessions), return_exceptions=True)
            return len(sessions)

        try:
            n: int = self._call(go(), 30.0)
        except (FutureTimeout, RuntimeError):
            return 0
        return n

    def stop(self, root: Path, language: str) -> None:
        key = server_key(language)
        session = self._sessions.pop((root.resolve(), key), None) if key else None
        if session is not None and self._loop is not None:
            self._call(session.stop(), 20.0)

    def adopt(self, launched: Prelaunched) -> None:
        """Take a server launched by :func:`lsp.launch.prelaunch`: the first query or warm-up
        for its root and language uses that process instead of starting another (a pool that
        never needs it kills it when closed)."""
        key = (launched.root.resolve(), launched.definition.key)
        with self._lock:
            if self._closed:
                launched.kill()
                return
            replaced = self._prelaunched.pop(key, None)
            self._prelaunched[key] = launched
        if replaced is not None:
            replaced.kill()

    def close(self) -> None:
        """Stop every server (politely, briefly), then kill what is left. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            unadopted = list(self._prelaunched.values())
            self._prelaunched.clear()
        for launched in unadopted:
            launched.kill()
        atexit.unregister(self.close)
        loop = self._loop
        sessions = list(self._sessions.values())
        self._sessions.clear()
        if loop is not None and loop.is_running():

            async def stop_all() -> None:
                starting = list(self._starting.values())
                for task in starting:
                    task.cancel()
                await asyncio.gather(*starting, return_exceptions=True)
                await asyncio.gather(*(s.stop() for s in sessions), return_exceptions=True)

            with contextlib.suppress(FutureTimeout, RuntimeError):
                asyncio.run_coroutine_threadsafe(stop_all(), loop).result(timeout=15.0)
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=5.0)
            if not loop.is_running():
                loop.close()
        for session in sessions:
            session.kill()

    def __enter__(self) -> ServerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- async core ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _using(self, key: tuple[Path, str], session: ServerSession) -> Iterator[None]:
        """A query in progress on ``session`` (on the loop): not idle, whatever its requests' ages."""
        self._in_use[key] = self._in_use.get(key, 0) + 1
        try:
            yield
        finally:
            self._in_use[key] -= 1
            if not self._in_use[key]:
                del self._in_use[key]
            session.last_used = time.monotonic()

    async def _session(self, root: Path, language: str, deadline: float) -> ServerSession:
        key_name = server_key(language)
        if key_name is None:
            raise _NoServer(UNAVAILABLE.get(language, f"no language server configured for {language}"))
        key = (root, key_name)
        session = self._sessions.get(key)
        if session is not None and not session.exited.is_set() and session.stopped:
            # SIGSTOP'd: it would time out every request until continued. Replace it.
            log.warning("%s (pid %s) is stopped; restarting it", session.definition.name, session.pid)
            await _kill_and_wait(session)
        elif (
            session is not None
            and not session.exited.is_set()
            and session.hung(after=self.hung_after, silent_s=self.hung_silent_s)
        ):
            log.warning(
                "%s (pid %s) answered none of its last %d requests and has said nothing for %.0f s; "
                "restarting it", session.definition.name, session.pid, session.unanswered,
                time.monotonic() - session.last_heard,
            )  # fmt: skip
            await _kill_and_wait(session)
        if session is not None and session.exited.is_set():
            del self._sessions[key]
            record = self._crashes.setdefault(key, _Crashes())
            lived = time.monotonic() - session.started_at
            record.count = 1 if lived > 120.0 else record.count + 1
            record.last = time.monotonic()
            await session.stop()  # already dead: this only releases its pipes
            session = None
        if session is not None:
            return session
        crashes = self._crashes.get(key)
        if crashes is not None and crashes.count > 1:
            wait = min(60.0, 2.0 ** (crashes.count - 1))
            left = crashes.last + wait - time.monotonic()
            if left > 0:
                raise _Backoff(f"server crashed {crashes.count} times in a row; next restart in {left:.0f}s")
        task = self._starting.get(key)
        if task is None:
            task = asyncio.ensure_future(self._start(key, language, root))
            self._starting[key] = task
        remaining = max(0.001, deadline - time.monotonic())
        return await asyncio.wait_for(asyncio.shield(task), remaining)

    async def _start(self, key: tuple[Path, str], language: str, root: Path) -> ServerSession:
        try:
            with self._lock:
                pre = self._prelaunched.pop(key, None)
            if pre is not None and pre.popen.poll() is None:
                session = ServerSession(pre.definition, pre.binary, root, prelaunched=pre)
                return await self._begin(key, session)
            if pre is not None:  # it died before anyone asked: start one as usual (and say why, if it fails)
                log.warning(
                    "%s launched early for %s exited with %s", pre.definition.name, root, pre.popen.returncode
                )
                pre.kill()
            found = available_definition(language)
            if found is None:
                missing = f"no server for {language} installed (install: {install_command(language)})"
                self._stopped[key] = (f"not available: {missing}", time.monotonic())
                raise _NoServer(missing)
            definition, binary = found
            unusable = definition.unusable(root, binary)
            if unusable is not None:
                self._stopped[key] = (f"not available: {unusable}", time.monotonic())
                raise _NoServer(unusable)
            return await self._begin(key, ServerSession(definition, binary, root))
        finally:
            self._starting.pop(key, None)

    async def _begin(self, key: tuple[Path, str], session: ServerSession) -> ServerSession:
        session.overlay = self._overlays.setdefault(key[0], {})
        try:
            await asyncio.wait_for(session.start(), self.start_timeout_s)
        except BaseException:
            session.kill()
            await asyncio.shield(session.stop())
            raise
        self._sessions[key] = session
        self._stopped.pop(key, None)
        return session

    async def _query(
        self,
        root: Path,
        language: str,
        op: Operation,
        positions: Sequence[Position],
        deadline: float,
        rescan: bool = True,
    ) -> LspAnswer:
        name: str | None = None
        # a server stopped idle (or released) is started again here, and waited for within the
        # deadline; the answer says so, and says why when the deadline came first
        stopped = self._stopped.get((root, server_key(language) or ""))
        for attempt in (1, 2):
            started = False
            try:
                session = await self._session(root, language, deadline)
                started = True
                name = session.definition.name
                with self._using((root, session.definition.key), session):
                    answer = await self._ask(session, op, positions, deadline, rescan)
                if answer.answered:
                    self._crashes.pop((root, session.definition.key), None)  # it works: no crash loop
                if session.notes:  # what the server's setup could not do (no tsconfig, old toolchain...)
                    answer = dataclasses.replace(answer, notes=(*answer.notes, *session.notes))
                if stopped is not None and stopped[0] in (STOPPED_IDLE, RELEASED):
                    answer = _after_restart(answer, name, stopped[0])
                return answer
            except _NoServer as exc:
                return LspAnswer(complete=False, reason=str(exc), answered=False)
            except _Backoff as exc:
                return LspAnswer(complete=False, reason=str(exc), server=name, answered=False)
            except TimeoutError:
                if started:
                    reason = "deadline reached"
                elif attempt == 2:
                    reason = "deadline reached while the server was restarting"
                elif stopped is not None and stopped[0] in (STOPPED_IDLE, RELEASED):
                    why = "after stopping idle" if stopped[0] == STOPPED_IDLE else "after it was released"
                    reason = f"deadline reached while the server was starting again ({why})"
                else:
                    reason = "deadline reached while the server was starting"
                return LspAnswer(
                    complete=False,
                    reason=reason,
                    server=name,
                    answered=False,
                )
            except ServerExited as exc:
                log.warning("%s; %s", exc, "restarting" if attempt == 1 else "giving up")
                if attempt == 2 or time.monotonic() >= deadline:
                    return LspAnswer(
                        complete=False, reason=f"server crashed: {exc}", server=name, answered=False
                    )
            except _Broken as exc:
                log.warning("%s; %s", exc, "restarting it" if attempt == 1 else "giving up")
                broken = self._sessions.get((root, server_key(language) or ""))
                if broken is not None:
                    await _kill_and_wait(broken)  # the next _session() restarts it
                if attempt == 2 or time.monotonic() >= deadline:
                    reason = (
                        f"{exc}; it is restarted on the next query"
                        if attempt == 1
                        else f"{exc} (also after a restart)"
                    )
                    return LspAnswer(complete=False, reason=reason, server=name, answered=False)
            except OSError as exc:
                return LspAnswer(complete=False, reason=f"server failed to start: {exc}", answered=False)
        raise AssertionError("unreachable")

    async def _ask(
        self,
        session: ServerSession,
        op: Operation,
        positions: Sequence[Position],
        deadline: float,
        rescan: bool = True,
    ) -> LspAnswer:
        server = session.definition.name
        waited: str | None = None
        if not session.ready.is_set():
            if session.definition.open_before_ready and positions:
                session.ensure_open(positions[0].path)
            began = time.monotonic()
            try:
                await asyncio.wait_for(_ready_or_exit(session), max(0.001, deadline - time.monotonic()))
            except TimeoutError:
                return LspAnswer(complete=False, reason=f"server still indexing ({session.loading_status()})",
                                 server=server, answered=False)  # fmt: skip
            if session.exited.is_set():
                raise ServerExited(f"{server} exited while loading (code {session.returncode})")
            waited = f"waited {time.monotonic() - began:.1f}s for {server} to load the workspace"
        capability = _CAPABILITIES[op]
        if not session.supports(capability):
            return LspAnswer(
                complete=False, reason=f"{server} does not support {op}", server=server, answered=False
            )
        if rescan:
            await session.sync_files()
        else:
            await session.sync_pending()
        session.sync_overlay()
        if not session.quiet.is_set():
            try:
                await asyncio.wait_for(session.quiet.wait(), max(0.001, deadline - time.monotonic()))
            except TimeoutError:
                return LspAnswer(complete=False, reason=f"server still indexing ({session.loading_status()})",
                                 server=server, answered=False)  # fmt: skip
        answer = await self._answer(session, op, positions, deadline)
        return dataclasses.replace(answer, notes=(*answer.notes, waited)) if waited else answer

    async def _answer(
        self, session: ServerSession, op: Operation, positions: Sequence[Position], deadline: float
    ) -> LspAnswer:
        server = session.definition.name
        locations: list[Location] = []
        texts: list[str] = []
        for done, pos in enumerate(positions):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _partial(locations, texts, server, done)
            if session.definition.open_to_ask:
                session.ensure_open(pos.path)
            memo_key = (op, pos)
            remembered = session.memo.get(memo_key) if session.quiet.is_set() else None
            if remembered is not None:
                locations += remembered[0]
                if remembered[1]:
                    texts.append(remembered[1])
                continue
            epoch = session.memo.epoch
            try:
                try:
                    found, text = await ask_one(session, op, pos, remaining)
                except RequestFailed as exc:
                    if not exc.internal:
                        raise
                    # An internal error may be a one-off; the same question failing again is
                    # a broken server (basedpyright poisoned by a cancel answered -32603 to
                    # every later references request until it was restarted).
                    log.warning("%s; asking once more", exc)
                    try:
                        found, text = await ask_one(session, op, pos, max(0.001, deadline - time.monotonic()))
                    except RequestFailed as again:
                        if again.internal:
                            raise _Broken(f"{server} keeps failing: {again}") from again
                        raise
            except TimeoutError:
                if session.stopped:
                    return dataclasses.replace(
                        _partial(locations, texts, server, done),
                        reason="deadline reached: the server process is stopped (it is restarted on the next query)",
                    )
                partial = _partial(locations, texts, server, done)
                if session.unanswered >= self.hung_after:
                    partial = dataclasses.replace(partial, reason=(
                        f"deadline reached ({server} answered none of the last {session.unanswered} "
                        f"requests; it is restarted if it stays silent for {self.hung_silent_s:.0f} s)"
                    ))  # fmt: skip
                return partial
            except RequestFailed as exc:
                return LspAnswer(tuple(locations), complete=False, reason=str(exc), server=server,
                                 answered=bool(locations), text="\n\n".join(texts) or None)  # fmt: skip
            if session.quiet.is_set():
                session.memo.put(memo_key, (tuple(found), text), epoch)
            locations += found
            if text:
                texts.append(text)
        return LspAnswer(tuple(locations), server=server, text="\n\n".join(texts) or None)


def _after_restart(answer: LspAnswer, server: str, why: str) -> LspAnswer:
    """An answer from a server started again because it had stopped idle or been released:
    a note when it answered, the reason reworded when it could not in time."""
    how = "after stopping idle" if why == STOPPED_IDLE else "after it was released"
    if answer.answered:
        return dataclasses.replace(answer, notes=(*answer.notes, f"started again ({how})"))
    if answer.reason and answer.reason.startswith("server still indexing"):
        return dataclasses.replace(answer, reason=f"{answer.reason}; {server} was starting again ({how})")
    return answer


def _partial(locations: list[Location], texts: list[str], server: str, done: int) -> LspAnswer:
    return LspAnswer(
        tuple(locations),
        complete=False,
        reason="deadline reached",
        server=server,
        answered=done > 0,
        text="\n\n".join(texts) or None,
    )


async def _kill_and_wait(session: ServerSession) -> None:
    """SIGKILL the server (a stopped process dies too) and wait, briefly, for its exit."""
    session.kill()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(session.exited.wait(), 5.0)


async def _ready_or_exit(session: ServerSession) -> None:
    waits = [asyncio.ensure_future(session.ready.wait()), asyncio.ensure_future(session.exited.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()


if TYPE_CHECKING:
    _IMPLEMENTS: type[LanguageServers] = ServerPool  # mypy holds the pool to the Protocol
