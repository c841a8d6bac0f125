"""The ``nav lsp`` server's state: one :class:`RootEngine` per workspace root, one pool of servers.

:class:`NavLanguageServer` owns which root a document belongs to, the editor feedback (a
warning once per key, work-done progress), the wait for the roots' first index, the blocking
work run off the protocol's loop, and the debounced push of buffers to the language servers.
The request handlers that use it are in :mod:`navigator.frontends.editor`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.server import LanguageServer

from navigator.confine import confine
from navigator.errors import NavError, OutsideRootError, UsageError
from navigator.frontends.editor_engine import RootEngine
from navigator.frontends.editor_rpc import NavProtocol, shorten

if TYPE_CHECKING:
    from navigator.frontends.editor_engine import NavFactory
    from navigator.public import ServerPool
    from navigator.verbs import Verbs


log = logging.getLogger("nav.editor")

T = TypeVar("T")


INDEX_WAIT_S = 20.0  # how long a request waits for a root's first index before answering anyway
PUSH_DELAY_S = 0.1
"""A buffer's text goes to the servers this long after the last change (and before any request)."""


class NavLanguageServer(LanguageServer):
    """One engine per workspace root, one pool of language servers for them all."""

    def __init__(self, nav_factory: NavFactory | None = None, *, use_daemon: bool = False) -> None:
        super().__init__("nav", "0.2.0", protocol_cls=NavProtocol, max_workers=4)
        self._nav_factory = nav_factory
        self.use_daemon = use_daemon
        self.engines: dict[Path, RootEngine] = {}
        self._pool: ServerPool | None = None
        self._lock = threading.RLock()
        self._said: set[tuple[str, str]] = set()
        self._pushes: dict[str, asyncio.TimerHandle] = {}
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="nav-lsp")
        self._tokens = itertools.count(1)
        self.warming_up = False
        """Set by ``initialized``: from then on each root's warm-up brings its index up first."""

    @property
    def pool(self) -> ServerPool:
        with self._lock:
            if self._pool is None:
                from navigator.public import ServerPool

                self._pool = ServerPool()
            return self._pool

    # -- roots -----------------------------------------------------------------------------

    def folders(self) -> list[Path]:
        ws = self.workspace
        roots = [Path(unquote(urlparse(f.uri).path)) for f in ws.folders.values()] if ws.folders else []
        if not roots and ws.root_path:
            roots = [Path(ws.root_path)]
        if not roots:
            raise UsageError("the client sent no workspace root (rootUri or workspaceFolders); open a folder")
        return [r.resolve() for r in roots]

    def engine_for_root(self, root: Path) -> RootEngine:
        with self._lock:
            engine = self.engines.get(root)
            if engine is None:
                engine = RootEngine(
                    root, self.pool, use_daemon=self.use_daemon, nav_factory=self._nav_factory
                )
                self.engines[root] = engine
            return engine

    def locate(self, uri: str) -> tuple[RootEngine, str]:
        """The engine of the deepest workspace root holding ``uri``, and the root-relative path."""
        parsed = urlparse(uri)
        if parsed.scheme != "file":
            raise UsageError(f"only file:// URIs are supported, got `{shorten(uri)}`")
        path = Path(unquote(parsed.path)).resolve()
        best: Path | None = None
        for root in self.folders():
            inside = path == root or root in path.parents
            if inside and (best is None or len(root.parts) > len(best.parts)):
                best = root
        if best is None:
            raise OutsideRootError(
                f"`{shorten(uri)}` is outside the root of every workspace folder "
                f"({shorten(', '.join(map(str, self.folders())))}); nav only reads files inside them"
            )
        return self.engine_for_root(best), confine(
            best, path, given_as=uri
        )  # the one check every front end uses

    @property
    def nav(self) -> Verbs:
        """The first root's engine for the disk's view (custom requests)."""
        return self.engine_for_root(self.folders()[0]).engine

    # -- editor feedback -------------------------------------------------------------------

    def say_once(self, key: str, text: str) -> None:
        """A ``window/logMessage`` (warning) once per key and text."""
        if (key, text) in self._said:
            return
        self._said.add((key, text))
        self.show_message_log(f"nav: {text}", types.MessageType.Warning)

    def supports_progress(self) -> bool:
        caps = self.client_capabilities
        return bool(caps and caps.window and caps.window.work_done_progress)

    @contextlib.asynccontextmanager
    async def work_progress(self, title: str, message: str | None = None) -> Any:
        """Work-done progress around a wait the editor should see (when it supports it)."""
        token: str | None = None
        if self.supports_progress():
            token = f"nav-{next(self._tokens)}"
            try:
                await asyncio.wait_for(self.progress_create(token), 5.0)
                self.lsp.progress.begin(token, types.WorkDoneProgressBegin(title=title, message=message))
            except (TimeoutError, JsonRpcException) as exc:
                log.info("no progress for %s: %s", title, exc)
                token = None

        def report(text: str, percentage: int | None = None) -> None:
            if token is not None:
                self.lsp.progress.report(
                    token, types.WorkDoneProgressReport(message=text, percentage=percentage)
                )

        try:
            yield report
        finally:
            if token is not None:
                self.lsp.progress.end(token, types.WorkDoneProgressEnd())

    async def progress_create(self, token: str) -> None:
        await self.lsp.progress.create_async(token)

    async def wait_indexed(self, bound_s: float | None = None) -> None:
        """Wait (at most ``bound_s``) for the first index of every root being warmed up; past
        that, the editor is told once that answers may miss files not indexed yet."""
        if not self.warming_up:
            return  # no `initialized` yet (nothing indexes until then): answer from what is there
        bound_s = INDEX_WAIT_S if bound_s is None else bound_s
        until = time.monotonic() + bound_s
        while True:
            pending = [e for e in list(self.engines.values()) if not e.indexed.is_set()]
            if not pending:
                return
            if time.monotonic() >= until:
                for engine in pending:
                    self.say_once(
                        "indexing",
                        f"{engine.root}: the first index is still being built; answers may miss files "
                        "it has not reached yet",
                    )
                return
            await asyncio.sleep(0.05)

    async def run(self, fn: Callable[[], T]) -> T:
        """Run blocking work off the protocol's loop (a cancel answers at once meanwhile)."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn)

    # -- buffers -----------------------------------------------------------------------------

    def schedule_push(self, uri: str) -> None:
        handle = self._pushes.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self._pushes[uri] = self.loop.call_later(PUSH_DELAY_S, self.push, uri)

    def push(self, uri: str) -> None:
        """Send the buffer of ``uri`` (or the disk's text, when closed) to this process's servers."""
        handle = self._pushes.pop(uri, None)
        if handle is not None:
            handle.cancel()
        try:
            engine, rel = self.locate(uri)
        except NavError:
            return
        text = engine.buffers.text_of(rel)
        self.pool.set_buffer(engine.root, str(engine.root / rel), text)
        if text is not None:  # parse now, off the loop, so the next request finds it done
            self.executor.submit(engine.buffers.parsed, rel)

    def flush_pushes(self) -> None:
        for uri in list(self._pushes):
            self.push(uri)

    def shutdown_engines(self) -> None:
        for handle in self._pushes.values():
            handle.cancel()
        self._pushes.clear()
        for engine in list(self.engines.values()):
            engine.close()
        self.engines.clear()
        if self._pool is not None:
            self._pool.close()
            self._pool = None
