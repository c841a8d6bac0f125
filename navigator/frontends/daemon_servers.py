"""Which language servers a daemon starts before the first query, and what runs now.

A cold server costs the first exact query its start (jdtls needs ~1 min on a mid-size Java
repository, more than a query's deadline), so a daemon warms the servers of the languages its
root is mostly made of (:func:`languages_to_warm`): at once from an existing index, before the
rest of nav is imported (:func:`early_pool`), then after each first index
(:class:`ServerWarmup`). A language with a few files (test fixtures) starts on first use.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navigator.errors import NavError

if TYPE_CHECKING:
    from navigator.public import ServerPool

log = logging.getLogger("nav.daemon")

WARMABLE = frozenset({"python", "typescript", "tsx", "javascript", "go", "c", "cpp", "java"})
WARM_SHARE = 0.2
"""Warm-up starts the server of the root's main language (the most lines of code) and of any
other holding at least this share of the code's files or lines; the rest start on first use."""

Sizes = dict[str, tuple[int, int]]
"""Per language of an index: (files, lines)."""


class ServerWarmup:
    """The servers one daemon warms in ``pool`` for ``root``, and what it says of each."""

    def __init__(self, root: Path, pool: ServerPool, *, stopping: threading.Event) -> None:
        self.root = root
        self.pool = pool
        self._stopping = stopping
        self.servers: dict[str, str] = {}
        """Language -> "starting" / "ready" / "not available", for the servers warmed at start
        (what runs now: :meth:`states`)."""
        self._code_servers: dict[str, str] = {}
        """The index's languages that have a server, most files first: language -> server key."""

    def warm(self, sizes_of: Callable[[], Sizes]) -> None:
        """Start the servers of the languages the root is mostly made of, now and side by side.
        Returns at once; each server is warmed in a thread."""
        sizes = self.note_languages(sizes_of)
        if sizes is None:
            return
        for language in languages_to_warm(sizes):
            if self._stopping.is_set() or self.servers.get(language) in ("starting", "ready"):
                continue
            self.servers[language] = "starting"
            threading.Thread(
                target=self._warm_one, args=(language,), name=f"nav-warm-{language}", daemon=True
            ).start()

    def note_languages(self, sizes_of: Callable[[], Sizes]) -> Sizes | None:
        """Read the index's languages (``sizes_of()``) and remember those with a server, for
        :meth:`states`; None when the index cannot be read."""
        from navigator.public import server_key

        try:
            sizes = sizes_of()
        except NavError as exc:
            log.warning("cannot read the index's languages: %s", exc)
            return None
        by_files = sorted(
            sizes, key=lambda lang: (-sizes[lang][0], lang)
        )  # a server is named by its main language
        self._code_servers = {
            lang: key for lang in by_files if lang in WARMABLE and (key := server_key(lang)) is not None
        }
        return sizes

    def _warm_one(self, language: str) -> None:
        try:
            ready = self.pool.warm(self.root, language, deadline_s=300.0)
        except Exception:  # warming is an optimisation: a failure is logged, queries still work
            log.error("warming the %s server failed: %s", language, traceback.format_exc())
            self.servers[language] = "not available"
            return
        self.servers[language] = "ready" if ready else "not available"
        log.info("%s server %s", language, self.servers[language])

    def states(self) -> dict[str, str]:
        """Per language with a server (one per server: ts, tsx and js share one), what runs now:
        ``running``, ``starting``, ``stopped idle``, ``released`` (the daemon budget, or other
        roots in use), ``crashed``, ``not available: <why>``, or ``not started`` (starts on
        first use)."""
        live = self.pool.states(self.root)
        out: dict[str, str] = {}
        named: set[str] = set()
        for language, key in list(self._code_servers.items()):
            if key in named:
                continue
            named.add(key)
            warmed = next(
                (lang for lang, k in self._code_servers.items() if k == key and lang in self.servers), None
            )
            out[warmed or language] = live.get(key) or (
                "not available" if self.servers.get(warmed or "") == "not available" else "not started"
            )
        for key, state in live.items():
            if key not in named:
                out[key] = state
        return out


def languages_to_warm(sizes: Sizes) -> list[str]:
    """Which languages' servers a daemon starts before the first query, from the index's
    (files, lines) per language: the main language (most lines among languages with a server),
    and any other server's languages holding at least :data:`WARM_SHARE` of those files or
    lines. One language per server (ts, tsx and js share one), the one with the most files."""
    from navigator.public import server_key

    groups: dict[str, list[Any]] = {}  # server key -> [files, lines, language with most files, its files]
    for language, (files, lines) in sizes.items():
        key = server_key(language) if language in WARMABLE and files > 0 else None
        if key is None:
            continue
        g = groups.setdefault(key, [0, 0, language, files])
        g[0] += files
        g[1] += lines
        if files > g[3] or (files == g[3] and language < g[2]):
            g[2], g[3] = language, files
    if not groups:
        return []
    total_files = sum(g[0] for g in groups.values())
    total_lines = sum(g[1] for g in groups.values())
    main = max(groups, key=lambda k: (groups[k][1], groups[k][0], k))
    out = [groups[main][2]]
    for key, (files, lines, language, _) in sorted(groups.items(), key=lambda kv: (-kv[1][1], kv[0])):
        if key != main and (
            files >= WARM_SHARE * total_files or (total_lines and lines >= WARM_SHARE * total_lines)
        ):
            out.append(language)
    return out


@dataclass(frozen=True)
class EarlyStart:
    """The pool :func:`early_pool` made and the threads launching its first servers."""

    pool: ServerPool
    threads: tuple[threading.Thread, ...]

    def join(self, timeout_s: float) -> list[str]:
        """Wait (bounded) for the launching threads; the names of those still at it. Once the pool
        is closed, a thread still launching kills its server when it hands it over."""
        deadline = time.monotonic() + timeout_s
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        return [t.name for t in self.threads if t.is_alive()]


def early_pool(
    root: Path,
    index_db: Path,
    *,
    server_idle_s: float | None = None,
    expect: tuple[str, str] | None = None,
) -> EarlyStart | None:
    """Start the servers of the languages an existing index holds before the rest of nav is
    imported (the critical path of a cold first query: ~0.5-1 s of imports), multilspy
    included: the processes are launched first (:func:`lsp.launch.prelaunch`) and the pool,
    imported after, adopts them. Returns the pool and the launching threads (a stopping daemon
    waits for them: a server launched as the process exits would be left running), or None
    when there is no index to read yet (the daemon warms after its first run). ``expect``: the question (method, target) of the
    command that starts this daemon: the files it starts at are opened at launch by the
    servers that load a project only then (a hint read from the index as it is: the answer
    is still the server's, once asked)."""
    from navigator.errors import StorageError
    from navigator.public import language_sizes, server_key

    if not index_db.is_file():
        return None
    try:
        sizes = language_sizes(index_db, timeout_s=1.0)
    except StorageError as exc:
        log.warning("cannot read languages to warm servers early: %s", exc)
        return None
    warm = languages_to_warm(sizes)
    if not warm:
        return None
    from navigator.public import prelaunch  # the standard library only: multilspy is not imported yet

    first = _expected_files(root, index_db, expect)

    made = threading.Event()
    box: list[ServerPool] = []

    def launch_then_warm(language: str) -> None:
        # each server's preparation (a compile_commands.json, a Java project...) and launch in
        # its own thread: one language's does not hold back another's, nor the imports below
        launched = prelaunch(root, language, open_first=first.get(server_key(language) or "", ()))
        made.wait()
        if not box:  # the pool could not be made (the daemon is failing): leave nothing running
            if launched is not None:
                launched.kill()
            return
        if launched is not None:
            box[0].adopt(launched)
        box[0].warm(root, language, deadline_s=300.0)

    threads = tuple(
        threading.Thread(target=launch_then_warm, args=(language,), name=f"nav-early-{language}", daemon=True)
        for language in warm
    )
    for thread in threads:
        thread.start()
    try:
        from navigator.public import ServerPool  # ~0.5-1 s of imports, while the servers load

        box.append(ServerPool() if server_idle_s is None else ServerPool(idle_timeout_s=server_idle_s))
    finally:
        made.set()
    return EarlyStart(box[0], threads)


def _expected_files(root: Path, index_db: Path, expect: tuple[str, str] | None) -> dict[str, list[str]]:
    """Per server key, the files (absolute) defining the target of an expected question."""
    if expect is None or expect[0] not in ASKS_A_SERVER or not expect[1].strip():
        return {}
    from navigator.public import server_key, target_files

    out: dict[str, list[str]] = {}
    for path, language in target_files(index_db, expect[1]):
        full = (root / path).resolve()
        key = server_key(language)
        if key is not None and full.is_relative_to(root) and full.is_file():
            out.setdefault(key, []).append(str(full))
    return out


ASKS_A_SERVER = frozenset(
    {"definition", "references", "callers", "callees", "implementations", "hover", "show"}
)
"""The daemon's methods whose answer comes from a language server at the target's definition."""


def open_asked_files(pool: ServerPool, root: Path, index_db: Path, method: str, params: Any) -> int:
    """While the daemon's first index run is under way (questions wait for it), give the files
    defining a question's target to the servers that start loading a project only when one
    of its files is opened (tsserver): their load, the longest part of a cold answer, starts
    now. Read from the index as it was (a hint; the answer still waits for the fresh index).
    Returns how many files were handed over."""
    if method not in ASKS_A_SERVER:
        return 0
    target: Any = None
    if isinstance(params, dict):
        target = params.get("target")
        if target is None and isinstance(params.get("__args__"), list) and params["__args__"]:
            target = params["__args__"][0]
    elif isinstance(params, list) and params:
        target = params[0]
    if not isinstance(target, str) or not target.strip():
        return 0
    from navigator.public import target_files

    handed = 0
    for path, language in target_files(index_db, target):
        full = (root / path).resolve()
        if full.is_relative_to(root) and full.is_file():
            pool.open_early(root, language, str(full))
            handed += 1
    return handed
