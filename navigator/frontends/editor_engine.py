"""What ``nav lsp`` holds for one workspace root: the engine connection and the root's index.

:class:`RootEngine` owns the root's open buffers, the engine for the disk's view (the root's
daemon, or an in-process Navigator), the index read in this process, the exact leg that sees
the buffers, and the watcher that tells this process's language servers about saved files.
:func:`index_root` and :func:`root_languages` are the warm-up's questions to it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from navigator.confine import read_text_inside
from navigator.errors import NavError
from navigator.frontends.editor_buffers import Buffers, BufferTable
from navigator.watch import Watcher

if TYPE_CHECKING:
    from navigator.public import ServerPool
    from navigator.verbs import Verbs

    NavFactory = Callable[[Path], Verbs]
    """Makes the engine of one root for the disk's view (a test's, or a custom one)."""


log = logging.getLogger("nav.editor")


class RootEngine:
    """Everything ``nav lsp`` holds for one workspace root."""

    def __init__(
        self, root: Path, pool: ServerPool | None, *, use_daemon: bool, nav_factory: NavFactory | None = None
    ) -> None:
        from navigator.api import Navigator
        from navigator.exact import ExactNavigator, NavigatorTable

        self.root = root
        self.buffers = Buffers(root)
        self.use_daemon = use_daemon
        self.remote: Verbs | None = None
        if nav_factory is not None:
            self.remote = nav_factory(root)
        elif use_daemon:
            from navigator.frontends.client import DaemonClient

            self.remote = DaemonClient(root)
        # the index, read here (the daemon keeps it fresh; without it, each query refreshes it)
        self.local = Navigator(root, refresh=self.remote is None)
        self.watching = False
        self._observer: Watcher | None = None
        # set once the warm-up's first index of this root is done: until then, requests wait
        # (bounded), so the first answers do not come from a half-built index without a word
        self.indexed = threading.Event()
        self.table = BufferTable(NavigatorTable(self.local), self.buffers, follows_changes=False)
        self.exact = ExactNavigator(root, self.table, pool=pool)
        self.pool = pool
        self._lock = threading.Lock()

    @property
    def engine(self) -> Verbs:
        """The Navigator verbs' provider for the disk's view: the daemon, or this process."""
        return self.remote if self.remote is not None else self.local

    def start_watching(self) -> None:
        """Tell this process's language servers about files changed on disk (by a save, a
        checkout...), so requests need not walk the tree first. Only the folders the index
        covers are watched (see :mod:`navigator.watch`): a ``.venv`` costs nothing."""
        from navigator.watch import start_watcher

        self._observer = start_watcher(
            self.root,
            options=lambda: self.local.walk_options,
            on_change=self._files_changed,
            on_degraded=self._watch_degraded,
        )
        if self._observer is not None:
            self.table._follows = True
            if self.remote is None:
                # this process keeps the index itself: the watcher says which files to index
                # again, instead of every request walking the tree first (that walk was most of
                # nav lsp's +150-300 ms over tsserver for references and workspace/symbol)
                self.local.refresh = False

    def _files_changed(self, paths: list[str] | None) -> None:
        """Files changed on disk (absolute paths; None: anything may have): the language
        servers are told, and the index of this process takes them in (all of the tree for None)."""
        self.exact.files_changed(paths)
        if self.remote is not None or self.local.refresh:
            return  # the daemon indexes, or each request refreshes anyway
        only = None
        if paths is not None:
            only = [
                p.relative_to(self.root).as_posix() for p in map(Path, paths) if p.is_relative_to(self.root)
            ]
        try:
            self.local.index(only=only)
        except NavError as err:  # the next requests check the tree themselves
            log.warning(
                "indexing what changed under %s failed (%s); requests check file stats again", self.root, err
            )
            self.local.refresh = True

    def _watch_degraded(self, why: str) -> None:
        """The watcher gave up (the watch limit): each request checks the tree again."""
        self.table._follows = False
        self.exact.files_changed(None)
        if self.remote is None:
            self.local.refresh = True

    def close(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer = None
        for part in (self.remote, self.local):
            closer = getattr(part, "close", None)
            if callable(closer):
                with contextlib.suppress(Exception):
                    closer()

    # -- positions -------------------------------------------------------------------------

    def text(self, rel: str) -> str:
        buffer = self.buffers.text_of(rel)
        if buffer is not None:
            return buffer
        disk = read_text_inside(self.root, rel)  # never outside the workspace, newlines kept
        return disk if disk is not None else ""

    def lines(self, rel: str) -> list[str]:
        return self.text(rel).splitlines()


def root_languages(engine: RootEngine) -> dict[str, int]:
    languages: dict[str, int] = engine.local.store.stats().languages
    return languages


def index_root(engine: RootEngine, report: Callable[[str, int | None], None]) -> None:
    try:
        if engine.remote is not None:
            engine.remote.symbols("nav", limit=1)  # the daemon answers once its first index is there
        else:

            def progress(done: int, total: int) -> None:
                report(f"{done}/{total} files", int(100 * done / total) if total else None)

            engine.local.index(progress=progress)
    except NavError as err:
        log.warning("indexing %s: %s", engine.root, err)
