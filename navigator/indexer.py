"""Incremental indexing: walk, hash, parse what changed, write it atomically.

Content hashes decide the work: a file whose size and mtime match the index is not
read; a file whose bytes hash the same is not re-parsed; deleted files lose every
row. Each file's rows are replaced in one transaction (files are grouped into
batches for speed), so a process killed mid-run leaves an index that answers, with
every file either at its old or its new version; the next run completes the work.
The run's state is kept in ``meta`` so ``nav status`` can say a run was cut short.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from navigator.confine import open_inside
from navigator.history import BUDGET_S as HISTORY_BUDGET_S
from navigator.history import QUIET as HISTORY_QUIET
from navigator.history import HistoryReport, index_history
from navigator.paths import ensure_nav_dir, flock_within, open_private
from navigator.results import IndexReport
from navigator.walk import WalkedFile, WalkOptions, looks_binary, walk, walk_paths
from semantic.languages import detect_language
from semantic.parse import parse_source
from storage.db import Store
from storage.errors import IndexBusyError, OutsideRootError
from storage.model import ParsedFile

log = logging.getLogger(__name__)

ProgressFn = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while files are parsed."""

# Below this many files to parse, a process pool costs more than it saves.
_POOL_MIN_FILES = 150
_BATCH_FILES = 200
_BATCH_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class _Job:
    path: str
    abspath: str
    size: int
    mtime_ns: int
    content_hash: str
    text: str
    decode_note: str | None


@functools.lru_cache(maxsize=8)
def parser_fingerprint(chunk_budget: int) -> str:
    """Changes whenever the parser, its queries or the chunk budget change: then every file is
    parsed again, since the same bytes would now give different rows."""
    import semantic

    h = hashlib.blake2b(digest_size=8)
    h.update(str(chunk_budget).encode())
    base = Path(semantic.__file__).parent
    for p in sorted([base / "parse.py", base / "languages.py", *base.glob("queries/*.scm")]):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def decode(data: bytes) -> tuple[str, str | None]:
    """UTF-8 (with BOM) text; invalid bytes are replaced, and the note says so."""
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        return data.decode(
            "utf-8", errors="replace"
        ), f"invalid UTF-8 at byte {exc.start}; decoded with replacement"


def _parse_job(job: _Job, chunk_budget: int) -> ParsedFile:
    """Runs in a worker process: parse one file, never raise."""
    try:
        language = detect_language(job.path, job.text)  # the text tells a C++ `.h` from a C one
        parsed = parse_source(job.path, job.text, language, chunk_budget=chunk_budget)
    except Exception as exc:  # a parser bug must not stop the index; the file is kept, visibly
        log.warning("parser failed on %s: %s", job.path, exc)
        windows = parse_source(job.path, job.text, None, chunk_budget=chunk_budget)
        parsed = dataclasses.replace(
            windows,
            language=detect_language(job.path, job.text) or "",
            notes=(*windows.notes, f"parser error: {type(exc).__name__}: {exc}"),
        )
    if job.decode_note:
        parsed = dataclasses.replace(parsed, notes=(*parsed.notes, job.decode_note))
    return parsed


_PR_SET_PDEATHSIG = 1


def _worker_init(owner_pid: int, forked: bool) -> None:
    """Runs first in every parse worker: die with the owner (the indexing process), leave
    signals to it.

    Forked workers inherit the parent's open descriptors, and with them its flock'd
    ``index.lock`` / ``daemon.lock`` and the daemon's socket. A worker that outlived a
    ``kill -9`` of its parent would keep those held and make the next ``nav index`` wait
    and the next query hang, so the kernel is asked to SIGKILL the worker when the thread
    that forked it ends (Linux ``PR_SET_PDEATHSIG``), and the worker exits at once if the
    parent is already gone (it died between fork and this call).

    A worker started by a forkserver is not the owner's child, and it holds the write ends of
    its own task pipe and of the forkserver's liveness pipe, so neither it nor the forkserver
    ever sees the owner go: it watches the owner's pid itself (a pidfd) and exits when it ends.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the parent decides
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError) as exc:  # no prctl: the getppid check below still runs
            log.warning("cannot ask to die with the parent: %s", exc)
    if forked:
        if os.getppid() != owner_pid:
            os._exit(1)
        return
    threading.Thread(target=_exit_with, args=(owner_pid,), name="nav-owner-watch", daemon=True).start()


def _exit_with(pid: int) -> None:
    """End this process as soon as process ``pid`` has ended."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)
    except (OSError, AttributeError):  # no pidfd (old kernel): poll
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(0.5)
    select.select([fd], [], [])  # readable when the process has ended
    os._exit(1)


def _end_workers(pool: ProcessPoolExecutor, grace_s: float) -> None:
    """After an interrupted run: let each worker finish the file in hand and exit (bounded).

    Killing a worker outright can cut it off while it writes a result into the pool's shared
    pipe, and then the pool's reader thread waits forever for the rest of that message; so a
    worker is only killed when it has not ended within ``grace_s`` (a parser stuck on a file).
    """
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + grace_s
    for proc in procs:
        proc.join(timeout=max(0.0, deadline - time.monotonic()))
    for proc in procs:
        if proc.is_alive():
            log.warning("parse worker %s did not stop within %.0f s; killing it", proc.pid, grace_s)
            proc.kill()
            proc.join(timeout=5)


def _pool_context() -> tuple[multiprocessing.context.BaseContext, bool]:
    """How to start parse workers: by a plain fork of this process (True) or not.

    A plain fork is cheapest, but only safe from a single-threaded process: a fork copies every
    lock as it is, and a lock another thread held at that instant stays held in the child for
    ever. ``nav lsp`` reads stdin on a thread, so its forked workers hung closing their copy of
    stdin and the first index of a big workspace never finished. With other threads running,
    workers are forked by a forkserver (a fresh single-threaded process, which ends when its
    workers have: see :func:`_worker_init`).
    """
    if threading.active_count() == 1:
        return multiprocessing.get_context("fork"), True
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["navigator.indexer"])
    return context, False


@contextmanager
def _parse_all(
    jobs: list[_Job], chunk_budget: int, workers: int
) -> Iterator[Iterator[tuple[_Job, ParsedFile]]]:
    """Parsed files in job order, from a pool of forked workers when there are enough files.

    A context manager, not a bare generator, so an exception in the caller (SIGTERM,
    Ctrl-C, a disk error) ends the workers before it propagates, not when the generator
    happens to be collected.
    """
    if len(jobs) < _POOL_MIN_FILES or workers <= 1:
        yield ((job, _parse_job(job, chunk_budget)) for job in jobs)
        return
    context, forked = _pool_context()
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_worker_init, initargs=(os.getpid(), forked)
    )
    finished = False
    try:
        # Big files first so the pool's tail is short; results come back in submit order.
        futures = [(job, pool.submit(_parse_job, job, chunk_budget)) for job in jobs]
        yield ((job, fut.result()) for job, fut in futures)
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:
            _end_workers(pool, grace_s=10.0)


@contextmanager
def index_lock(nav_dir: Path, *, timeout_s: float = 30.0) -> Iterator[None]:
    """One writer per index: a second ``nav index`` waits for the first (bounded)."""
    ensure_nav_dir(nav_dir)
    fd = open_private(nav_dir / "index.lock")
    try:
        if not flock_within(fd, timeout_s):
            raise IndexBusyError(
                f"another nav process is indexing {nav_dir.parent} (lock {nav_dir / 'index.lock'}); "
                "wait for it to finish"
            )
        yield
    finally:
        os.close(fd)


def _read(file: WalkedFile, root: Path) -> tuple[bytes | None, str | None]:
    try:
        with os.fdopen(
            open_inside(root, file.path), "rb"
        ) as fh:  # a symlink swapped in since the walk: refused
            return fh.read(), None
    except OutsideRootError:
        return None, "symlink to a file outside the root: not followed"
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"


def index_root(
    root: Path,
    store: Store,
    *,
    walk_options: WalkOptions | None = None,
    chunk_budget: int = 1500,
    workers: int | None = None,
    progress: ProgressFn | None = None,
    only: Iterable[str] | None = None,
    history_budget_s: float | None = HISTORY_BUDGET_S,
) -> IndexReport:
    """Bring the index of ``root`` up to date with the working tree.

    ``only``: root-relative paths known to have changed (a watcher's events); then just those
    are checked, without walking the tree — unless the parser changed, which needs a full run.
    ``history_budget_s``: how long the git history's older commits are read (None: all of them;
    see :func:`navigator.history.index_history`).
    """
    started = time.perf_counter()
    known = store.file_rows()
    fingerprint = parser_fingerprint(chunk_budget)
    scope = None if only is None else set(only)
    if scope is not None and (
        not known
        or store.get_meta("parser_fingerprint") != fingerprint
        or store.get_meta("last_run_state") != "complete"  # an interrupted run: finish it first
    ):
        scope = None
    walked = walk(root, walk_options) if scope is None else walk_paths(root, scope, walk_options)
    skipped: list[tuple[str, str]] = list(walked.skipped)
    current = {f.path: f for f in walked.files}
    # outside the scope, the index stands as it is
    known_in_scope = known if scope is None else {p: r for p, r in known.items() if p in scope}
    reparse_all = bool(known) and store.get_meta("parser_fingerprint") != fingerprint
    if not known:
        store.set_meta("parser_fingerprint", fingerprint)  # every row this run writes is current

    store.set_meta("last_run_state", "running")
    store.set_meta("last_run_started_at", str(time.time()))

    removed = sorted(p for p in known_in_scope if p not in current)
    was_binary = store.skipped_rows()
    binary: list[WalkedFile] = []
    jobs: list[_Job] = []
    unchanged = 0
    touched: list[WalkedFile] = []
    for path, wf in current.items():
        row = known.get(path)
        if not reparse_all and row is not None and row.size == wf.size and row.mtime_ns == wf.mtime_ns:
            unchanged += 1
            continue
        if row is None and was_binary.get(path) == (wf.size, wf.mtime_ns):
            continue  # binary when last read, and not changed since
        data, err = _read(wf, root)
        if data is None:
            skipped.append((path, err or "unreadable"))
            continue
        if looks_binary(data[:8192]):
            binary.append(wf)
            if row is not None:
                removed.append(path)  # it became binary: it no longer belongs in the index
            continue
        digest = content_hash(data)
        if not reparse_all and row is not None and row.hash == digest:
            unchanged += 1
            touched.append(wf)
            continue
        text, note = decode(data)
        jobs.append(_Job(path, wf.abspath, wf.size, wf.mtime_ns, digest, text, note))

    added: list[str] = []
    updated: list[str] = []
    if removed:
        store.delete_files(removed)
    binary_paths = {wf.path for wf in binary}
    job_paths = {j.path for j in jobs}
    # no longer binary-and-skipped: deleted, or now text to index
    gone_binary = [
        p for p in was_binary if (scope is None or p in scope) and (p not in current or p in job_paths)
    ]
    if touched or binary or gone_binary:
        with store.transaction():
            for wf in touched:
                store.touch_file(wf.path, size=wf.size, mtime_ns=wf.mtime_ns)
            # remembered with their stat: not read again, and not counted stale by `nav status`
            for wf in binary:
                store.set_skipped(wf.path, size=wf.size, mtime_ns=wf.mtime_ns, reason="binary")
            store.forget_skipped(p for p in gone_binary if p not in binary_paths)

    jobs.sort(key=lambda j: -j.size)
    unparsed: list[tuple[str, str]] = []  # files with a grammar that were chunked by line windows
    n_workers = workers if workers is not None else min(2, os.cpu_count() or 1)
    done = 0
    batch_started = time.monotonic()
    batch_n = 0
    tx = store.transaction()
    tx.__enter__()
    try:
        with _parse_all(jobs, chunk_budget, n_workers) as results:
            for job, parsed in results:
                store.replace_file(
                    parsed,
                    content_hash=job.content_hash,
                    size=job.size,
                    mtime_ns=job.mtime_ns,
                    lines=job.text.count("\n") + (0 if job.text.endswith("\n") or not job.text else 1),
                )
                (updated if job.path in known else added).append(job.path)
                unparsed += [(job.path, n) for n in parsed.notes if n.startswith(_UNPARSED_NOTES)]
                done += 1
                batch_n += 1
                if progress is not None:
                    progress(done, len(jobs))
                if batch_n >= _BATCH_FILES or time.monotonic() - batch_started > _BATCH_SECONDS:
                    tx.__exit__(None, None, None)
                    tx = store.transaction()
                    tx.__enter__()
                    batch_n = 0
                    batch_started = time.monotonic()
    except BaseException as exc:
        tx.__exit__(type(exc), exc, exc.__traceback__)
        raise
    else:
        tx.__exit__(None, None, None)

    history = index_history(root, store, budget_s=history_budget_s)
    # merged once a quarter of the files changed since the last merge: bounded work a run
    store.text_index_upkeep(len(jobs) + len(removed))
    store.set_meta("parser_fingerprint", fingerprint)
    store.set_meta("last_run_state", "complete")
    store.set_meta("last_run_finished_at", str(time.time()))
    n_files, n_symbols, n_chunks = store.counts()
    return IndexReport(
        added=tuple(sorted(added)),
        updated=tuple(sorted(updated)),
        removed=tuple(removed),
        unchanged=unchanged,
        skipped=tuple(skipped),
        files=n_files,
        symbols=n_symbols,
        chunks=n_chunks,
        seconds=time.perf_counter() - started,
        notes=(*_unparsed_note(unparsed), *_history_note(history)),
        history_added=history.added,
        history_head=history.head,
    )


_UNPARSED_NOTES = ("not parsed:", "parse failed:", "parser error:")


def _history_note(report: HistoryReport) -> tuple[str, ...]:
    """A note when the git history could not be read (a root that is no repository needs none)."""
    return (
        ()
        if report.problem is None or report.problem in HISTORY_QUIET
        else (f"git history: {report.problem}",)
    )


def unparsed_note(store: Store) -> tuple[str, ...]:
    """The same note for every such file in the index (``nav status``)."""
    return _unparsed_note(store.unparsed_files(_UNPARSED_NOTES))


def _unparsed_note(unparsed: list[tuple[str, str]], shown: int = 3) -> tuple[str, ...]:
    """One note naming the files indexed without a parse (line windows: no symbols or syntax
    references from them), so a user knows why `nav def` cannot find what they define."""
    if not unparsed:
        return ()
    listed = "; ".join(f"{path} ({why})" for path, why in sorted(unparsed)[:shown])
    more = f"; and {len(unparsed) - shown} more" if len(unparsed) > shown else ""
    return (
        f"{len(unparsed)} file{'s' if len(unparsed) != 1 else ''} indexed as plain line windows, "
        f"without symbols: {listed}{more}",
    )


def stale_count(root: Path, store: Store, walk_options: WalkOptions | None = None) -> int:
    """How many files differ (by stat) from the index: new, deleted or modified.

    Files the indexer left out as binary, unchanged since, are not stale: indexing again would
    leave them out again."""
    walked = {f.path: f for f in walk(root, walk_options).files}
    known = store.file_rows()
    binary = store.skipped_rows()
    n = sum(1 for p in known if p not in walked)
    for path, wf in walked.items():
        row = known.get(path)
        if row is None:
            if binary.get(path) != (wf.size, wf.mtime_ns):
                n += 1
        elif row.size != wf.size or row.mtime_ns != wf.mtime_ns:
            n += 1
    return n
