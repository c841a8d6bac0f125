"""One running language server: launch, initialize, readiness, requests with deadlines,
freshness, and a clean stop. Built on multilspy's JSON-RPC client
(:class:`multilspy.lsp_protocol_handler.server.LanguageServerHandler`).

What this adds to multilspy's client:

- readiness from the server's own signal (:meth:`ServerDefinition.is_ready_event`),
  never a fixed sleep;
- requests that end: each has a timeout, and a server that exits fails every
  pending request at once instead of leaving it waiting forever;
- freshness: files under the root that changed on disk since the server saw them are
  sent (``didChangeWatchedFiles`` plus ``didOpen``/``didChange`` with the new text)
  before a request;
- the process runs in its own process group, which :meth:`kill` signals as a whole.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import signal
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from multilspy.lsp_protocol_handler.lsp_types import ErrorCodes
from multilspy.lsp_protocol_handler.server import Error as RpcError
from multilspy.lsp_protocol_handler.server import (
    LanguageServerHandler,
    ProcessLaunchInfo,
    Request,
    make_request,
)

from lsp.adopted import AdoptedProcess
from lsp.answers import Location
from lsp.handshake import Handover, configuration, initialize_params
from lsp.launch import Prelaunched
from lsp.memo import AnswerMemo
from lsp.registry import ServerDefinition

__all__ = ["ServerSession", "ServerExited", "RequestFailed", "FileState"]

log = logging.getLogger("nav.lsp")

_SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".nav", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache",
     ".pytest_cache", ".tox", ".nox", "site-packages", ".cache", "target", ".idea", ".vscode"}
)  # fmt: skip


class ServerExited(Exception):
    """The server process is gone (crashed, killed, or stopped)."""


class RequestFailed(Exception):
    """The server answered a request with an error (``code``: the JSON-RPC error code)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code

    @property
    def internal(self) -> bool:
        """An internal error (-32603): the server failed, not the question."""
        return self.code == int(ErrorCodes.InternalError)


@dataclass(frozen=True, slots=True)
class FileState:
    mtime_ns: int
    size: int


def _uri(path: Path) -> str:
    return path.as_uri()


class ServerSession:
    """A started (or starting) language server for one root."""

    def __init__(
        self, definition: ServerDefinition, binary: str, root: Path, *, prelaunched: Prelaunched | None = None
    ) -> None:
        self.prelaunched = prelaunched
        """A process launched before the pool existed (:mod:`lsp.launch`): adopted, not started."""
        self.definition = definition
        self.binary = binary
        self.root = root.resolve()
        self.ready = asyncio.Event()
        self.exited = asyncio.Event()
        self.returncode: int | None = None
        self.capabilities: dict[str, Any] = {}
        self.started_at = 0.0
        self.ready_at: float | None = None
        self.last_used = time.monotonic()
        self.notes: list[str] = []
        self.stopping = False
        self._tail: collections.deque[str] = collections.deque(maxlen=60)
        self._known: dict[str, FileState] = {}
        self._opened: dict[str, int] = {}
        self._handler: LanguageServerHandler | None = None
        self._watch: asyncio.Task[None] | None = None
        self._sync_lock = asyncio.Lock()
        self.quiet = asyncio.Event()
        """Set while no "loading" progress (``definition.loading``) is under way."""
        self.quiet.set()
        self._loading: set[str] = set()
        self._pending: set[str] | None = set()
        self.synced_once = False
        """Whether a whole-tree :meth:`sync_files` has run since start."""
        self._abandoned = 0
        self.last_message: str | None = None
        """The server's latest progress or log line (what it is loading)."""
        self.unanswered = 0
        """Requests in a row that reached their deadline unanswered (0 after any answer)."""
        self.last_heard = time.monotonic()
        """When the server last answered a request or sent a notification: a sign of life."""

        self.overlay: dict[str, str] = {}
        """Editor buffers (absolute path -> text) that stand in for the disk; the pool shares one
        dict per root with its sessions (:meth:`ServerPool.set_buffer`)."""
        self._overlay_sent: dict[str, str] = {}
        self.memo: AnswerMemo[tuple[tuple[Location, ...], str | None]] = AnswerMemo()
        """Answers this server gave twice alike with nothing told to it in between; every
        document or file change sent to it forgets them all."""

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        proc = self._handler.process if self._handler else None
        return proc.pid if proc else None

    @property
    def alive(self) -> bool:
        return self._handler is not None and not self.exited.is_set()

    @property
    def stopped(self) -> bool:
        """Whether the process is stopped (SIGSTOP / SIGTSTP): it will answer nothing until
        continued. Read from ``/proc``; False where that cannot be read."""
        pid = self.pid
        if pid is None or self.exited.is_set():
            return False
        # The launched process may be a wrapper (basedpyright-langserver is a Python script
        # that runs node): any stopped process in its tree stops the answers.
        return any(_proc_state(p) in ("T", "t") for p in _process_tree(pid))

    def tail(self) -> str:
        """The last lines the server logged (for error messages)."""
        return "\n".join(self._tail)

    async def start(self) -> None:
        """Launch and initialize. Returns once ``initialized`` is sent; :attr:`ready` is set
        when the server signals it has loaded the workspace."""
        pre = self.prelaunched
        self.started_at = pre.started_at if pre is not None else time.monotonic()
        self.notes += pre.notes if pre is not None else self.definition.prepare(self.root)
        launch = self.definition.launch(self.root, self.binary)
        self._known = self._scan()
        handler = LanguageServerHandler(
            ProcessLaunchInfo(cmd=list(launch.cmd), env=dict(launch.env), cwd=launch.cwd),
            logger=self._on_traffic,
            start_independent_lsp_process=True,  # own process group: kill() reaches children
        )
        self._handler = handler
        self._register(handler)
        handover = None
        if pre is not None and pre.handshake is not None:  # initialized already, at launch
            handover = await asyncio.to_thread(pre.handshake.finish, 60.0)
        if pre is not None:
            await _adopt(handler, pre, handover)
        else:
            await handler.start()
        self._watch = asyncio.get_running_loop().create_task(self._watch_exit())
        if handover is not None:
            for path, (mtime_ns, size) in handover.opened.items():
                self._opened[path] = 1  # as read then: a file changed since is sent at the next sync
                self._known[path] = FileState(mtime_ns, size)
            if handover.initialize is None:
                raise ServerExited(f"{self.definition.name} did not answer initialize: {self.tail()[-300:]}")
            result: Any = handover.initialize
        else:
            result = await self._raw_request(
                "initialize", initialize_params(self.definition, self.root), timeout_s=60.0
            )
        self.capabilities = dict((result or {}).get("capabilities") or {})
        if handover is None:
            handler.notify.initialized({})
        # Settings are pulled by the servers (workspace/configuration); pushing them as well
        # made basedpyright load the workspace twice.
        if self.definition.ready_after_initialize:
            self._set_ready()

    def _set_ready(self) -> None:
        if not self.ready.is_set():
            self.ready_at = time.monotonic()
            log.info(
                "%s ready in %.2fs for %s", self.definition.name, self.ready_at - self.started_at, self.root
            )
            self.ready.set()

    def _register(self, handler: LanguageServerHandler) -> None:
        async def nothing(params: Any) -> None:
            return None

        async def settings(params: Any) -> list[Any]:
            return configuration(self.definition.settings(self.root), params)

        async def folders(params: Any) -> list[dict[str, str]]:
            return [{"uri": _uri(self.definition.workspace_folder(self.root)), "name": self.root.name}]

        for method in ("client/registerCapability", "client/unregisterCapability",
                       "window/workDoneProgress/create", "window/showMessageRequest",
                       "workspace/diagnostic/refresh", "workspace/semanticTokens/refresh",
                       "workspace/inlayHint/refresh", "workspace/codeLens/refresh"):  # fmt: skip
            handler.on_request(method, nothing)
        handler.on_request("workspace/configuration", settings)
        handler.on_request("workspace/workspaceFolders", folders)

        def watcher(method: str) -> Any:
            async def on(params: Any) -> None:
                self.last_heard = time.monotonic()
                if method in ("window/logMessage", "window/showMessage") and isinstance(params, dict):
                    self._tail.append(str(params.get("message", ""))[:500])
                    self.last_message = (
                        str(params.get("message", "")).strip().splitlines()[0][:120]
                        if str(params.get("message", "")).strip()
                        else self.last_message
                    )
                if method == "$/progress":
                    self._track_loading(params)
                    self._note_progress(params)
                if self.definition.is_ready_event(method, params):
                    self._set_ready()

            return on

        for method in ("window/logMessage", "window/showMessage", "$/progress", "telemetry/event",
                       "textDocument/publishDiagnostics", "experimental/serverStatus",
                       "language/status", "$/typescriptVersion"):  # fmt: skip
            handler.on_notification(method, watcher(method))

    def _note_progress(self, params: Any) -> None:
        if not isinstance(params, dict) or not isinstance(params.get("value"), dict):
            return
        value = params["value"]
        parts = [str(value[k]) for k in ("title", "message") if value.get(k)]
        if isinstance(value.get("percentage"), (int, float)):
            parts.append(f"{value['percentage']:.0f}%")
        if parts:
            self.last_message = " ".join(parts)[:120]

    def loading_status(self) -> str:
        """How far loading has got, for a reason: ``loading for 8.1 s; last: "Found 312 source files"``."""
        since = time.monotonic() - self.started_at if self.started_at else 0.0
        text = f"{self.definition.name} loading for {since:.1f}s"
        return f'{text}; last: "{self.last_message}"' if self.last_message else text

    def _track_loading(self, params: Any) -> None:
        pattern = self.definition.loading
        if pattern is None or not isinstance(params, dict):
            return
        token = str(params.get("token"))
        value = params.get("value") or {}
        if value.get("kind") == "begin" and (
            pattern.search(token) or pattern.search(str(value.get("title", "")))
        ):
            self._loading.add(token)
            self.quiet.clear()
        elif value.get("kind") == "end" and token in self._loading:
            self._loading.discard(token)
            if not self._loading:
                self.quiet.set()

    def _on_traffic(self, source: str, target: str, message: Any) -> None:
        if source == "client" and target == "logger":
            text = str(message)
            if text.startswith("LSP stderr: "):
                self._tail.append(text[12:].rstrip()[:500])

    async def _watch_exit(self) -> None:
        handler = self._handler
        proc = handler.process if handler else None
        if proc is None:
            return
        self.returncode = await proc.wait()
        self.exited.set()
        if not self.stopping:
            log.warning("%s exited with %s: %s", self.definition.name, self.returncode, self.tail()[-500:])
        if handler is not None:
            # multilspy's client would leave these waiting forever.
            for rid in list(handler._response_handlers):
                request = handler._response_handlers.pop(rid, None)
                if request is not None:
                    await request.on_error(RpcError(ErrorCodes.InternalError, "server exited"))

    async def stop(self) -> None:
        """Polite shutdown with a short bound, then the process group is killed."""
        self.stopping = True
        handler = self._handler
        if handler is not None and handler.process is not None and not self.exited.is_set():
            try:
                await asyncio.wait_for(handler.send_request("shutdown", None), timeout=2.0)
                handler.notify.exit()
                await asyncio.wait_for(self.exited.wait(), timeout=2.0)
            except (TimeoutError, RpcError, ConnectionError, RuntimeError):
                pass
        self.kill()
        if handler is not None:
            for task in list(handler.tasks.values()):
                task.cancel()
            handler.tasks = {}
        proc = handler.process if handler is not None else None
        if self._watch is not None and proc is not None:
            try:
                await asyncio.wait_for(self.exited.wait(), timeout=5.0)
            except TimeoutError:
                log.warning("%s (pid %s) did not exit after SIGKILL", self.definition.name, self.pid)
        if isinstance(proc, AdoptedProcess):
            proc.close()
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()  # the pipes; asyncio warns about a transport left open

    def kill(self) -> None:
        """SIGKILL the server's whole process group (sync; safe to call from atexit)."""
        self.stopping = True
        pid = self.pid
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)

    # -- requests --------------------------------------------------------------------------

    async def _raw_request(self, method: str, params: Any, *, timeout_s: float) -> Any:
        handler = self._handler
        if handler is None or self.exited.is_set():
            raise ServerExited(f"{self.definition.name} is not running")
        # The id is taken here, in the same step that registers the request, so the cancel
        # below names this request and no other (multilspy's send_request takes it later,
        # inside the task wait_for starts: a request sent in between would get it).
        rid = handler.request_id
        handler.request_id += 1
        pending = Request()
        self._hear_replies(pending)
        handler._response_handlers[rid] = pending

        async def exchange() -> Any:
            async with pending.cv:
                await handler._send_payload(make_request(method, rid, params))
                await pending.cv.wait()
            if isinstance(pending.error, RpcError):
                raise pending.error
            return pending.result

        try:
            return await asyncio.wait_for(exchange(), timeout=max(timeout_s, 0.001))
        except TimeoutError:
            if self.exited.is_set():
                raise
            self.unanswered += 1
            if method in self.definition.uncancellable:
                # The server's cancellation of this method is broken (see the definition):
                # the request runs to its end and its late answer is dropped.
                self._abandoned += 1
            else:
                handler.notify.cancel_request({"id": rid})
            raise
        except (ConnectionError, BrokenPipeError) as exc:
            # Writing to a dead server: let the exit watcher catch up, then report the exit.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.exited.wait(), timeout=2.0)
            raise ServerExited(f"{self.definition.name} is gone ({exc})") from exc
        except RpcError as exc:
            if self.exited.is_set():
                raise ServerExited(
                    f"{self.definition.name} exited (code {self.returncode}) during {method}"
                ) from exc
            raise RequestFailed(
                f"{self.definition.name} answered {method} with an error: {exc}", _code(exc)
            ) from exc

    def _hear_replies(self, pending: Request) -> None:
        """Count any reply to ``pending`` as a sign of life, a late one (after its deadline:
        the server is slow, not hung) included."""
        on_result, on_error = pending.on_result, pending.on_error

        async def result(params: Any) -> None:
            self.unanswered, self.last_heard = 0, time.monotonic()
            await on_result(params)

        async def error(err: Any) -> None:
            self.unanswered, self.last_heard = 0, time.monotonic()
            await on_error(err)

        pending.on_result, pending.on_error = result, error

    def hung(self, *, after: int, silent_s: float) -> bool:
        """Whether the server looks hung: its last ``after`` requests reached their deadlines
        unanswered, and it has sent nothing at all (no answer, log line or progress) for
        ``silent_s``. A server busy loading a big project talks while it works."""
        return self.unanswered >= after and time.monotonic() - self.last_heard > silent_s

    async def request(self, method: str, params: Any, *, timeout_s: float) -> Any:
        self.last_used = time.monotonic()
        return await self._raw_request(method, params, timeout_s=timeout_s)

    def supports(self, capability: str) -> bool:
        value = self.capabilities.get(capability)
        return bool(value) or isinstance(value, dict)

    # -- freshness -------------------------------------------------------------------------

    def _scan(self) -> dict[str, FileState]:
        exts = self.definition.extensions
        out: dict[str, FileState] = {}
        root = str(self.root)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
            for name in filenames:
                dot = name.rfind(".")
                if dot < 0 or name[dot:].lower() not in exts:
                    continue
                full = os.path.join(dirpath, name)
                try:
                    st = os.lstat(full)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue  # a symlink may lead out of the root: never opened for a server
                out[full] = FileState(st.st_mtime_ns, st.st_size)
        return out

    def note_changed(self, paths: Iterable[str] | None) -> None:
        """Remember that ``paths`` (absolute; None: anything) changed, to be told to the
        server by :meth:`sync_pending` (the caller's file watcher saw them)."""
        if paths is None:
            self._pending = None
        elif self._pending is not None:
            self._pending.update(paths)

    @property
    def has_pending(self) -> bool:
        return self._pending is None or bool(self._pending)

    async def sync_pending(self) -> int:
        """Tell the server about the files :meth:`note_changed` reported (a full walk when
        it was told "anything"); the first call after start always walks the whole tree."""
        pending, self._pending = self._pending, set()
        if pending is None or not self.synced_once:
            return await self.sync_files()
        if pending:
            return await self.sync_files(pending)
        async with self._sync_lock:  # a sync already under way finishes before the caller asks
            return 0

    def _stat_some(self, paths: Iterable[str]) -> tuple[dict[str, FileState], set[str]]:
        """States of the given files that the server watches, and those that are gone."""
        exts = self.definition.extensions
        root = str(self.root) + os.sep
        found: dict[str, FileState] = {}
        gone: set[str] = set()
        for path in paths:
            full = os.path.abspath(path)
            if not full.startswith(root) or os.path.splitext(full)[1].lower() not in exts:
                continue
            if any(part in _SKIP_DIRS for part in Path(full[len(root) :]).parts[:-1]):
                continue
            try:
                st = os.lstat(full)
                if not stat.S_ISREG(st.st_mode):
                    raise FileNotFoundError(full)  # a symlink now: never opened for a server
            except OSError:
                if full in self._known:
                    gone.add(full)
                continue
            found[full] = FileState(st.st_mtime_ns, st.st_size)
        return found, gone

    async def sync_files(self, paths: Iterable[str] | None = None) -> int:
        """Tell the server about files changed on disk since it last saw them: every file
        under the root (a walk), or only ``paths``. Returns how many changed. Call only once
        the server is ready (an early open can make basedpyright drop the file: FINDINGS.md)."""
        async with self._sync_lock:
            handler = self._handler
            if handler is None or self.exited.is_set():
                return 0
            if paths is None:
                self._pending = set()
                now = self._scan()
                gone = self._known.keys() - now.keys()
                self.synced_once = True
            else:
                now, gone = self._stat_some(paths)
            changes: list[dict[str, Any]] = []
            for path, state in now.items():
                old = self._known.get(path)
                if old is None:
                    changes.append({"uri": _uri(Path(path)), "type": 1})
                elif old != state:
                    changes.append({"uri": _uri(Path(path)), "type": 2})
                else:
                    continue
                if path in self._opened:
                    self._send_change(path)
            for path in gone:
                changes.append({"uri": _uri(Path(path)), "type": 3})
                if self._opened.pop(path, None) is not None:
                    self.memo.changed()
                    handler.notify.did_close_text_document({"textDocument": {"uri": _uri(Path(path))}})
            if paths is None:
                self._known = now
            else:
                self._known.update(now)
                for path in gone:
                    self._known.pop(path, None)
            if changes:
                self.memo.changed()
                handler.notify.did_change_watched_files({"changes": changes})
                # Changed files are opened with their new text: an open document's content is
                # authoritative for every server, whatever it does with file watching.
                for change in changes:
                    if change["type"] != 3:
                        path = path_of(change["uri"])
                        if path not in self._opened:
                            self._send_open(path)
            return len(changes)

    def ensure_open(self, path: str) -> None:
        """Open ``path`` (absolute) in the server if it is not open yet."""
        if path not in self._opened:
            self._send_open(path)

    def sync_overlay(self) -> int:
        """Send the editor buffers this server has not seen yet (didOpen, or didChange with a
        new version), and the disk's text again for buffers that were closed. Returns how many
        documents were sent. Cheap when nothing changed (a dict walk)."""
        if self._handler is None or self.exited.is_set():
            return 0
        exts = self.definition.extensions
        sent = 0
        for path, text in list(self.overlay.items()):
            if self._overlay_sent.get(path) is text or os.path.splitext(path)[1].lower() not in exts:
                continue
            self._overlay_sent[path] = text
            self._send_change(path) if path in self._opened else self._send_open(path)
            sent += 1
        for path in [p for p in self._overlay_sent if p not in self.overlay]:
            del self._overlay_sent[path]  # closed in the editor: back to the disk's text
            if path in self._opened:
                self._send_change(path)
                sent += 1
        return sent

    def _read(self, path: str) -> str | None:
        buffer = self.overlay.get(path)
        if buffer is not None:
            return buffer
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as fh:
                text = fh.read()
        except OSError:
            return None
        # as the server reads the file itself: with a byte-order mark or without it
        return text[1:] if text.startswith("\ufeff") and not self.definition.bom_is_text else text

    def _send_open(self, path: str) -> None:
        text = self._read(path)
        if text is None or self._handler is None:
            return
        self._opened[path] = 1
        self.memo.changed()  # a newly opened file may load another project (tsserver)
        self._handler.notify.did_open_text_document(
            {"textDocument": {"uri": _uri(Path(path)), "languageId": self.definition.language_id(path),
                              "version": 1, "text": text}}
        )  # fmt: skip

    def _send_change(self, path: str) -> None:
        text = self._read(path)
        if text is None or self._handler is None:
            return
        version = self._opened[path] + 1
        self._opened[path] = version
        self.memo.changed()
        self._handler.notify.did_change_text_document(
            {"textDocument": {"uri": _uri(Path(path)), "version": version},
             "contentChanges": [{"text": text}]}
        )  # fmt: skip


def _proc_state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _process_tree(pid: int, *, limit: int = 64) -> list[int]:
    """``pid`` and its descendants, from ``/proc/PID/task/TID/children`` (Linux; elsewhere
    just ``pid``)."""
    out: list[int] = []
    todo = [pid]
    while todo and len(out) < limit:
        p = todo.pop()
        out.append(p)
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{p}/task/{tid}/children", encoding="ascii") as fh:
                    todo += [int(c) for c in fh.read().split()]
            except (OSError, ValueError):
                continue
    return out


def _code(exc: RpcError) -> int | None:
    try:
        return int(exc.code)
    except (TypeError, ValueError):
        return None


def path_of(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)


async def _adopt(handler: LanguageServerHandler, pre: Prelaunched, handover: Handover | None) -> None:
    """What :meth:`LanguageServerHandler.start` does, on a process that already runs: its
    pipes as the handler's process (what the early handshake kept read first), and the
    handler's two readers started."""
    unread = (handover.stdout, handover.stderr) if handover is not None else (b"", b"")
    handler.process = await AdoptedProcess.attach(pre.popen, *unread)
    handler.loop = asyncio.get_running_loop()
    for reader in (handler.run_forever(), handler.run_forever_stderr()):
        handler.tasks[handler.task_counter] = handler.loop.create_task(reader)
        handler.task_counter += 1
