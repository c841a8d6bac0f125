"""The index one :class:`navigator.api.Navigator` answers from, over its lifetime.

:class:`IndexHandle` owns this process's connections to ``.nav/index.db`` (one per thread:
SQLite connections are per thread) and the per-thread state tied to them (the search service,
the grep index, the flags of the call in progress), all dropped together when the connections
are closed to take a fresh look at the file. It runs the index updates (under the index lock),
checks integrity after a run, recovers from disk errors and damage (reopen first; rebuild,
keeping what reads cleanly, only when SQLite's ``integrity_check`` says so), brings the index up
to date before a query (freshness), says what an answer must note about the index (stale,
rebuilt, unfinished), and runs a verb again after recovering (:func:`heals_damage`). The verbs
and their ranking live elsewhere: this is the index's lifecycle.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from navigator.calls import Calls
from navigator.config import Config
from navigator.indexer import ProgressFn, index_root
from navigator.paths import ensure_nav_dir, open_private
from navigator.results import IndexReport
from navigator.walk import WalkOptions
from storage.db import Store, integrity, rebuild_database
from storage.errors import (
    IndexBusyError,
    IndexDamagedError,
    IndexIOError,
    IndexReadOnlyError,
    NavError,
    NotIndexedError,
    StorageError,
    StorageFullError,
)

if TYPE_CHECKING:
    from navigator.grep_index import GrepIndex
    from navigator.search import SemanticSearch
    from semantic.embed import Embedder

log = logging.getLogger("navigator.api")  # the log records keep the name they always had


class ThreadState(threading.local):
    """One thread's view of the index. All of it goes when the connections are closed."""

    store: Store | None = None
    searcher: SemanticSearch | None = None
    grep: GrepIndex | None = None
    healing: bool = False
    """A damaged-index recovery is under way in this thread's call (no second one inside it)."""
    refreshed_for_call: bool = False
    """A compound call brought the index up to date already: its inner verbs need not."""


class IndexHandle:
    """The per-thread connections to one index, its updates, and its recovery from damage."""

    def __init__(
        self, root: Path, nav_dir: Path, config: Config, calls: Calls, *, embedder: Embedder | None = None
    ) -> None:
        self.root = root
        self.nav_dir = nav_dir
        self.index_path = nav_dir / "index.db"
        self.config = config
        self.calls = calls
        self.embedder = embedder
        self.lock = threading.RLock()
        """One lock for opening, updating, rebuilding and closing (the facade's own lock too)."""
        self.thread = ThreadState()
        self.generation = 0
        """How many times this process's connections were all closed to reopen the index."""
        self.index_error: str | None = None
        """Why the last index run failed (disk full, damaged, read-only), until one succeeds."""
        self._stores: list[Store] = []
        self._owners: list[tuple[weakref.ref[threading.Thread], Store]] = []
        """Every connection in :attr:`_stores` with the thread that uses it (a finished thread's is
        taken over)."""
        self._owners_lock = threading.Lock()
        """Guards :attr:`_owners` only: never held across an index run, as :attr:`lock` is."""
        self._greps: list[tuple[weakref.ref[threading.Thread], GrepIndex]] = []
        """Every grep index opened, with the thread that uses it (a finished thread's is taken over)."""
        self._grep_lock = threading.Lock()
        """Guards :attr:`_greps` only: never held across an index run, as :attr:`lock` is."""
        self._first_searcher: SemanticSearch | None = None

    @property
    def walk_options(self) -> WalkOptions:
        c = self.config.index
        return WalkOptions(
            max_file_bytes=c.max_file_bytes, extra_ignores=c.ignore, include_secrets=c.include_secrets
        )

    # -- connections -----------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """This thread's connection to the index (see :attr:`navigator.api.Navigator.store`). A
        thread takes over the connection of one that has finished (the daemon serves each
        connection on a thread of its own: a connection per request, never closed, left two
        descriptors open per request — 65 after 31 — and each opened under :attr:`lock`, which
        an index run holds for its whole length), so there are never more connections than
        threads that query at once."""
        store = self.thread.store
        if store is not None and store.replaced():
            self._drop_store(store)
            store = None
        if store is None:
            store = self._take_over()
        if store is None:
            with self.lock:
                store = self._open_store()
                self._stores.append(store)
            with self._owners_lock:
                self._owners.append((weakref.ref(threading.current_thread()), store))
        self.thread.store = store
        return store

    def _take_over(self) -> Store | None:
        """The connection of a finished thread (not replaced on disk since), now this thread's."""
        me = threading.current_thread()
        with self._owners_lock:
            for n, (owner, store) in enumerate(self._owners):
                was = owner()
                if (was is None or was is me or not was.is_alive()) and not store.replaced():
                    self._owners[n] = (weakref.ref(me), store)
                    return store
        return None

    def _open_store(self) -> Store:
        try:
            ensure_nav_dir(self.nav_dir)  # 0700, never a symlink or someone else's folder
            ignore = self.nav_dir / ".gitignore"
            if not ignore.exists() and os.access(self.nav_dir, os.W_OK):
                with os.fdopen(open_private(ignore, os.O_WRONLY), "w", encoding="utf-8") as fh:
                    fh.write("# nav's index; safe to delete\n*\n")
        except OSError as exc:
            raise StorageError(
                f"cannot create the index folder {self.nav_dir}: {exc.strerror or exc}; "
                "make the repository writable, or index it with `Navigator(root, index_dir=...)`"
            ) from exc
        try:
            return Store(self.index_path)  # 0600 (Store sees to it): it holds copies of the code
        except IndexDamagedError as exc:
            if not os.access(self.nav_dir, os.W_OK):
                raise
            # Another thread's connection may hold a stale view of the file: look afresh first.
            self.close_stores()
            try:
                return Store(self.index_path)
            except IndexDamagedError:
                pass
            self.rebuild(_cause(exc))
            return Store(self.index_path)

    def _drop_store(self, store: Store) -> None:
        with self.lock:
            store.close()
            if store in self._stores:
                self._stores.remove(store)
            with self._owners_lock:
                self._owners = [(o, s) for o, s in self._owners if s is not store]
            self.thread.store = None

    def close_stores(self) -> None:
        """Close every connection this process holds to the index, in every thread: SQLite shares
        one view of a file (its locks, its WAL index) among a process's connections, so a fresh
        look at the file needs them all gone. Threads reopen on their next use."""
        with self.lock:
            self.generation += 1
            with self._owners_lock:
                self._owners.clear()
            for store in self._stores:
                store.close()
            self._stores.clear()
            self.thread = ThreadState()

    def close(self) -> None:
        """Close every connection and grep index (the handle opens them again if asked)."""
        with self.lock:
            with self._owners_lock:
                self._owners.clear()
            for store in self._stores:
                store.close()
            self._stores.clear()
            with self._grep_lock:
                greps, self._greps = self._greps, []
            for _, grep in greps:
                grep.close()
            self.thread = ThreadState()

    def searcher(self) -> SemanticSearch:
        """This thread's search service; all threads share one model and one vector index."""
        from navigator.search import SemanticSearch

        store = self.store
        searcher = self.thread.searcher
        if searcher is None or searcher.store is not store:
            with self.lock:
                first = self._first_searcher
                searcher = SemanticSearch(
                    store, model=self.config.search.model, embedder=self.embedder, share_with=first
                )
                if first is None:
                    self._first_searcher = searcher
            self.thread.searcher = searcher
        return searcher

    def model_loaded(self) -> bool:
        first = self._first_searcher
        return first is not None and first.model_loaded

    def embed_runtime(self) -> str | None:
        first = self._first_searcher
        return first.embed_runtime() if first is not None else None

    def embed_rate(self) -> float | None:
        first = self._first_searcher
        return first.embed_rate() if first is not None else None

    def release_model(self) -> bool:
        first = self._first_searcher
        return first.release_model() if first is not None else False

    def grep_index(self) -> GrepIndex:
        """This thread's grep index (``.nav/grep.db``); closed by :meth:`close`. A thread takes
        over the index of one that has finished (the daemon serves each connection on a thread
        of its own: one connection to ``grep.db`` per request, never closed, ran it out of file
        descriptors), so there are never more than the threads that grep at once."""
        index = self.thread.grep
        if index is None:
            me = threading.current_thread()
            with self._grep_lock:
                for n, (owner, grep) in enumerate(self._greps):
                    was = owner()
                    if was is None or was is me or not was.is_alive():
                        self._greps[n] = (weakref.ref(me), grep)
                        index = grep
                        break
                else:
                    from navigator.grep_index import GrepIndex

                    index = GrepIndex(self.root, self.nav_dir)
                    self._greps.append((weakref.ref(me), index))
            self.thread.grep = index
        return index

    # -- damage ----------------------------------------------------------------------------

    def recover(self, exc: StorageError) -> bool:
        """After a disk I/O error or signs of damage: reopen the index, and rebuild it only when
        SQLite's ``integrity_check`` of the file says it is damaged. True when the caller should
        try again (from the reopened or rebuilt index); False when nothing can be done here."""
        log.warning("%s; closing this process's connections to the index and reopening it", exc)
        self.close_stores()
        try:
            problem = integrity(self.index_path)
        except StorageError as again:
            log.warning("the index at %s cannot be checked: %s", self.index_path, again)
            return False
        if problem is None:
            return True  # the file is sound: the error was this process's view of it
        if not os.access(self.nav_dir, os.W_OK):
            return False
        self.rebuild(problem)
        self.update(lock_wait_s=30.0)
        return True

    def rebuild(self, why: str) -> None:
        """Replace a damaged index by a new one with what still reads cleanly (the cached vectors
        at least); the next index run fills in the rest. Said in the next answer's notes."""
        from navigator.indexer import index_lock

        log.warning("the index at %s is damaged (%s); rebuilding it", self.index_path, why)
        with self.lock, index_lock(self.nav_dir, timeout_s=30.0):
            self.close_stores()
            self._first_searcher = None  # vectors keyed by the old chunk ids
            salvage = rebuild_database(self.index_path, chunk_ok=_chunk_ok)
        self.calls.rebuilt(f"the index was damaged ({why}) and has been rebuilt: {salvage.describe()}")

    # -- updates ---------------------------------------------------------------------------

    def index(
        self, *, progress: ProgressFn | None, workers: int | None, only: Sequence[str] | None
    ) -> IndexReport:
        """One index run, never reported a success over a damaged file (see
        :meth:`navigator.api.Navigator.index`)."""
        # an index run asked for reads the whole git history; a query's refresh a bounded part
        options: dict[str, Any] = {
            "progress": progress,
            "workers": workers,
            "only": only,
            "history_budget_s": None,
        }
        try:
            report = self.update(lock_wait_s=30.0, **options)
            problem = None if only else self.store.integrity_problem()
        except (IndexDamagedError, IndexIOError) as exc:
            problem = f"{exc}"
        if problem is not None:
            # never report success over a damaged file; but a look from this process alone comes
            # first: only SQLite's integrity_check of the file, reopened, decides it is damaged
            log.warning(
                "%s: the index at %s looks damaged or unreadable; reopening it", problem, self.index_path
            )
            self.close_stores()
            found = integrity(self.index_path)
            if found is not None:
                self.rebuild(found)
                options = {**options, "only": None}
            report = self.update(lock_wait_s=30.0, **options)
            problem = self.store.integrity_problem()
            if problem is not None:
                done = "was rebuilt and" if found is not None else "was reopened and"
                raise IndexDamagedError(
                    f"the index at {self.index_path} {done} is still damaged ({problem}); "
                    "the disk may be failing: check it, or index elsewhere with `Navigator(root, index_dir=...)`"
                )
        return report

    def update(self, *, lock_wait_s: float, **options: Any) -> IndexReport:
        """One incremental index run under the index lock (IndexBusyError after ``lock_wait_s``).

        A run that fails is remembered (:attr:`index_error`) so later answers say they may be stale.
        """
        from navigator.indexer import index_lock

        store = self.store
        if store.read_only:
            raise IndexReadOnlyError(
                f"the index at {self.index_path} is read-only, so it cannot be updated; queries answer "
                f"from it as it is; make {self.nav_dir} writable and run `nav index`"
            )
        try:
            with self.lock, index_lock(self.nav_dir, timeout_s=lock_wait_s):
                report = index_root(
                    self.root,
                    store,
                    walk_options=self.walk_options,
                    chunk_budget=self.config.index.chunk_budget,
                    **options,
                )
        except IndexBusyError:
            raise
        except NavError as exc:
            self.index_error = str(exc)
            raise
        self.index_error = None
        return report

    # -- freshness -------------------------------------------------------------------------

    def fresh(self, *, refresh: bool, lock_wait_s: float) -> Store:
        """The store, brought up to date first unless ``refresh`` is off.

        When another process holds the index lock (a long ``nav index`` elsewhere), the
        query waits at most ``lock_wait_s`` for it, then answers from the index as it is, and
        the call's answer says so (:meth:`notes`).
        """
        store = self.store
        if refresh and not self.thread.refreshed_for_call:
            stale: str | None = None
            try:
                self.update(lock_wait_s=lock_wait_s)
            except IndexBusyError:
                stale = "another process is updating the index; this answer may miss its latest changes"
            except IndexReadOnlyError:
                stale = (
                    f"the index at {self.index_path} is read-only: this answer comes from it as it is "
                    "and may miss later changes to the files"
                )
            except (StorageFullError, IndexDamagedError):
                pass  # remembered in index_error; the answer's notes say the index may be stale
            call = self.calls.current()
            if call is not None:
                call.stale = stale
            store = self.store  # reopened if the update rebuilt it
        if not refresh and not store.has_files():
            raise NotIndexedError(f"{self.root} has no index yet; run `nav index {self.root}`")
        return store

    @contextmanager
    def refreshed_once(self, *, refresh: bool, lock_wait_s: float) -> Iterator[None]:
        """A compound call (a routed query runs several verbs) brings the index up to date once."""
        if self.thread.refreshed_for_call:
            yield
            return
        self.fresh(refresh=refresh, lock_wait_s=lock_wait_s)
        self.thread.refreshed_for_call = True
        try:
            yield
        finally:
            self.thread.refreshed_for_call = False

    def notes(self, *, stale: bool = True) -> tuple[str, ...]:
        """What this call's answer must say about the index it came from: stale, rebuilt,
        unfinished (``stale=False``: not whether it was brought up to date)."""
        notes: list[str] = []
        call = self.calls.current()
        if call is not None:
            if stale and call.stale:
                notes.append(call.stale)
            notes += self.calls.rebuilt_notes(call)
        if self.index_error:
            notes.append(f"the last index update failed, so answers may be stale: {self.index_error}")
        unfinished = self.unfinished_note()
        if unfinished:
            notes.append(unfinished)
        return tuple(notes)

    def unfinished_note(self) -> str | None:
        """Says so when the index was never completed (a killed first run) or is being built."""
        try:
            state = self.store.get_meta("last_run_state")
        except StorageError:
            return None
        if state != "running":
            return None
        from navigator.indexer import index_lock

        try:
            with index_lock(self.nav_dir, timeout_s=0.0):
                pass
        except IndexBusyError:
            return "the index is being updated right now; answers may miss files it has not reached yet"
        except OSError:
            pass
        return (
            "the index is unfinished: its last run stopped before the end (killed?), so files may be "
            "missing; run `nav index` to complete it"
        )


class OnIndex(Protocol):
    """What :func:`heals_damage` needs of the object whose methods it wraps (the facade)."""

    @property
    def _handle(self) -> IndexHandle: ...


F = TypeVar("F", bound=Callable[..., Any])


def heals_damage(fn: F) -> F:
    """A verb of an object holding an :class:`IndexHandle` (``self._handle``), run as one call
    (:class:`navigator.calls.Call`). A query that meets a disk I/O error or what looks like
    damage closes this process's connections to the index and answers once more from it,
    reopened; only an index that SQLite's ``integrity_check`` finds damaged is rebuilt (keeping
    what reads cleanly), and the answer's notes say so. A read-only index, or one that fails
    again, raises the clear error."""

    @functools.wraps(fn)
    def wrapper(self: OnIndex, *args: Any, **kwargs: Any) -> Any:
        handle = self._handle
        with handle.calls.call():
            generation = handle.generation
            try:
                return fn(self, *args, **kwargs)
            except (IndexDamagedError, IndexIOError) as exc:
                if handle.thread.healing:
                    raise
                handle.thread.healing = True
                try:
                    # another thread already reopened the index under this call: just ask again
                    if generation == handle.generation and not handle.recover(exc):
                        raise
                    return fn(self, *args, **kwargs)
                finally:
                    handle.thread.healing = False

    return wrapper  # type: ignore[return-value]  # wraps preserves fn's signature; mypy cannot see it


def _chunk_ok(text: str, content_hash: str) -> bool:
    """Whether a chunk kept from a damaged index still has the text its hash was made from."""
    from semantic.parse import chunk_hash

    return isinstance(text, str) and chunk_hash(text) == content_hash


def _cause(exc: BaseException) -> str:
    """The SQLite words behind a storage error (``database disk image is malformed``)."""
    cause = exc.__cause__
    return str(cause) if cause is not None else str(exc)
