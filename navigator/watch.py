"""Watching what a root's index holds, and nothing else: the folders the walk enters.

On Linux the watcher is inotify itself (through libc): one watch per folder that
:func:`navigator.walk.walk_dirs` enters, so a ``.venv``, ``node_modules``, ``.git``, build
output or a server's cache costs no watch and no event; a mask of real changes only
(created, deleted, written, moved, attributes), so a language server reading a thousand
files is not an event at all. Folders get watches as they appear and lose them as they go;
a changed ``.gitignore`` / ``.navignore`` re-walks the folders (the rules changed).

A full event queue (``IN_Q_OVERFLOW``: events were lost) costs ONE reconcile: the folders
walked again, watches added and removed to match, and one full re-index asked for; never a
loop, and at most one per :data:`RECONCILE_MIN_S`. The user's watch limit reached
(``fs.inotify.max_user_watches``) is said once in the log and the watcher gives up, so the
daemon goes back to checking file stats per query, which is slower but never stale.

Elsewhere (macOS, BSD) the watcher is watchdog's, when it is installed.

The decisions are one pure function of the events (:class:`WatchTable`); reading, polling
and the system calls live in :class:`InotifyWatcher`, one thread that sleeps in ``poll``
until an event or the stop pipe wakes it.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import logging
import os
import select
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from navigator.walk import BINARY_EXTENSIONS, BINARY_SUFFIXES, WalkOptions, walk, walk_dirs

log = logging.getLogger("nav.watch")

IGNORE_FILES = frozenset({".gitignore", ".navignore"})
"""A change to one of these re-walks the folders and the tree: files it now ignores lose
their rows and vectors, folders it now ignores lose their watches."""
RECONCILE_MIN_S = 1.0
"""At most one reconcile (after a queue overflow) this often; later overflows wait their turn."""

# inotify(7)
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

CHANGES = (
    IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
    | IN_DELETE_SELF | IN_MOVE_SELF
)  # fmt: skip
"""What is watched: changes only. No IN_OPEN, IN_ACCESS or IN_CLOSE_NOWRITE: reading is not a change."""
WATCH_MASK = CHANGES | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK

_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (struct inotify_event)
READ_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Event:
    """One inotify event: the watch it came from, what happened, and the entry's name."""

    wd: int
    mask: int
    cookie: int = 0
    name: str = ""


def parse_events(data: bytes) -> list[Event]:
    """The events in one ``read`` of an inotify descriptor (whole events only, by the kernel's rule)."""
    out: list[Event] = []
    offset = 0
    while offset + _HEADER.size <= len(data):
        wd, mask, cookie, length = _HEADER.unpack_from(data, offset)
        offset += _HEADER.size
        raw = data[offset : offset + length].split(b"\0", 1)[0]
        offset += length
        out.append(Event(wd, mask, cookie, os.fsdecode(raw)))
    return out


@dataclass
class Plan:
    """What a batch of events asks for."""

    paths: set[str] = field(default_factory=set)
    """Root-relative files that changed."""
    scan: list[str] = field(default_factory=list)
    """Root-relative folders that appeared: watched if the walk enters them, their files re-read."""
    forget: list[str] = field(default_factory=list)
    """Root-relative folders that went (or moved away): their watches, and their subfolders', go."""
    full: bool = False
    """Changes of unknown extent (a folder moved away): re-check the whole tree."""
    reconcile: bool = False
    """The watches may no longer match the tree (events lost, or the ignore rules changed)."""
    overflowed: bool = False
    root_event: bool = False
    """The root itself was deleted, moved or unmounted."""


def never_indexed(name: str) -> bool:
    """A file name the walk never indexes whatever the rules (binary by its name): its events
    are no change to the index."""
    low = name.lower()
    return os.path.splitext(low)[1] in BINARY_EXTENSIONS or low.endswith(BINARY_SUFFIXES)


class WatchTable:
    """The watches and what events mean for them; pure (no system call), so tests can feed it
    any sequence of events, an overflow included."""

    def __init__(self) -> None:
        self._rel: dict[int, str] = {}
        self._wd: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._wd)

    def add(self, rel: str, wd: int) -> None:
        old = self._wd.get(rel)
        if old is not None and old != wd:
            self._rel.pop(old, None)
        self._rel[wd] = rel
        self._wd[rel] = wd

    def watched(self, rel: str) -> bool:
        return rel in self._wd

    def folders(self) -> set[str]:
        return set(self._wd)

    def drop(self, rel: str) -> list[int]:
        """Forget ``rel`` and every folder under it; their watch descriptors, to remove."""
        prefix = rel + "/" if rel else ""
        gone = [r for r in self._wd if r == rel or r.startswith(prefix)]
        wds = [self._wd.pop(r) for r in gone]
        for wd in wds:
            self._rel.pop(wd, None)
        return wds

    def plan(self, events: Iterable[Event]) -> Plan:
        plan = Plan()
        for ev in events:
            if ev.mask & IN_Q_OVERFLOW:
                plan.overflowed = plan.reconcile = plan.full = True
                continue
            rel = self._rel.get(ev.wd)
            if rel is None:
                continue  # a watch already forgotten (its folder went); its events are covered
            if ev.mask & IN_IGNORED:  # the kernel dropped the watch: its folder is gone
                self._rel.pop(ev.wd, None)
                if self._wd.get(rel) == ev.wd:
                    del self._wd[rel]
                plan.root_event = plan.root_event or rel == ""
                continue
            if ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT):
                # a folder below the root: its parent's event (delete, moved-from) says it
                plan.root_event = plan.root_event or rel == ""
                continue
            if not ev.name:
                continue
            path = f"{rel}/{ev.name}" if rel else ev.name
            if ev.name in IGNORE_FILES:
                plan.reconcile = plan.full = True  # the rules changed: folders and files alike
                continue
            if ev.mask & IN_ISDIR:
                if ev.mask & (IN_CREATE | IN_MOVED_TO):
                    plan.scan.append(path)
                elif ev.mask & (IN_DELETE | IN_MOVED_FROM) and self.watched(path):
                    plan.forget.append(path)
                    # deleted: its files' own deletions were events already; moved away: not
                    plan.full = plan.full or bool(ev.mask & IN_MOVED_FROM)
                continue
            if never_indexed(ev.name):
                continue
            plan.paths.add(path)
        return plan


class Watcher(Protocol):
    """What the daemon holds: a running watcher it can ask about and stop."""

    kind: str

    def stop(self) -> None: ...

    def describe(self) -> dict[str, object]: ...


ChangeFn = Callable[[list[str] | None], None]
"""Called with absolute paths that changed, or None: anything may have changed."""


class _Libc:
    """inotify's three calls, from libc (Python has no binding of its own)."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.init1 = libc.inotify_init1
        self.init1.argtypes = [ctypes.c_int]
        self.init1.restype = ctypes.c_int
        self.add_watch = libc.inotify_add_watch
        self.add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self.add_watch.restype = ctypes.c_int
        self.rm_watch = libc.inotify_rm_watch
        self.rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        self.rm_watch.restype = ctypes.c_int


class WatchLimitError(OSError):
    """The user's inotify watches (or instances) are used up."""


class InotifyWatcher:
    """Watches the folders the walk enters under ``root`` and reports changes to ``on_change``.

    ``options`` gives the walk's options (read again at each reconcile). ``on_root_event``
    is called (from the watcher's thread) when the root itself is deleted or moved;
    ``on_degraded`` when the watcher gave up (the watch limit): from then on it reports nothing.
    """

    kind = "inotify"

    def __init__(
        self,
        root: Path,
        *,
        options: Callable[[], WalkOptions],
        on_change: ChangeFn,
        on_root_event: Callable[[], object] = lambda: None,
        on_degraded: Callable[[str], None] = lambda why: None,
    ) -> None:
        self.root = Path(root)
        self._root_s = os.fspath(self.root)
        self._options = options
        self._on_change = on_change
        self._on_root_event = on_root_event
        self._on_degraded = on_degraded
        self.table = WatchTable()
        self.reconciles = 0
        self.overflows = 0
        self.degraded: str | None = None
        self._libc = _Libc()
        self._fd = -1
        self._stop_r, self._stop_w = -1, -1
        self._thread: threading.Thread | None = None
        self._reconcile_due: float | None = None
        self._last_reconcile = float("-inf")
        self.paused = threading.Lock()
        """Held while events are handled (the table changes); whoever else holds it keeps events
        queued in the kernel meanwhile (a test fills the queue so)."""

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Watch every folder the walk enters (before returning: a change after this is seen),
        then read events in a thread. :class:`WatchLimitError` when the limit is reached."""
        fd = self._libc.init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            if err in (errno.EMFILE, errno.ENFILE):
                raise WatchLimitError(err, "too many inotify instances (fs.inotify.max_user_instances)")
            raise OSError(err, os.strerror(err))
        self._fd = fd
        try:
            for rel in walk_dirs(self.root, self._options()):
                self._add(rel)
        except BaseException:
            os.close(fd)
            self._fd = -1
            raise
        self._stop_r, self._stop_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._run, name="nav-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._stop_w >= 0:
            with contextlib.suppress(OSError):
                os.write(self._stop_w, b"x")
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        for fd in (self._fd, self._stop_r, self._stop_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fd = self._stop_r = self._stop_w = -1

    def describe(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "folders": len(self.table),
            "overflows": self.overflows,
            "reconciles": self.reconciles,
            "degraded": self.degraded,
        }

    # -- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        try:
            while True:
                timeout_ms: int | None = None  # idle: sleep until an event or the stop pipe
                if self._reconcile_due is not None:
                    timeout_ms = max(0, int((self._reconcile_due - time.monotonic()) * 1000))
                ready = dict(poller.poll(timeout_ms))
                if self._stop_r in ready:
                    return
                if self._fd in ready:
                    with self.paused:
                        self._read_batch()
                if self.degraded is not None:
                    return
                if self._reconcile_due is not None and time.monotonic() >= self._reconcile_due:
                    with self.paused:
                        self._reconcile()
        except Exception:  # a bug here must not leave the daemon believing it watches
            log.exception("the watcher of %s failed; queries check file stats instead", self.root)
            self._give_up("the watcher failed (see the log)")

    def _read_batch(self) -> None:
        try:
            data = os.read(self._fd, READ_BYTES)
        except BlockingIOError:
            return
        plan = self.table.plan(parse_events(data))
        self.apply(plan)

    def apply(self, plan: Plan) -> None:
        """Carry out a plan: watches dropped and added, changes reported."""
        if plan.root_event:
            self._on_root_event()
        for rel in plan.forget:
            for wd in self.table.drop(rel):
                self._libc.rm_watch(self._fd, wd)  # EINVAL for a watch the kernel dropped: fine
        if plan.overflowed:
            self.overflows += 1
            log.warning(
                "the event queue of %s overflowed (fs.inotify.max_queued_events); one re-check of the tree",
                self.root,
            )
        if plan.reconcile:
            # once, after the events already queued: no sooner than RECONCILE_MIN_S after the last
            due = max(time.monotonic(), self._last_reconcile + RECONCILE_MIN_S)
            self._reconcile_due = due if self._reconcile_due is None else min(self._reconcile_due, due)
            return  # the reconcile re-reads everything: these events' paths are part of it
        if self._reconcile_due is not None:
            return  # one is due: it covers these changes too
        changed = set(plan.paths)
        for rel in plan.scan:
            changed.update(self._watch_new_folder(rel))
            if self.degraded is not None:
                return
        if plan.full:
            self._on_change(None)
        elif changed:
            self._on_change(sorted(os.path.join(self._root_s, p) for p in changed))

    def _watch_new_folder(self, rel: str) -> Iterator[str]:
        """Watch a folder that appeared (and its subfolders) if the walk enters it; the files
        found in it, which may have been written before the watch was there."""
        options = self._options()
        for sub in walk_dirs(self.root, options, under=rel):
            if not self._add(sub):
                return
        for found in walk(self.root, options, under=rel).files:
            yield found.path

    def _reconcile(self) -> None:
        """Make the watches match the folders the walk enters now, and ask for one full re-index."""
        self._reconcile_due = None
        self._last_reconcile = time.monotonic()
        self.reconciles += 1
        wanted = walk_dirs(self.root, self._options())
        wanted_set = set(wanted)
        for rel in sorted(self.table.folders() - wanted_set, reverse=True):
            for wd in self.table.drop(rel):
                self._libc.rm_watch(self._fd, wd)
        for rel in wanted:
            if not self.table.watched(rel) and not self._add(rel):
                return
        self._on_change(None)

    def _add(self, rel: str) -> bool:
        """One watch; False when the watcher gave up (the limit)."""
        path = os.path.join(self._root_s, rel) if rel else self._root_s
        wd = self._libc.add_watch(self._fd, os.fsencode(path), WATCH_MASK)
        if wd >= 0:
            self.table.add(rel, wd)
            return True
        err = ctypes.get_errno()
        if err == errno.ENOSPC:
            why = (
                f"the inotify watch limit is reached (fs.inotify.max_user_watches = {_watch_limit()}); "
                f"{len(self.table)} folders of {self.root} were watched"
            )
            if self._thread is None:
                raise WatchLimitError(err, why)
            self._give_up(why)
            return False
        if rel == "":
            raise OSError(err, f"cannot watch {self.root}: {os.strerror(err)}")
        return True  # the folder went again, or cannot be read: the walk skips it too

    def _give_up(self, why: str) -> None:
        if self.degraded is not None:
            return
        self.degraded = why
        log.warning("%s; queries check file stats instead", why)
        for rel in list(self.table.folders()):
            for wd in self.table.drop(rel):
                with contextlib.suppress(OSError):
                    self._libc.rm_watch(self._fd, wd)
        self._on_degraded(why)


def _watch_limit() -> str:
    try:
        return Path("/proc/sys/fs/inotify/max_user_watches").read_text().strip()
    except OSError:
        return "?"


class WatchdogWatcher:
    """The watcher where there is no inotify: watchdog's (FSEvents, kqueue), recursive on the root,
    events in skipped folders dropped by their path."""

    kind = "watchdog"

    def __init__(self, root: Path, *, options: Callable[[], WalkOptions], on_change: ChangeFn) -> None:
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        self.root = Path(root)
        skip = options().skip_dirs
        root_s = os.fspath(self.root)

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                src, dest = str(event.src_path), str(getattr(event, "dest_path", "") or "")
                rel_parts = os.path.relpath(src, root_s).split(os.sep)
                if any(part in skip for part in rel_parts[: None if event.is_directory else -1]):
                    return  # in (or, for a folder, itself) a folder the walk skips
                if {os.path.basename(src), os.path.basename(dest)} & IGNORE_FILES or event.is_directory:
                    if event.is_directory and event.event_type == "modified":
                        return  # a file inside changed: that file has its own event
                    on_change(None)  # a folder appeared, went or moved, or the rules changed
                    return
                on_change([src, dest] if dest else [src])

        self._observer = Observer()
        self._observer.schedule(Handler(), root_s, recursive=True)

    def start(self) -> None:
        self._observer.start()

    def stop(self) -> None:
        self._observer.stop()
        self._observer.join(timeout=5)

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind}


def start_watcher(
    root: Path,
    *,
    options: Callable[[], WalkOptions],
    on_change: ChangeFn,
    on_root_event: Callable[[], object] = lambda: None,
    on_degraded: Callable[[str], None] = lambda why: None,
) -> Watcher | None:
    """A running watcher of ``root``, or None (said in the log) when none can run: then the
    caller checks file stats per query."""
    if sys.platform.startswith("linux"):
        inotify = InotifyWatcher(
            root, options=options, on_change=on_change, on_root_event=on_root_event, on_degraded=on_degraded
        )
        try:
            inotify.start()
        except OSError as exc:
            log.warning("cannot watch %s (%s); queries check file stats instead", root, exc.strerror or exc)
            return None
        return inotify
    try:
        fallback = WatchdogWatcher(root, options=options, on_change=on_change)
        fallback.start()
    except ImportError:
        log.warning("watchdog is not installed; queries check file stats instead")
        return None
    except OSError as exc:
        log.warning("cannot watch %s (%s); queries check file stats instead", root, exc)
        return None
    return fallback
