"""The Python API: ``Navigator(root)``, a synchronous facade of verbs for agents and tools.

>>> from navigator import Navigator
>>> nav = Navigator("path/to/repo")
>>> nav.index()                       # incremental; cheap when nothing changed
>>> nav.definitions("Order.create")   # Response[Symbol]
>>> nav.symbols("sales order")        # ranked substring / fuzzy matches

Every verb returns frozen result objects from :mod:`navigator.results`; every
failure is a :class:`navigator.errors.NavError` whose message names the bad value.
Queries first bring the index up to date with the working tree (a stat walk when
nothing changed), so an answer never points at code that is no longer there;
pass ``refresh=False`` to the constructor to skip that.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from navigator import checks
from navigator.config import Config, load_config
from navigator.confine import confine, read_text_inside
from navigator.indexer import ProgressFn, index_root, stale_count, unparsed_note
from navigator.paths import ensure_nav_dir, open_private
from navigator.results import (
    Found,
    GrepHit,
    HoverInfo,
    IndexReport,
    MapEntry,
    OutlineEntry,
    RepoMap,
    Response,
    SearchHit,
    Source,
    Status,
    Symbol,
)
from navigator.walk import WalkOptions
from storage.db import Store, SymbolRow, integrity, rebuild_database

if TYPE_CHECKING:
    from lsp.registry import Availability
    from navigator.exact import ExactNavigator
    from navigator.results import Hit
    from navigator.search import SemanticSearch, SyncReport
    from navigator.team import TeamStore
    from semantic.embed import Embedder
from storage.errors import (
    FileNotInIndexError,
    IndexBusyError,
    IndexDamagedError,
    IndexIOError,
    IndexReadOnlyError,
    NavError,
    NotIndexedError,
    OutsideRootError,
    StorageError,
    StorageFullError,
    SymbolNotFoundError,
    UsageError,
    shorten,
)

NAV_DIR = ".nav"
MAX_TEAM_STORES = 4
"""Team store connections one Navigator keeps open (a daemon serving callers that name several)."""
log = logging.getLogger(__name__)
_KIND_WEIGHT = {
    "class": 0, "struct": 0, "interface": 0, "trait": 0, "enum": 0, "type": 1,
    "function": 1, "method": 2, "constant": 2, "module": 3, "field": 4,
}  # fmt: skip


def to_symbol(row: SymbolRow) -> Symbol:
    d = row.definition
    return Symbol(
        name=d.name,
        qualified_name=d.qualified_name,
        kind=d.kind,
        path=d.path,
        line=d.name_span.start_line,
        col=d.name_span.start_col,
        end_line=d.span.end_line,
        end_col=d.span.end_col,
        signature=d.signature,
        language=d.language,
        container=d.container,
        docstring=d.docstring,
    )


def module_path(path: str) -> str:
    """``src/pkg/orders.py`` -> ``pkg.orders``; ``pkg/__init__.py`` -> ``pkg``."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] in ("__init__", "index", "mod"):
        parts = parts[:-1]
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    return ".".join(parts)


def _check_name(name: object) -> str:
    return checks.name(name)


F = TypeVar("F", bound=Callable[..., Any])


def _heals_damage(fn: F) -> F:
    """A query that meets a disk I/O error or what looks like damage closes this process's
    connections to the index and answers once more from it, reopened; only an index that SQLite's
    ``integrity_check`` finds damaged is rebuilt (keeping what reads cleanly), and the answer's
    notes say so. A read-only index, or one that fails again, raises the clear error."""

    @functools.wraps(fn)
    def wrapper(self: Navigator, *args: Any, **kwargs: Any) -> Any:
        generation = self._generation
        try:
            return fn(self, *args, **kwargs)
        except (IndexDamagedError, IndexIOError) as exc:
            if getattr(self._local, "healing", False):
                raise
            self._local.healing = True
            try:
                # another thread already reopened the index under this call: just ask again
                if generation == self._generation and not self._recover(exc):
                    raise
                return fn(self, *args, **kwargs)
            finally:
                self._local.healing = False

    return wrapper  # type: ignore[return-value]


class Navigator:
    """One indexed repository. Thread-safe for queries; one index run at a time."""

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        index_dir: str | os.PathLike[str] | None = None,
        config: Config | None = None,
        refresh: bool = True,
        embedder: Embedder | None = None,
        store_url: str | None = None,
    ) -> None:
        """``embedder``: the model to embed with (default: ``[search] model``); ``store_url``: the
        team store for ``all_repos`` queries (default: ``NAV_STORE``, then ``[store] url``)."""
        root_path = Path(checks.path(root, what="a root")).expanduser()
        try:
            exists = root_path.exists()
        except OSError as exc:  # e.g. a name longer than the file system allows
            raise UsageError(f"root `{shorten(os.fspath(root))}` cannot be used: {exc.strerror}") from None
        if not exists:
            raise UsageError(f"root `{shorten(os.fspath(root))}` does not exist; pass the path of a repository")
        if not root_path.is_dir():
            raise UsageError(f"root `{shorten(os.fspath(root))}` is not a directory; pass the repository's top folder")
        self.root = root_path.resolve()
        self.nav_dir = Path(index_dir).resolve() if index_dir else self.root / NAV_DIR
        self.index_path = self.nav_dir / "index.db"
        self.config = config if config is not None else load_config(self.root)
        self.refresh = refresh
        self._local = threading.local()
        self._stores: list[Store] = []
        self._generation = 0
        """How many times this process's connections were all closed to reopen the index."""
        self._lock = threading.RLock()
        self._exact: ExactNavigator | None = None
        self.lock_wait_s = 2.0
        """How long a query waits for another process's index run before answering without it."""
        self.stale_note: str | None = None
        self.index_error: str | None = None
        """Why the last index run failed (disk full, damaged, read-only), until one succeeds."""
        self.rebuilt_note: str | None = None
        """Set when a damaged index was deleted to be rebuilt; said in the next answers."""
        self._embedder = embedder
        self.store_url = store_url
        self._teams: dict[str, TeamStore] = {}
        """Open team stores by URL, least recently asked first."""
        self.search_embed_budget_s: float | None = None
        """Ignored: a search never embeds chunks (``embed()``, ``nav index --embed`` and the
        daemon's background loop do). Kept so callers that set it keep working."""

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """This thread's connection to the index (SQLite connections are per thread).

        A damaged index (not a database, or failing SQLite's checks on opening) is deleted and
        opened empty, so the next index run rebuilds it; the answers say so. An index another
        process rebuilt is reopened.
        """
        store: Store | None = getattr(self._local, "store", None)
        if store is not None and store.replaced():
            self._drop_store(store)
            store = None
        if store is None:
            with self._lock:
                store = self._open_store()
                self._local.store = store
                self._stores.append(store)
        return store

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
            self._close_stores()
            try:
                return Store(self.index_path)
            except IndexDamagedError:
                pass
            self._rebuild(_cause(exc))
            return Store(self.index_path)

    def _drop_store(self, store: Store) -> None:
        with self._lock:
            store.close()
            if store in self._stores:
                self._stores.remove(store)
            self._local.store = None

    def _close_stores(self) -> None:
        """Close every connection this process holds to the index, in every thread: SQLite shares
        one view of a file (its locks, its WAL index) among a process's connections, so a fresh
        look at the file needs them all gone. Threads reopen on their next use."""
        with self._lock:
            self._generation += 1
            for store in self._stores:
                store.close()
            self._stores.clear()
            self._local = threading.local()

    def _recover(self, exc: StorageError) -> bool:
        """After a disk I/O error or signs of damage: reopen the index, and rebuild it only when
        SQLite's ``integrity_check`` of the file says it is damaged. True when the caller should
        try again (from the reopened or rebuilt index); False when nothing can be done here."""
        log.warning("%s; closing this process's connections to the index and reopening it", exc)
        self._close_stores()
        try:
            problem = integrity(self.index_path)
        except StorageError as again:
            log.warning("the index at %s cannot be checked: %s", self.index_path, again)
            return False
        if problem is None:
            return True  # the file is sound: the error was this process's view of it
        if not os.access(self.nav_dir, os.W_OK):
            return False
        self._rebuild(problem)
        self._update(lock_wait_s=30.0)
        return True

    def _rebuild(self, why: str) -> None:
        """Replace a damaged index by a new one with what still reads cleanly (the cached vectors
        at least); the next index run fills in the rest. Said in the next answer's notes."""
        from navigator.indexer import index_lock

        log.warning("the index at %s is damaged (%s); rebuilding it", self.index_path, why)
        with self._lock, index_lock(self.nav_dir, timeout_s=30.0):
            self._close_stores()
            self._first_searcher: SemanticSearch | None = None  # vectors keyed by the old chunk ids
            salvage = rebuild_database(self.index_path, chunk_ok=_chunk_ok)
        self.rebuilt_note = f"the index was damaged ({why}) and has been rebuilt: {salvage.describe()}"

    def close(self) -> None:
        with self._lock:
            exact = getattr(self, "_exact", None)
            if exact is not None:
                exact.close()
                self._exact = None
            teams = getattr(self, "_teams", {})
            for team in teams.values():
                team.close()
            teams.clear()
            for store in self._stores:
                store.close()
            self._stores.clear()
            for grep in self.__dict__.pop("_greps", []):
                grep.close()
            self._local = threading.local()

    def __enter__(self) -> Navigator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def walk_options(self) -> WalkOptions:
        c = self.config.index
        return WalkOptions(
            max_file_bytes=c.max_file_bytes, extra_ignores=c.ignore, include_secrets=c.include_secrets
        )

    # -- indexing --------------------------------------------------------------------------

    def index(
        self,
        *,
        progress: ProgressFn | None = None,
        workers: int | None = None,
        only: Sequence[str] | None = None,
    ) -> IndexReport:
        """Bring the index up to date with the working tree and report what changed.

        ``only``: root-relative paths known to have changed (e.g. from a file watcher); just
        those are checked, without walking the tree.
        """
        workers = checks.optional_count(workers, what="workers", high=64)
        options: dict[str, Any] = {"progress": progress, "workers": workers, "only": only}
        try:
            report = self._update(lock_wait_s=30.0, **options)
            problem = None if only else self.store.integrity_problem()
        except (IndexDamagedError, IndexIOError) as exc:
            problem = f"{exc}"
        if problem is not None:
            # never report success over a damaged file; but a look from this process alone comes
            # first: only SQLite's integrity_check of the file, reopened, decides it is damaged
            log.warning("%s: the index at %s looks damaged or unreadable; reopening it", problem, self.index_path)
            self._close_stores()
            found = integrity(self.index_path)
            if found is not None:
                self._rebuild(found)
                options = {**options, "only": None}
            report = self._update(lock_wait_s=30.0, **options)
            problem = self.store.integrity_problem()
            if problem is not None:
                done = "was rebuilt and" if found is not None else "was reopened and"
                raise IndexDamagedError(
                    f"the index at {self.index_path} {done} is still damaged ({problem}); "
                    "the disk may be failing: check it, or index elsewhere with `Navigator(root, index_dir=...)`"
                )
        if self.rebuilt_note:
            report = dataclasses.replace(report, notes=(*report.notes, self.rebuilt_note))
            self.rebuilt_note = None
        return report

    def _update(self, *, lock_wait_s: float, **options: Any) -> IndexReport:
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
            with self._lock, index_lock(self.nav_dir, timeout_s=lock_wait_s):
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

    def _fresh(self) -> Store:
        """The store, brought up to date first unless refresh is off.

        When another process holds the index lock (a long ``nav index`` elsewhere), the
        query does not wait for it: it answers from the index as it is, and
        :attr:`stale_note` says so.
        """
        store = self.store
        if self.refresh and not getattr(self._local, "refreshed_for_call", False):
            self.stale_note = None
            try:
                self._update(lock_wait_s=self.lock_wait_s)
            except IndexBusyError:
                self.stale_note = (
                    "another process is updating the index; this answer may miss its latest changes"
                )
            except IndexReadOnlyError:
                self.stale_note = (
                    f"the index at {self.index_path} is read-only: this answer comes from it as it is "
                    "and may miss later changes to the files"
                )
            except (StorageFullError, IndexDamagedError):
                pass  # remembered in index_error; the answer's notes say the index may be stale
            store = self.store  # reopened if the update rebuilt it
        if not self.refresh and not store.has_files():
            raise NotIndexedError(f"{self.root} has no index yet; run `nav index {self.root}`")
        return store

    @_heals_damage
    def status(self) -> Status:
        """What is indexed, and how much of the working tree has changed since."""
        if not self.index_path.exists():
            return Status(
                root=str(self.root),
                index_path=str(self.index_path),
                indexed=False,
                files=0,
                symbols=0,
                chunks=0,
                refs=0,
                languages={},
                last_run_complete=False,
                last_indexed_at=None,
                stale_files=0,
                notes=tuple(self.config.warnings),
            )
        indexed = True
        store = self.store
        stats = store.stats()
        notes: list[str] = list(self.config.warnings)
        notes += [n for n in self._notes() if n != self.stale_note]
        notes += unparsed_note(store)
        return Status(
            root=str(self.root),
            index_path=str(self.index_path),
            indexed=indexed and stats.files > 0,
            files=stats.files,
            symbols=stats.symbols,
            chunks=stats.chunks,
            refs=stats.refs,
            languages=stats.languages,
            last_run_complete=stats.last_run_complete,
            last_indexed_at=stats.last_run_finished_at,
            stale_files=stale_count(self.root, store, self.walk_options) if stats.files else 0,
            notes=tuple(notes),
        )

    # -- symbol table ----------------------------------------------------------------------

    def resolve(self, name: str) -> list[SymbolRow]:
        """Definitions a name can mean: exact name, qualified suffix, or module-qualified path."""
        name = _check_name(name)
        store = self._fresh()
        return self._resolve_in(store, name)

    def _resolve_in(self, store: Store, name: str) -> list[SymbolRow]:
        dotted = name.replace("::", ".").replace("#", ".")
        if "." not in dotted:
            return store.symbols_by_name(dotted)
        rows = store.symbols_by_qualified_suffix(dotted)
        if rows:
            return rows
        # `pkg.module.func` or `module.Class.method`: match module path + qualified name
        last = dotted.rsplit(".", 1)[-1]
        out = []
        for row in store.symbols_by_name(last):
            full = module_path(row.definition.path) + "." + row.definition.qualified_name
            # the root may sit inside the package (`click/` indexed on its own): allow extra leading parts
            if full == dotted or full.endswith("." + dotted) or dotted.endswith("." + full):
                out.append(row)
        return out

    def suggestions(self, name: str, *, limit: int = 5) -> list[str]:
        """Close symbol names, each with where it is defined: "`createSalesOrder` (src/orders.py:41)"."""
        store = self.store
        last = name.replace("::", ".").rsplit(".", 1)[-1]
        names = store.symbol_names()
        lowered = {n.lower(): n for n in names}
        picks: list[str] = []
        if last.lower() in lowered and lowered[last.lower()] != last:
            picks.append(lowered[last.lower()])
        picks += difflib.get_close_matches(last, names, n=limit, cutoff=0.6)
        low = last.lower()
        if len(picks) < limit and len(low) >= 3:
            picks += sorted((n for n in names if low in n.lower()), key=len)[:limit]
        out: list[str] = []
        seen: set[str] = set()
        for pick in picks:
            if pick in seen:
                continue
            seen.add(pick)
            rows = store.symbols_by_name(pick)
            where = f" ({rows[0].definition.path}:{rows[0].definition.name_span.start_line})" if rows else ""
            out.append(f"`{pick}`{where}")
            if len(out) >= limit:
                break
        return out

    @_heals_damage
    def definitions(self, name: str, *, all_repos: bool = False, store: str | None = None) -> Response[Symbol]:
        """Where ``name`` is defined (every definition when ambiguous), from the symbol table.

        Accepts ``createSalesOrder``, ``Order.create`` and ``pkg.module.func``.
        Raises :class:`SymbolNotFoundError` with close matches when nothing matches.
        ``all_repos``: in every repository published to the team store (items are
        :class:`navigator.team.TeamSymbol`, naming repository and commit); ``store``: that
        store's URL instead of the configured one (see :meth:`team`).
        """
        if all_repos:
            from navigator.team import definitions_all_repos

            return definitions_all_repos(self, name, store=store)
        started = time.perf_counter()
        rows = self.resolve(name)
        notes = self._notes()
        if not rows:
            raise SymbolNotFoundError(name, self.suggestions(name), note=_index_caveat(notes))
        items = tuple(to_symbol(r) for r in rows)
        caveat = _index_caveat(notes)
        return Response(
            items=items,
            complete=caveat is None,
            reason=caveat,
            source="index",
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            notes=notes,
        )

    @_heals_damage
    def symbols(
        self, pattern: str, *, limit: int = 50, kinds: tuple[str, ...] | None = None
    ) -> Response[Symbol]:
        """Symbols whose name matches ``pattern``: exact, prefix, substring, words, then fuzzy; ranked."""
        pattern = checks.pattern(pattern)
        limit = checks.count(limit, what="limit")
        kinds = tuple(checks.strings(kinds, what="kinds", each="a kind such as `function`") or ()) or None
        started = time.perf_counter()
        store = self._fresh()
        pat = pattern.strip()
        low = pat.lower()
        from storage.tokens import fts_query, split_identifier

        pat_words = [w for part in pat.split() for w in split_identifier(part)]

        candidates: dict[int, SymbolRow] = {}
        for row in store.symbols_like(pat, limit=5000):
            candidates[row.id] = row
        for row in store.symbols_fts(fts_query(pat, mode="AND"), limit=500):
            candidates.setdefault(row.id, row)
        if len(candidates) < limit:
            names = store.symbol_names()
            close = set(difflib.get_close_matches(pat, names, n=limit, cutoff=0.6))
            close |= {n for n in names if _subsequence(low, n.lower())}
            for n in list(close)[:2000]:
                for row in store.symbols_by_name(n):
                    candidates.setdefault(row.id, row)

        def rank(row: SymbolRow) -> tuple[Any, ...]:
            d = row.definition
            name, qn = d.name, d.qualified_name
            if name == pat or qn == pat:
                tier = 0
            elif name.lower() == low or qn.lower() == low:
                tier = 1
            elif name.lower().startswith(low):
                tier = 2
            elif low in name.lower():
                tier = 3
            elif low in qn.lower():
                tier = 4
            elif _subsequence(low, name.lower()):
                tier = 6
            else:
                tier = 5  # word match through FTS or a close spelling
            words = set(split_identifier(qn.replace(".", "_")))
            covered = sum(1 for w in pat_words if any(x.startswith(w) for x in words))
            return (
                tier,
                -covered,
                _KIND_WEIGHT.get(d.kind, 5),
                len(name),
                d.path.count("/"),
                d.path,
                d.span.start_line,
            )

        ranked = sorted(candidates.values(), key=rank)
        if kinds:
            ranked = [r for r in ranked if r.definition.kind in kinds]
        complete = len(ranked) <= limit
        items = tuple(to_symbol(r) for r in ranked[:limit])
        return Response(
            items=items,
            complete=complete,
            reason=None if complete else f"limit reached: {len(ranked)} matches, showing {limit}",
            source="index",
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            notes=self._notes(),
        )

    def _notes(self) -> tuple[str, ...]:
        """What an answer must say about the index it came from: unfinished, stale, rebuilt."""
        notes = [n for n in (self.stale_note, self.rebuilt_note) if n]
        self.rebuilt_note = None  # said once, in the next answer
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

    def relpath(self, path: str | os.PathLike[str]) -> str:
        """A root-relative POSIX path for a path given absolute or relative to cwd or root."""
        p = Path(checks.path(path))
        try:
            if p.is_absolute():
                return confine(self.root, p)  # `..` and symlinks resolved: the one check
            refused: list[tuple[Path, OutsideRootError]] = []
            for cand in (Path.cwd() / p, self.root / p):
                try:
                    rel = confine(self.root, cand, given_as=path)
                except OutsideRootError as exc:
                    refused.append((cand, exc))
                    continue
                if (self.root / rel).exists():
                    return rel
            for cand, refusal in refused:
                if cand == self.root / p or cand.exists():  # escapes from the root, or names a real file
                    raise refusal
        except OSError as exc:  # e.g. a name longer than the file system allows
            raise FileNotInIndexError(f"no file `{shorten(path)}` under {self.root}: {exc.strerror}") from None
        raise FileNotInIndexError(
            f"no file `{shorten(path)}` under {self.root}; check the path (relative to the root or cwd)"
        )

    # -- search ----------------------------------------------------------------------------

    def _searcher(self) -> SemanticSearch:
        """This thread's search service; all threads share one model and one vector index."""
        from navigator.search import SemanticSearch

        store = self.store
        searcher: SemanticSearch | None = getattr(self._local, "searcher", None)
        if searcher is None or searcher.store is not store:
            with self._lock:
                first: SemanticSearch | None = getattr(self, "_first_searcher", None)
                searcher = SemanticSearch(
                    store, model=self.config.search.model, embedder=self._embedder, share_with=first
                )
                if first is None:
                    self._first_searcher = searcher
            self._local.searcher = searcher
        return searcher

    @_heals_damage
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
        """Search code by meaning and by name ("where do we retry the ERP call", ``createSalesOrder``).

        BM25, vectors, symbol names and paths, fused by reciprocal rank fusion. A search never
        embeds: while chunks lack vectors it answers from the other legs and says
        ``complete=False`` with the coverage; :meth:`embed` (``nav index --embed``) fills them in.
        Issue text works as a query: the names, paths and traceback frames it mentions lead.

        ``view="files"``: the best chunk of each file first (where to look); ``view="code"``:
        the definitions to read or edit, ranked on their own (two functions of one file can
        both lead). Every leg takes at least ``k`` candidates.

        ``all_repos``: search every repository published to the team store instead (items are
        :class:`navigator.team.TeamHit`, naming repository and commit); when the store cannot
        answer, this checkout's index answers with ``complete=False`` and a note. ``store``: that
        store's URL instead of the configured one (see :meth:`team`).
        """
        text = checks.text(text)
        k = checks.count(k, what="k")
        paths = checks.strings(paths, what="paths", each="a folder or glob")
        languages = checks.strings(languages, what="languages", each="a language such as `python`")
        if view not in ("files", "code"):
            raise UsageError(f"view must be `files` or `code`, got {shorten(str(view))!r}")
        if all_repos:
            from navigator.team import search_all_repos

            return search_all_repos(self, text, k=k, languages=languages, store=store)
        self._fresh()
        resp = self._searcher().search(
            text,
            k=k,
            paths=[p.strip().removeprefix("./") for p in paths] if paths else None,
            languages=list(languages) if languages else None,
            view=view,
        )
        notes = self._notes()
        if notes:
            resp = dataclasses.replace(resp, notes=(*resp.notes, *notes))
        return resp

    def team(self, url: str | None = None) -> TeamStore:
        """The team store (``url``, else ``store_url``, ``NAV_STORE`` or ``[store] url``) seen from
        this checkout; one connection per store, kept open. The CLI passes the URL its own
        environment names, so a daemon started from another shell asks the store the caller means."""
        from navigator.team import TeamStore, require_store_url

        if url is not None and not isinstance(url, str):
            raise UsageError(f"store must be a postgresql:// URL, got {shorten(repr(url))}")
        key = url.strip() if url and url.strip() else require_store_url(self.config, self.store_url).strip()
        with self._lock:
            team = self._teams.pop(key, None)
            if team is None:
                team = TeamStore(key, nav=self)
                if len(self._teams) >= MAX_TEAM_STORES:  # the least recently asked store's connection goes
                    self._teams.pop(next(iter(self._teams))).close()
            self._teams[key] = team  # most recently asked last
            return team

    @_heals_damage
    def embed(
        self, *, progress: ProgressFn | None = None, budget_s: float | None = None, batch_size: int = 64
    ) -> SyncReport:
        """Embed the chunks that have no vector yet (cached by content: unchanged chunks cost nothing).

        ``budget_s`` is checked between batches of ``batch_size`` chunks: smaller batches stop
        sooner (the daemon's background slices use small ones, to give the core back quickly)."""
        return self._searcher().sync(budget_s=budget_s, progress=progress, batch_size=batch_size)

    def model_loaded(self) -> bool:
        """Whether the embedding model is in memory now (the daemon's budget asks)."""
        first: SemanticSearch | None = getattr(self, "_first_searcher", None)
        return first is not None and first.model_loaded

    def release_model(self) -> bool:
        """Give the embedding model's memory back (it loads again when a search or :meth:`embed`
        needs it); True when one was loaded. The daemon calls it when idle."""
        first: SemanticSearch | None = getattr(self, "_first_searcher", None)
        return first.release_model() if first is not None else False

    @_heals_damage
    def query(self, text: str, *, limit: int = 20, deadline_s: float = 10.0) -> Response[Found]:
        """Answer anything: a name goes to the exact leg, a ``path:line:col`` to the position,
        prose to search, and prose naming identifiers to both, fused by RRF (k = 60).

        The response's ``source`` is ``router:<route>`` and its first note says why.
        """
        from navigator.find import run_query

        text = checks.text(text, what="a query")
        checks.position(text.strip(), prose=True)
        limit = checks.count(limit, what="limit")
        deadline_s = checks.seconds(deadline_s)
        with self._refreshed_once():
            return run_query(self, text, limit=limit, deadline_s=deadline_s)

    @contextmanager
    def _refreshed_once(self) -> Iterator[None]:
        """A compound call (a routed query runs several verbs) brings the index up to date once."""
        if getattr(self._local, "refreshed_for_call", False):
            yield
            return
        self._fresh()
        self._local.refreshed_for_call = True
        try:
            yield
        finally:
            self._local.refreshed_for_call = False

    @_heals_damage
    def repo_map(self, *, tokens: int = 1024) -> RepoMap:
        """The repository's most important symbols' signatures (PageRank over references), within ``tokens``."""
        tokens = checks.count(tokens, what="tokens", low=16, high=1_000_000)
        return _repo_map(self, tokens)

    # -- exact navigation (language servers; navigator/exact.py) ----------------------------

    @property
    def exact(self) -> ExactNavigator:
        """The exact leg: warm language servers for this root (started lazily)."""
        with self._lock:
            exact: ExactNavigator | None = getattr(self, "_exact", None)
            if exact is None:
                from navigator.exact import ExactNavigator, NavigatorTable

                exact = ExactNavigator(self.root, NavigatorTable(self))
                self._exact = exact
            return exact

    @_heals_damage
    def definition(self, target: str, *, deadline_s: float = 30.0) -> Response[Hit]:
        """Where ``target`` (a name or ``path:line:col``) is defined, as its language server says."""
        target, deadline_s, _ = _exact_args(target, deadline_s, None)
        return self.exact.definition(target, deadline_s=deadline_s)

    @_heals_damage
    def references(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        """Every reference to ``target`` (name or ``path:line:col``), definitions marked."""
        target, deadline_s, limit = _exact_args(target, deadline_s, limit)
        return self.exact.references(target, deadline_s=deadline_s, limit=limit)

    @_heals_damage
    def callers(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        """Call sites of ``target`` (LSP incoming calls)."""
        target, deadline_s, limit = _exact_args(target, deadline_s, limit)
        return self.exact.callers(target, deadline_s=deadline_s, limit=limit)

    @_heals_damage
    def callees(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        """What ``target`` calls (LSP outgoing calls), at each callee's definition."""
        target, deadline_s, limit = _exact_args(target, deadline_s, limit)
        return self.exact.callees(target, deadline_s=deadline_s, limit=limit)

    @_heals_damage
    def implementations(
        self, target: str, *, deadline_s: float = 30.0, limit: int | None = None
    ) -> Response[Hit]:
        """Implementations of an interface, abstract method or base class."""
        target, deadline_s, limit = _exact_args(target, deadline_s, limit)
        return self.exact.implementations(target, deadline_s=deadline_s, limit=limit)

    @_heals_damage
    def hover(self, target: str, *, deadline_s: float = 30.0) -> Response[HoverInfo]:
        """The language server's hover text (signature, type, docs) for ``target``."""
        target, deadline_s, _ = _exact_args(target, deadline_s, None)
        return self.exact.hover(target, deadline_s=deadline_s)

    def files_changed(self, paths: Sequence[str] | None = None) -> None:
        """Tell the warm language servers that files changed (``paths`` relative to the root;
        None: any may have). The daemon calls it after each re-index; with ``refresh`` off,
        the servers then trust these calls instead of walking the tree before each request."""
        exact: ExactNavigator | None = getattr(self, "_exact", None)
        if exact is not None:
            exact.files_changed(paths)

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
        """Lines matching ``pattern`` (a Rust regular expression, or a literal with ``fixed``),
        equal to ``rg``'s at the root with the same options (``-F -i -w -l -c -g -t -B -A -m``),
        served from the trigram index ``.nav/grep.db`` (see :mod:`navigator.grep`). ``paths``
        narrow the search (relative to the root or cwd); ``limit`` bounds the matching lines;
        ``symbols`` fills each hit's enclosing symbol from the index, when there is one."""
        from navigator import grep as engine

        rel = tuple(r for r in (self.relpath(p) for p in paths) if r not in ("", "."))
        options = engine.GrepOptions(
            pattern, fixed=fixed, ignore_case=ignore_case, word=word, files_only=files_only, count=count,
            globs=tuple(globs), types=tuple(types), paths=rel, before=before, after=after,
            max_count=max_count, limit=limit, deadline_s=deadline_s,
        )  # fmt: skip
        walk = self.refresh or not getattr(self, "_grep_synced", False)  # once a process at least
        self._grep_synced = True
        answer = engine.fresh_search(self.root, self._grep_index(), options, walk=walk, lock_wait_s=self.lock_wait_s)
        if symbols and answer.items and self.index_path.exists():
            answer = dataclasses.replace(answer, items=self._with_symbols(answer.items))
        return answer

    def _with_symbols(self, hits: tuple[GrepHit, ...]) -> tuple[GrepHit, ...]:
        """Each hit with the qualified name of the innermost symbol around its line (as indexed)."""
        spans: dict[str, list[tuple[int, int, str]]] = {}
        out = []
        for hit in hits:
            if hit.path not in spans:
                rows = self.store.symbols_in_file(hit.path) if len(spans) < 500 else []
                spans[hit.path] = sorted(
                    ((r.definition.span.start_line, r.definition.span.end_line, r.definition.qualified_name) for r in rows),
                    key=lambda t: t[1] - t[0],
                )
            inner = next((q for a, b, q in spans[hit.path] if a <= hit.line <= b), None) if hit.line else None
            out.append(dataclasses.replace(hit, symbol=inner) if inner else hit)
        return tuple(out)

    def grep_changed(self, paths: Sequence[str] | None = None) -> None:
        """Bring an existing grep index up to date after a change (root-relative ``paths``;
        None: any file may have changed). The daemon calls it after each re-index."""
        from navigator import grep as engine

        if not (self.nav_dir / engine.GREP_DB).exists():
            return
        import sqlite3

        try:
            self._grep_index().update(only=paths)
        except (NavError, OSError, sqlite3.Error) as exc:  # the next grep walks the tree instead
            log.warning("grep index update failed (the next grep re-walks the tree): %s", exc)
            self._grep_synced = False

    def _grep_index(self) -> Any:
        index = getattr(self._local, "grep", None)
        if index is None:
            from navigator.grep import GrepIndex

            index = self._local.grep = GrepIndex(self.root, self.nav_dir)
            with self._lock:
                self.__dict__.setdefault("_greps", []).append(index)  # closed by close()
        return index

    def doctor(self) -> Response[Availability]:
        """Per language: server found?, version, and the command that installs what is missing."""
        from navigator.exact import doctor

        return doctor()

    @_heals_damage
    def outline(self, path: str | os.PathLike[str]) -> Response[OutlineEntry]:
        """The symbols of one file, in source order, with their nesting depth."""
        started = time.perf_counter()
        rel = self.relpath(path)
        store = self._fresh()
        if store.file_row(rel) is None:
            raise FileNotInIndexError(
                f"`{rel}` is not indexed (ignored, binary or larger than the size limit); see `nav status`"
            )
        rows = sorted(
            store.symbols_in_file(rel),
            key=lambda r: (r.definition.span.start_line, r.definition.span.start_col),
        )
        entries = []
        for row in rows:
            cont = row.definition.container
            depth = 0 if not cont else cont.count(".") + 1
            entries.append(OutlineEntry(symbol=to_symbol(row), depth=depth))
        return Response(
            items=tuple(entries),
            source="index",
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            notes=self._notes(),
        )

    @_heals_damage
    def show(self, target: str, *, max_lines: int = 200, limit: int = 5) -> Response[Source]:
        """The source of a definition: ``target`` is a name, a qualified name (every definition
        when ambiguous, at most ``limit``) or ``path:line`` (the innermost definition around that
        line, else the lines around it). Each is trimmed to ``max_lines``: its head and its last
        lines, with a marker naming the lines cut; the answer is then not complete and says how
        to see the rest."""
        from navigator.show import WINDOW_LINES, innermost, line_count, trim

        started = time.perf_counter()
        target = checks.target(target)
        max_lines = checks.count(max_lines, what="max_lines", high=10_000)
        limit = checks.count(limit, what="limit", high=100)
        store = self._fresh()
        spans: list[tuple[str, int, int, SymbolRow | None]] = []  # path, first, last, definition
        more = 0
        pos = _PATH_LINE.match(target)
        if pos is not None and ("/" in pos["path"] or "." in pos["path"] or (self.root / pos["path"]).is_file()):
            rel = self.relpath(pos["path"])
            line = int(pos["line"])
            text = read_text_inside(self.root, rel)
            if text is not None and line > line_count(text):
                raise UsageError(
                    f"line {line} is past the end of `{shorten(rel)}` ({line_count(text)} lines); e.g. `{shorten(rel)}:1`"
                )
            rows = store.symbols_in_file(rel)
            spans_in = [(r.definition.span.start_line, r.definition.span.end_line, i) for i, r in enumerate(rows)]
            at = innermost(spans_in, line)
            if at is not None:
                d = rows[at].definition
                spans.append((rel, d.span.start_line, d.span.end_line, rows[at]))
            else:
                spans.append((rel, max(1, line - WINDOW_LINES // 2), line + WINDOW_LINES // 2, None))
        else:
            rows = self._resolve_in(store, target)
            if not rows:
                raise SymbolNotFoundError(target, self.suggestions(target), note=_index_caveat(self._notes()))
            more = max(0, len(rows) - limit)
            spans += [(r.definition.path, r.definition.span.start_line, r.definition.span.end_line, r) for r in rows[:limit]]
        items: list[Source] = []
        missing: list[str] = []
        cut = 0
        for rel, first, last, row in spans:
            text = read_text_inside(self.root, rel)
            if text is None:
                missing.append(rel)
                continue
            lines = text.split("\n")
            last = min(last, len(lines))
            piece = trim([ln.rstrip("\r") for ln in lines[first - 1 : last]], first, max_lines)
            cut += piece.cut is not None
            defn = row.definition if row is not None else None
            items.append(
                Source(
                    path=rel,
                    start_line=first,
                    end_line=last,
                    text=piece.text,
                    symbol=defn.qualified_name if defn else None,
                    kind=defn.kind if defn else None,
                    signature=defn.signature if defn else None,
                    cut=piece.cut,
                )
            )
        reasons = []
        if cut:
            reasons.append(f"{cut} of {len(items)} trimmed to {max_lines} lines: ask with a larger max_lines, or `path:line` inside the cut")
        if more:
            reasons.append(f"{more} more definitions of `{shorten(target)}`: ask with a larger limit or a qualified name")
        if missing:
            reasons.append(f"cannot read {', '.join(sorted(set(missing)))[:300]}")
        notes = self._notes()
        caveat = _index_caveat(notes)
        if caveat:
            reasons.append(caveat)
        return Response(
            items=tuple(items),
            complete=not reasons,
            reason="; ".join(reasons) or None,
            source="index",
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            notes=notes,
        )


_PATH_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?::\d+)?$")
"""``path:line`` or ``path:line:col`` (checked by :func:`navigator.checks.target`)."""


def _exact_args(target: object, deadline_s: object, limit: object) -> tuple[str, float, int | None]:
    """The exact verbs' common input, checked: a name or 1-based ``path:line:col``, a finite
    deadline, an optional limit."""
    return checks.target(target), checks.seconds(deadline_s), checks.optional_count(limit, what="limit")


def _repo_map(nav: Navigator, tokens: int) -> RepoMap:
    from navigator.repomap import Definition, rank_definitions, render

    started = time.perf_counter()
    store = nav._fresh()
    rows = store.symbols(exclude_kinds=("field",), limit=10_000_000)
    by_key = {r.id: r for r in rows}
    defs = [
        Definition(
            key=r.id,
            name=r.definition.name,
            path=r.definition.path,
            line=r.definition.name_span.start_line,
            signature=r.definition.signature,
            kind=r.definition.kind,
            qualified_name=r.definition.qualified_name,
            container=r.definition.container,
        )
        for r in rows
    ]
    counts = store.ref_counts_by_file()
    ranked = rank_definitions(defs, counts)
    text, chosen = render(ranked, tokens=tokens)
    scores = {d.key: s for s, d in ranked}
    entries = tuple(MapEntry(symbol=to_symbol(by_key[d.key]), score=round(scores[d.key], 6)) for d in chosen)
    return RepoMap(
        text=text,
        entries=entries,
        tokens=tokens,
        total_symbols=len(defs),
        elapsed_ms=(time.perf_counter() - started) * 1e3,
    )


def _subsequence(needle: str, hay: str) -> bool:
    if len(needle) < 3:
        return False
    it = iter(hay)
    return all(ch in it for ch in needle)


def _chunk_ok(text: str, content_hash: str) -> bool:
    """Whether a chunk kept from a damaged index still has the text its hash was made from."""
    from semantic.parse import chunk_hash

    return isinstance(text, str) and chunk_hash(text) == content_hash


def _cause(exc: BaseException) -> str:
    """The SQLite words behind a storage error (``database disk image is malformed``)."""
    cause = exc.__cause__
    return str(cause) if cause is not None else str(exc)


def _index_caveat(notes: Sequence[str]) -> str | None:
    """The note, if any, that makes an answer from the index possibly incomplete."""
    for note in notes:
        if note.startswith(("the index is unfinished", "the index is being updated", "the last index update")):
            return note
    return None
