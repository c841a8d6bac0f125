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

``Navigator`` checks each verb's input, then composes the parts that answer it: the index's
connections, updates and recovery (:mod:`navigator.index_handle`), the per-call notes
(:mod:`navigator.calls`), the symbol table's ranking (:mod:`navigator.symbol_table`,
:mod:`navigator.show`), search (:mod:`navigator.search`), grep (:mod:`navigator.grep`), the
language servers (:mod:`navigator.exact`) and the team store (:mod:`navigator.team`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from navigator import checks, symbol_table
from navigator.calls import Calls
from navigator.config import Config, load_config
from navigator.confine import root_relative
from navigator.index_handle import IndexHandle, heals_damage
from navigator.indexer import ProgressFn, stale_count, unparsed_note
from navigator.results import (
    Found,
    GrepHit,
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
from navigator.walk import WalkOptions
from storage.db import Store, SymbolRow

if TYPE_CHECKING:
    from lsp.registry import Availability
    from navigator.exact import ExactNavigator
    from navigator.results import Hit
    from navigator.search import SemanticSearch, SyncReport
    from navigator.team import TeamStore
    from navigator.verbs import Verbs
    from semantic.embed import Embedder
from storage.errors import (
    NavError,
    SymbolNotFoundError,
    UsageError,
    shorten,
)

NAV_DIR = ".nav"
MAX_TEAM_STORES = 4
"""Team store connections one Navigator keeps open (a daemon serving callers that name several)."""
log = logging.getLogger(__name__)


def _check_name(name: object) -> str:
    return checks.name(name)


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
            raise UsageError(
                f"root `{shorten(os.fspath(root))}` does not exist; pass the path of a repository"
            )
        if not root_path.is_dir():
            raise UsageError(
                f"root `{shorten(os.fspath(root))}` is not a directory; pass the repository's top folder"
            )
        self.root = root_path.resolve()
        self.nav_dir = Path(index_dir).resolve() if index_dir else self.root / NAV_DIR
        self.index_path = self.nav_dir / "index.db"
        self.config = config if config is not None else load_config(self.root)
        self.refresh = refresh
        self._calls = Calls()
        """Each thread's verb call in progress: its notes travel in its answer."""
        self._handle = IndexHandle(self.root, self.nav_dir, self.config, self._calls, embedder=embedder)
        """The index's connections, updates and recovery (:mod:`navigator.index_handle`)."""
        self._lock = self._handle.lock
        self._exact: ExactNavigator | None = None
        self.lock_wait_s = 2.0
        """How long a query waits for another process's index run before answering without it."""
        self._grep_synced = False
        """A grep walked the tree once in this process (with refresh off, later ones trust the index)."""
        self.store_url = store_url
        self._teams: dict[str, TeamStore] = {}
        """Open team stores by URL, least recently asked first."""
        self.watched_changes: Callable[[], int | None] | None = None
        """Set by a process whose file watcher keeps the index fresh (the daemon): how many files
        it saw change that are not indexed yet (None: it does not know). ``status`` then counts
        stale files from it instead of walking the tree."""
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
        return self._handle.store

    @property
    def index_error(self) -> str | None:
        """Why the last index run failed (disk full, damaged, read-only), until one succeeds."""
        return self._handle.index_error

    def close(self) -> None:
        with self._lock:
            exact = self._exact
            if exact is not None:
                exact.close()
                self._exact = None
            teams = self._teams
            for team in teams.values():
                team.close()
            teams.clear()
            self._handle.close()

    def __enter__(self) -> Navigator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def walk_options(self) -> WalkOptions:
        return self._handle.walk_options

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
        with self._calls.call() as call:
            report = self._handle.index(progress=progress, workers=workers, only=only)
            rebuilt = self._calls.rebuilt_notes(call)
        return dataclasses.replace(report, notes=(*report.notes, *rebuilt)) if rebuilt else report

    def _fresh(self) -> Store:
        """The store, brought up to date first unless refresh is off; the call's notes say
        when it could not be (:meth:`navigator.index_handle.IndexHandle.fresh`)."""
        return self._handle.fresh(refresh=self.refresh, lock_wait_s=self.lock_wait_s)

    def _notes(self, *, stale: bool = True) -> tuple[str, ...]:
        """What this call's answer must say about the index it came from: stale, rebuilt,
        unfinished (``stale=False``: not whether it was brought up to date)."""
        return self._handle.notes(stale=stale)

    @heals_damage
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
        notes += self._notes(stale=False)
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
            stale_files=self._stale_files(store) if stats.files else 0,
            notes=tuple(notes),
            history_commits=stats.history_commits,
            history_head=stats.history_head,
        )

    def _stale_files(self, store: Store) -> int:
        watched = self.watched_changes() if self.watched_changes is not None and not self.refresh else None
        return watched if watched is not None else stale_count(self.root, store, self.walk_options)

    # -- symbol table ----------------------------------------------------------------------

    def resolve(self, name: str) -> list[SymbolRow]:
        """Definitions a name can mean: exact name, qualified suffix, or module-qualified path."""
        name = _check_name(name)
        store = self._fresh()
        return symbol_table.resolve(store, name)

    def suggestions(self, name: str, *, limit: int = 5) -> list[str]:
        """Close symbol names, each with where it is defined: "`createSalesOrder` (src/orders.py:41)"."""
        return symbol_table.suggestions(self.store, name, limit=limit)

    @heals_damage
    def definitions(
        self, name: str, *, all_repos: bool = False, store: str | None = None
    ) -> Response[Symbol]:
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
        items = tuple(symbol_table.to_symbol(r) for r in rows)
        caveat = _index_caveat(notes)
        return Response(
            items=items,
            complete=caveat is None,
            reason=caveat,
            source="index",
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            notes=notes,
        )

    @heals_damage
    def symbols(
        self, pattern: str, *, limit: int = 50, kinds: tuple[str, ...] | None = None
    ) -> Response[Symbol]:
        """Symbols whose name matches ``pattern``: exact, prefix, substring, words, then fuzzy; ranked."""
        pattern = checks.pattern(pattern)
        limit = checks.count(limit, what="limit")
        kinds = tuple(checks.strings(kinds, what="kinds", each="a kind such as `function`") or ()) or None
        started = time.perf_counter()
        store = self._fresh()
        ranked = symbol_table.ranked_symbols(store, pattern, limit=limit)
        if kinds:
            ranked = [r for r in ranked if r.definition.kind in kinds]
        complete = len(ranked) <= limit
        items = tuple(symbol_table.to_symbol(r) for r in ranked[:limit])
        return Response(
            items=items,
            complete=complete,
            reason=None if complete else f"limit reached: {len(ranked)} matches, showing {limit}",
            source="index",
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            notes=self._notes(),
        )

    def unfinished_note(self) -> str | None:
        """Says so when the index was never completed (a killed first run) or is being built."""
        return self._handle.unfinished_note()

    def relpath(self, path: str | os.PathLike[str]) -> str:
        """A root-relative POSIX path for a path given absolute or relative to cwd or root."""
        return root_relative(self.root, checks.path(path))

    # -- search ----------------------------------------------------------------------------

    def _searcher(self) -> SemanticSearch:
        """This thread's search service; all threads share one model and one vector index."""
        return self._handle.searcher()

    @heals_damage
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

    @heals_damage
    def embed(
        self, *, progress: ProgressFn | None = None, budget_s: float | None = None, batch_size: int = 64
    ) -> SyncReport:
        """Embed the chunks that have no vector yet (cached by content: unchanged chunks cost nothing).

        ``budget_s`` is checked between batches of ``batch_size`` chunks: smaller batches stop
        sooner (the daemon's background slices use small ones, to give the core back quickly)."""
        return self._searcher().sync(budget_s=budget_s, progress=progress, batch_size=batch_size)

    def model_loaded(self) -> bool:
        """Whether the embedding model is in memory now (the daemon's budget asks)."""
        return self._handle.model_loaded()

    def embed_rate(self) -> float | None:
        """Chunks per second the embedding model has run at in this process (None before it
        has run twice): how soon the missing vectors will be there."""
        return self._handle.embed_rate()

    def embed_runtime(self) -> str | None:
        """The runtime the embedding model runs on in this process (``onnx-int8`` or ``torch`` for
        the default model, chosen by what this CPU measured; None before a search or embedding
        chose it)."""
        return self._handle.embed_runtime()

    def release_model(self) -> bool:
        """Give the embedding model's memory back (it loads again when a search or :meth:`embed`
        needs it); True when one was loaded. The daemon calls it when idle."""
        return self._handle.release_model()

    @heals_damage
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
        with self._handle.refreshed_once(refresh=self.refresh, lock_wait_s=self.lock_wait_s):
            return run_query(self, text, limit=limit, deadline_s=deadline_s)

    @heals_damage
    def repo_map(self, *, tokens: int = 1024) -> RepoMap:
        """The repository's most important symbols' signatures (PageRank over references), within ``tokens``."""
        tokens = checks.count(tokens, what="tokens", low=16, high=1_000_000)
        started = time.perf_counter()
        return symbol_table.repo_map(self._fresh(), tokens, started=started)

    # -- exact navigation (language servers; navigator/exact.py) ----------------------------

    @property
    def exact(self) -> ExactNavigator:
        """The exact leg: warm language servers for this root (started lazily)."""
        with self._lock:
            exact = self._exact
            if exact is None:
                from navigator.exact import ExactNavigator, NavigatorTable

                exact = ExactNavigator(self.root, NavigatorTable(self))
                self._exact = exact
            return exact

    @heals_damage
    def definition(self, target: str, *, deadline_s: float = 30.0) -> Response[Hit]:
        """Where ``target`` (a name or ``path:line:col``) is defined, as its language server says."""
        target, deadline_s, _ = _exact_args(target, deadline_s, None)
        return self.exact.definition(target, deadline_s=deadline_s)

    @heals_damage
    def references(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        """Every reference to ``target`` (name or ``path:line:col``), definitions marked."""
        target, deadline_s, limit = _exact_args(target, deadline_s, limit)
        return self.exact.references(target, deadline_s=deadline_s, limit=limit)

    @heals_damage
    def callers(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        """Call sites of ``target`` (LSP incoming calls)."""
        target, deadline_s, limit = _exact_args(target, deadline_s, limit)
        return self.exact.callers(target, deadline_s=deadline_s, limit=limit)

    @heals_damage
    def callees(self, target: str, *, deadline_s: float = 30.0, limit: int | None = None) -> Response[Hit]:
        """What ``target`` calls (LSP outgoing calls), at each callee's definition."""
        target, deadline_s, limit = _exact_args(target, deadline_s, limit)
        return self.exact.callees(target, deadline_s=deadline_s, limit=limit)

    @heals_damage
    def implementations(
        self, target: str, *, deadline_s: float = 30.0, limit: int | None = None
    ) -> Response[Hit]:
        """Implementations of an interface, abstract method or base class."""
        target, deadline_s, limit = _exact_args(target, deadline_s, limit)
        return self.exact.implementations(target, deadline_s=deadline_s, limit=limit)

    @heals_damage
    def hover(self, target: str, *, deadline_s: float = 30.0) -> Response[HoverInfo]:
        """The language server's hover text (signature, type, docs) for ``target``."""
        target, deadline_s, _ = _exact_args(target, deadline_s, None)
        return self.exact.hover(target, deadline_s=deadline_s)

    def files_changed(self, paths: Sequence[str] | None = None) -> None:
        """Tell the warm language servers that files changed (``paths`` relative to the root;
        None: any may have). The daemon calls it after each re-index; with ``refresh`` off,
        the servers then trust these calls instead of walking the tree before each request."""
        exact = self._exact
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
        walk = self.refresh or not self._grep_synced  # once a process at least
        self._grep_synced = True
        answer = engine.fresh_search(
            self.root, self._handle.grep_index(), options, walk=walk, lock_wait_s=self.lock_wait_s
        )
        if symbols and answer.items and self.index_path.exists():
            answer = dataclasses.replace(answer, items=symbol_table.with_symbols(self.store, answer.items))
        return answer

    def grep_changed(self, paths: Sequence[str] | None = None) -> None:
        """Bring an existing grep index up to date after a change (root-relative ``paths``;
        None: any file may have changed). The daemon calls it after each re-index."""
        from navigator.grep_index import GREP_DB

        if not (self.nav_dir / GREP_DB).exists():
            return
        import sqlite3

        try:
            self._handle.grep_index().update(only=paths)
        except (NavError, OSError, sqlite3.Error) as exc:  # the next grep walks the tree instead
            log.warning("grep index update failed (the next grep re-walks the tree): %s", exc)
            self._grep_synced = False

    def doctor(self) -> Response[Availability]:
        """Per language: server found?, version, and the command that installs what is missing."""
        from navigator.doctor import doctor

        return doctor()

    @heals_damage
    def outline(self, path: str | os.PathLike[str]) -> Response[OutlineEntry]:
        """The symbols of one file, in source order, with their nesting depth."""
        started = time.perf_counter()
        rel = self.relpath(path)
        entries = symbol_table.outline(self._fresh(), rel)
        return Response(
            items=entries,
            source="index",
            elapsed_ms=(time.perf_counter() - started) * 1e3,
            notes=self._notes(),
        )

    @heals_damage
    def show(self, target: str, *, max_lines: int = 200, limit: int = 5) -> Response[Source]:
        """The source of a definition: ``target`` is a name, a qualified name (every definition
        when ambiguous, at most ``limit``) or ``path:line`` (the innermost definition around that
        line, else the lines around it). Each is trimmed to ``max_lines``: its head and its last
        lines, with a marker naming the lines cut; the answer is then not complete and says how
        to see the rest."""
        from navigator.show import Span, read_sources, span_at

        started = time.perf_counter()
        target = checks.target(target)
        max_lines = checks.count(max_lines, what="max_lines", high=10_000)
        limit = checks.count(limit, what="limit", high=100)
        store = self._fresh()
        more = 0
        pos = _PATH_LINE.match(target)
        if pos is not None and (
            "/" in pos["path"] or "." in pos["path"] or (self.root / pos["path"]).is_file()
        ):
            spans = [span_at(self.root, store, self.relpath(pos["path"]), int(pos["line"]))]
        else:
            rows = symbol_table.resolve(store, target)
            if not rows:
                raise SymbolNotFoundError(target, self.suggestions(target), note=_index_caveat(self._notes()))
            more = max(0, len(rows) - limit)
            spans = [
                Span(
                    r.definition.path, r.definition.span.start_line, r.definition.span.end_line, r.definition
                )
                for r in rows[:limit]
            ]
        read = read_sources(self.root, spans, max_lines)
        items, cut, missing = read.items, read.cut, read.missing
        reasons = []
        if cut:
            reasons.append(
                f"{cut} of {len(items)} trimmed to {max_lines} lines: ask with a larger max_lines, or `path:line` inside the cut"
            )
        if more:
            reasons.append(
                f"{more} more definitions of `{shorten(target)}`: ask with a larger limit or a qualified name"
            )
        if missing:
            reasons.append(f"cannot read {', '.join(sorted(set(missing)))[:300]}")
        notes = self._notes()
        caveat = _index_caveat(notes)
        if caveat:
            reasons.append(caveat)
        return Response(
            items=items,
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


def _index_caveat(notes: Sequence[str]) -> str | None:
    """The note, if any, that makes an answer from the index possibly incomplete."""
    for note in notes:
        if note.startswith(
            ("the index is unfinished", "the index is being updated", "the last index update")
        ):
            return note
    return None


if TYPE_CHECKING:
    _IMPLEMENTS: type[Verbs] = Navigator  # mypy holds Navigator to every verb's signature
