"""The user's live daemons, one small file each in the user's runtime folder. Light to import.

``<runtime>/daemons/<id>.json`` holds a daemon's pid, root and socket, written once. The daemon
holds an exclusive flock on it for as long as it lives, so a file whose lock can be taken
belongs to a daemon that is gone (``kill -9`` included: the OS drops the lock) and is removed
by whoever sees it; a reused pid cannot pass for a live daemon. The file's modification time
is the daemon's last request (:meth:`Registration.touch`): the daemons are ordered by use
without anyone rewriting anything.

``<id>.want`` is present while that daemon has vectors to embed and may embed now: it holds
``asked`` (the wall time of its last request) and ``pass`` (the embedding turns it has had,
weighted), from which every daemon computes the same next embedder (:func:`next_embedder`).

The runtime folder is ``$NAV_RUNTIME_DIR`` (tests), else ``$XDG_RUNTIME_DIR/nav``, else
``~/.cache/nav``: folders only the user can write, never a shared /tmp name another user
could take first. Everything here is best effort: a folder that cannot be used costs the
budget and the fair share, never a query.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger("nav.daemon")

DEFAULT_MAX_DAEMONS = 3
"""How many of the user's daemons keep language servers and a model loaded at once (env
``NAV_MAX_DAEMONS``): the least recently used beyond it gives them back."""
OTHERS_ACTIVE_IDLE_S = 120.0
"""A daemon idle this long while another root's daemon was used since stops its servers
(they restart on the next query), without waiting for the servers' own idle timeout."""
PRIORITY_WEIGHT = 4.0
"""The most recently asked daemon wanting to embed gets this many turns to another's one."""


def runtime_dir() -> Path:
    """The user's runtime folder for nav (see the module docstring); not created here."""
    base = os.environ.get("NAV_RUNTIME_DIR")
    if base:
        return Path(base)
    if os.environ.get("XDG_RUNTIME_DIR"):
        return Path(os.environ["XDG_RUNTIME_DIR"]) / "nav"
    return Path.home() / ".cache" / "nav"


def registry_dir() -> Path:
    return runtime_dir() / "daemons"


@dataclass(frozen=True, slots=True)
class Entry:
    """One live daemon as its registry file says."""

    id: str
    pid: int
    root: str
    socket: str
    started_at: float
    last_used: float
    """Wall time of its last request (the file's mtime)."""


@dataclass(frozen=True, slots=True)
class Want:
    """A daemon that has vectors to embed and may embed now."""

    id: str
    asked: float
    passes: float


# -- pure decisions ------------------------------------------------------------------------

Plan = Literal["keep", "release", "exit"]


def budget_plan(
    me: str, entries: Sequence[Entry], *, budget: int, idle_s: float, exit_idle_s: float, holding: bool
) -> Plan:
    """What daemon ``me`` does about memory, from the live daemons' last uses.

    Within the ``budget`` most recently used it keeps what it has. Beyond it, it releases its
    servers and model (``release``, when it holds any), and exits once idle for
    ``exit_idle_s`` (``exit``). Within the budget but idle for :data:`OTHERS_ACTIVE_IDLE_S`
    while another daemon was used since, it releases too: the user has moved on."""
    ranked = sorted(entries, key=lambda e: (-e.last_used, e.id))
    ids = [e.id for e in ranked]
    if me not in ids:
        return "keep"
    mine = ranked[ids.index(me)]
    if ids.index(me) >= budget:
        if idle_s >= exit_idle_s:
            return "exit"
        return "release" if holding else "keep"
    others_since = any(e.last_used > mine.last_used for e in ranked if e.id != me)
    if holding and others_since and idle_s >= OTHERS_ACTIVE_IDLE_S:
        return "release"
    return "keep"


def next_embedder(wants: Sequence[Want]) -> str | None:
    """Which of the daemons wanting to embed takes the next slice: the one with the fewest
    weighted turns (stride scheduling: nobody waits for ever), the most recently asked first
    on a tie. Every daemon computes the same answer from the same files."""
    if not wants:
        return None
    return min(wants, key=lambda w: (w.passes, -w.asked, w.id)).id


def turn_cost(me: str, wants: Sequence[Want]) -> float:
    """What one slice adds to ``me``'s pass: less for the most recently asked daemon, so the
    root being queried embeds first while the others still get turns."""
    latest = max((w.asked for w in wants), default=0.0)
    mine = next((w for w in wants if w.id == me), None)
    return 1.0 / PRIORITY_WEIGHT if mine is not None and mine.asked >= latest and len(wants) > 1 else 1.0


# -- the files -----------------------------------------------------------------------------


def _private_folder(folder: Path) -> bool:
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
    except OSError as exc:
        log.warning("cannot use %s for the daemon registry (%s)", folder, exc)
        return False
    if st.st_uid != os.getuid():
        log.warning("%s is not ours; the daemon registry is not used", folder)
        return False
    return True


class Registration:
    """This daemon's entry in the registry: created locked, touched on use, removed on close."""

    def __init__(self, folder: Path, *, root: str, socket: str) -> None:
        self.folder = folder
        self.id = f"{os.getpid()}-{time.time_ns()}"
        self.path = folder / f"{self.id}.json"
        self.want_path = folder / f"{self.id}.want"
        self._fd: int | None = None
        if not _private_folder(folder):
            return
        tmp = folder / f"{self.id}.tmp"
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            log.warning("cannot register this daemon in %s (%s)", folder, exc)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held for life: a lock anyone else can take means "gone"
            body = {"pid": os.getpid(), "root": root, "socket": socket, "started_at": time.time()}
            os.write(fd, json.dumps(body).encode())
            os.rename(tmp, self.path)  # seen only complete and locked
        except OSError as exc:
            log.warning("cannot register this daemon in %s (%s)", folder, exc)
            os.close(fd)
            with contextlib.suppress(OSError):
                tmp.unlink()
            return
        self._fd = fd

    @property
    def active(self) -> bool:
        return self._fd is not None

    def touch(self) -> None:
        """Mark a request now (the entry's mtime orders the daemons by use)."""
        fd = self._fd
        if fd is not None:
            with contextlib.suppress(OSError):
                os.utime(fd)

    def want(self, *, asked: float, passes: float) -> None:
        """Say this daemon wants to embed now (atomically: readers see the old or the new)."""
        if self._fd is None:
            return
        tmp = self.folder / f"{self.id}.want.tmp"
        try:
            with open(tmp, "w", encoding="utf-8", opener=_private_opener) as fh:
                fh.write(json.dumps({"asked": asked, "pass": passes}))
            os.replace(tmp, self.want_path)
        except OSError as exc:
            log.warning("cannot write %s (%s)", self.want_path, exc)

    def unwant(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.want_path.unlink()

    def close(self) -> None:
        fd, self._fd = self._fd, None  # first: a touch from another thread no longer uses it
        if fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.want_path.unlink()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        os.close(fd)


def _private_opener(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


def _alive(path: Path) -> bool | None:
    """True while the entry's daemon holds its lock; False (and the entry removed) when it is
    gone; None when the file vanished meanwhile."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        for stale in (path, path.with_suffix(".want")):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
        return False
    finally:
        os.close(fd)


def live_entries(folder: Path | None = None) -> list[Entry]:
    """The user's live daemons, most recently used first; entries of dead ones are removed."""
    folder = folder if folder is not None else registry_dir()
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix == ".json")
    except OSError:
        return []
    out: list[Entry] = []
    for path in names:
        if not _alive(path):
            continue
        try:
            body = json.loads(path.read_text(encoding="utf-8"))
            out.append(
                Entry(
                    id=path.stem,
                    pid=int(body["pid"]),
                    root=str(body["root"]),
                    socket=str(body["socket"]),
                    started_at=float(body["started_at"]),
                    last_used=path.stat().st_mtime,
                )
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue  # gone meanwhile, or not ours to read
    out.sort(key=lambda e: (-e.last_used, e.id))
    return out


def live_wants(folder: Path, entries: Sequence[Entry]) -> list[Want]:
    """The wants of live daemons (``entries``); stale ones were removed with their entries."""
    out: list[Want] = []
    for entry in entries:
        try:
            body = json.loads((folder / f"{entry.id}.want").read_text(encoding="utf-8"))
            out.append(Want(entry.id, float(body["asked"]), float(body["pass"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return out


class EmbedTurns:
    """One daemon's side of the turns the user's daemons take at embedding (see the module's
    docstring): whether it says it wants to embed, and the turns it has had. Without an active
    registration every turn is its own."""

    def __init__(self) -> None:
        self._wanting = False
        self._passes = 0.0
        self._written: Want | None = None

    def mine(self, reg: Registration | None, asked: float) -> bool:
        """Say (in the registry) that this daemon wants to embed, and whether the next slice is
        its own (:func:`next_embedder`, the same answer in every daemon). A daemon that starts
        wanting joins at the others' lowest pass, so a newcomer does not take every turn until
        it has caught up. ``asked``: the wall time of its last request."""
        if reg is None or not reg.active:
            return True
        others = [w for w in live_wants(reg.folder, live_entries(reg.folder)) if w.id != reg.id]
        if not self._wanting:
            self._passes = max(self._passes, min((w.passes for w in others), default=self._passes))
            self._wanting = True
            self._written = None
        mine = Want(reg.id, asked, self._passes)
        if self._written != mine:
            reg.want(asked=mine.asked, passes=mine.passes)
            self._written = mine
        return next_embedder([*others, mine]) == reg.id

    def took(self, reg: Registration | None, asked: float) -> None:
        """After a slice: this daemon's pass moves on by its cost (less for the one asked last)."""
        if reg is None or not reg.active:
            return
        wants = live_wants(reg.folder, live_entries(reg.folder))
        others = [w for w in wants if w.id != reg.id]
        self._passes += turn_cost(reg.id, [*others, Want(reg.id, asked, self._passes)])
        reg.want(asked=asked, passes=self._passes)
        self._written = Want(reg.id, asked, self._passes)

    def unwant(self, reg: Registration | None) -> None:
        """No more wanting to embed (done, paused, or beyond the budget)."""
        if self._wanting and reg is not None:
            reg.unwant()
        self._wanting = False
        self._written = None
