"""The repository's git history in the index: past commits' messages and the files they changed,
for the history leg (``RankingConfig.history_leg``, :mod:`semantic.history`).

Read by ``git log`` in the root — only when the root is a repository's top level (its own
``.git``): a root inside a larger repository would be described by commits of files outside it.
The first run reads the newest :data:`MAX_COMMITS` commits; later runs read the commits reachable
from ``HEAD`` and not from the one recorded (``history_head``): a rewrite or a branch switch
costs its new commits only, and the commits read before stay (their messages still say what
their files do). An unmoved ``HEAD`` costs no ``git`` process (:func:`head_signature`). Merges, bots' commits and sweeps (more than
:data:`MAX_FILES` files) are left out. Git missing, a repository git refuses (another owner's),
a timeout or a damaged object store end in a warning and the history as it was: search never
depends on it.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from storage.db import Store
from storage.query import HistoryCommit

log = logging.getLogger(__name__)

MAX_COMMITS = 20_000
"""Commits read on the first run (the newest)."""
MAX_FILES = 50
"""A commit changing more files than this is a sweep (a rename, a reformat): not recorded."""
MAX_MESSAGE = 4_000
"""Characters of a message kept."""
TIMEOUT_S = 120.0
"""How long one ``git log`` may take."""
BUDGET_S = 1.0
"""How long a query's refresh reads older history before answering (the rest on the next ones)."""

_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_BOT = re.compile(r"\[bot\]|dependabot|renovate|pre-commit-ci|github-actions", re.IGNORECASE)
_TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|cc|change-id):.*$", re.I | re.M)
_FORMAT = "--format=%x01%H%x00%an%x00%ae%x00%B"


NOT_A_REPOSITORY = "not a git repository's top level"
NO_COMMIT = "no commit to read (an empty repository, or git refused it)"
QUIET = (NOT_A_REPOSITORY, NO_COMMIT)
"""Problems that need no note: a root that is no repository, or one without a commit yet."""


@dataclass(frozen=True, slots=True)
class HistoryReport:
    """What one run did: the commit the history was read to, the commits added, whether the
    history was read again from the start, and why it could not be read (None: it was)."""

    head: str | None
    added: int = 0
    reset: bool = False
    problem: str | None = None


def _env() -> dict[str, str]:
    """The environment without git's own variables (a ``GIT_DIR`` set by a hook would point
    ``git log`` at another repository), prompts off, no optional locks."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    # no lazy fetch of a partial clone's missing objects (git >= 2.45; see partial_clone too)
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_NO_LAZY_FETCH="1", LC_ALL="C")
    return env


_PARTIAL = re.compile(rb"^\s*(promisor\s*=\s*true|partialclone\s*=)", re.IGNORECASE | re.MULTILINE)


def partial_clone(root: Path) -> bool:
    """Whether the repository is a partial clone (a promisor remote): its ``git log`` would fetch
    the trees it lacks over the network, so its history is not read."""
    try:
        with open(root / ".git" / "config", "rb") as fh:
            return bool(_PARTIAL.search(fh.read(1 << 20)))
    except OSError:
        return False


def _argv(root: Path, *args: str) -> list[str]:
    """``git`` in ``root``, its file-system monitor hook off (a repository's config could run one)."""
    return ["git", "-c", "core.fsmonitor=false", "-C", str(root), *args]


def _git(root: Path, *args: str, timeout_s: float = 10.0) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        _argv(root, *args),
        capture_output=True,
        timeout=timeout_s,
        env=_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )


def is_repository_top(root: Path) -> bool:
    """Whether ``root`` is a git repository's top level (``.git`` is its own, a folder or a
    worktree's file)."""
    git = root / ".git"
    return git.is_dir() or git.is_file()


_REF = re.compile(r"ref: (refs/[A-Za-z0-9._/+-]+)\s*")


def head_signature(root: Path) -> str | None:
    """The stat of what moves when ``HEAD`` does (``.git/HEAD``, the branch's ref file, the
    packed refs, ``HEAD``'s reflog), so an unchanged history costs no ``git`` process (every
    query brings the index up to date); None when it cannot tell (``.git`` is a worktree's file)."""
    git = root / ".git"
    if not git.is_dir() or git.is_symlink():
        return None
    try:
        head = (git / "HEAD").read_text("utf-8", "replace")[:300]
    except OSError:
        return None
    parts = ["HEAD", "packed-refs", "logs/HEAD"]
    m = _REF.fullmatch(head)
    if m and ".." not in m.group(1):
        parts.append(m.group(1))
    out = []
    for part in parts:
        try:
            st = os.stat(git / part, follow_symlinks=False)
        except OSError:
            out.append("-")
        else:
            out.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    return f"{head.strip()}|{'|'.join(out)}"


def _records(out: bytes, *, complete: bool) -> list[str]:
    """The commit records of ``git log`` output in :data:`_FORMAT` (each from its sha on);
    ``complete=False``: the output stopped early, its last record may be cut and is dropped."""
    records = out.decode("utf-8", "replace").split("\x01")[1:]
    if not complete and records:
        records.pop()
    return [r for r in records if _SHA.fullmatch(r.split("\x00", 1)[0])]


def parse_log(out: bytes, *, complete: bool = True) -> Iterator[HistoryCommit]:
    """The commits of ``git log --name-only -z`` output in :data:`_FORMAT`; ``complete=False``:
    the output stopped early, its last record may be cut and is dropped. Records that do not
    parse (a message holding the separator) are skipped, as are bots' commits, sweeps and
    commits without a message or a file."""
    for record in _records(out, complete=complete):
        fields = record.split("\x00")
        if len(fields) < 4:
            continue
        sha, name, email, body = fields[:4]
        if _BOT.search(name) or _BOT.search(email):
            continue
        paths = tuple(dict.fromkeys(p.lstrip("\n") for p in fields[4:] if p.strip()))
        if not paths or len(paths) > MAX_FILES:
            continue
        message = _TRAILER.sub("", body).strip()[:MAX_MESSAGE]
        if message:
            yield HistoryCommit(sha, message, paths)


@dataclass(frozen=True, slots=True)
class _Log:
    out: bytes
    finished: bool
    """git ran to its end (False: stopped at the budget or the timeout, the output cut)."""
    ok: bool
    """git finished and succeeded."""
    error: str


def _read_log(root: Path, args: list[str], *, budget_s: float | None, timeout_s: float) -> _Log:
    """``git log`` streamed until it ends or ``budget_s`` (None: ``timeout_s``) passes; then
    stopped, keeping what it wrote. Past the budget it runs on until one record is whole (a
    record is known whole when the next begins), so every run reads at least one commit."""
    import selectors
    import tempfile
    import time

    started = time.monotonic()
    budget = timeout_s if budget_s is None else min(budget_s, timeout_s)
    chunks: list[bytes] = []
    marks = 0  # record starts read: past the budget, git goes on until one record is whole
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            _argv(root, *args),
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=_env(),
        )
        assert proc.stdout is not None
        finished = False
        try:
            with selectors.DefaultSelector() as sel:
                sel.register(proc.stdout, selectors.EVENT_READ)
                while True:
                    now = time.monotonic() - started
                    if now >= timeout_s or (now >= budget and marks >= 2):
                        break
                    if not sel.select(min(max(budget - now, 0.0) if marks >= 2 else timeout_s - now, 0.25)):
                        continue
                    data = os.read(proc.stdout.fileno(), 1 << 16)
                    if not data:
                        finished = True
                        break
                    chunks.append(data)
                    marks += data.count(b"\x01")
        finally:
            if not finished:
                proc.kill()
            proc.stdout.close()
            rc = proc.wait()
        err.seek(0)
        lines = err.read(4096).decode("utf-8", "replace").strip().splitlines()
    return _Log(b"".join(chunks), finished, finished and rc == 0, lines[-1][:200] if lines else f"exit {rc}")


_LOG_ARGS = [
    "log",
    "--no-merges",
    "--name-only",
    "-z",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    _FORMAT,
]


def index_history(
    root: Path,
    store: Store,
    *,
    rev: str = "HEAD",
    max_commits: int = MAX_COMMITS,
    budget_s: float | None = BUDGET_S,
    timeout_s: float = TIMEOUT_S,
) -> HistoryReport:
    """Bring the index's history up to date with ``rev`` (a commit of the repository at
    ``root``; the working tree's ``HEAD`` by default): the commits new since the last run, then
    older ones, newest first, for at most ``budget_s`` (None: until done), until
    ``max_commits`` are read — a run that stops at the budget leaves the rest to the next
    (``history_start``, the commit the first run began at, and ``history_seen``, how many of
    its commits were read, or ``done``). Never raises for git's failures: the report says what
    went wrong and the history read so far stays."""
    if not is_repository_top(root):
        return HistoryReport(None, problem=NOT_A_REPOSITORY)
    signature = head_signature(root) if rev == "HEAD" else None
    if signature is not None and store.get_meta("history_sig") == signature:
        return HistoryReport(store.get_meta("history_head"))  # the common case: nothing read
    if partial_clone(root):
        return HistoryReport(None, problem="a partial clone: reading its history would fetch what it lacks")
    try:
        got = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _problem(root, f"git rev-parse failed: {exc}")
    head = got.stdout.decode("ascii", "replace").strip()
    if got.returncode != 0 or not _SHA.fullmatch(head):
        if signature is not None:  # not asked again until HEAD moves
            store.set_meta("history_sig", signature)
        return HistoryReport(None, problem=NO_COMMIT)
    known = store.get_meta("history_head")
    reset = known is None or not _SHA.fullmatch(known)
    added = 0
    problem: str | None = None
    if reset:  # the first run: nothing recorded, the walk starts at this head (one write, so a
        # crash cannot leave a head recorded without the walk that reads below it)
        with store.transaction():
            store.add_history((), head=head, reset=True)
            store.set_meta("history_start", head)
            store.set_meta("history_seen", "0")
    elif known != head:
        # only the commits not read before: a rewrite or a branch switch keeps what was read (a
        # message still says what its files do), and costs the new commits alone
        span = [head]
        try:  # the commit read to may be gone (a rewrite, then gc): read from HEAD, known ones skipped
            if _git(root, "cat-file", "-e", f"{known}^{{commit}}").returncode == 0:
                span.append(f"^{known}")
        except (OSError, subprocess.TimeoutExpired):
            pass
        try:
            new = _read_log(
                root,
                [*_LOG_ARGS, f"--max-count={max_commits}", *span, "--"],
                budget_s=None,
                timeout_s=timeout_s,
            )
        except OSError as exc:
            return _problem(root, f"git log failed: {exc}")
        added += store.add_history(reversed(list(parse_log(new.out, complete=new.ok))), head=head)
        if not new.ok:
            problem = (
                f"git log stopped early: {new.error}"
                if new.finished
                else f"git log took more than {timeout_s:.0f} s"
            )
    seen = store.get_meta("history_seen")
    start = store.get_meta("history_start")
    if seen != "done":
        n = int(seen) if seen and seen.isdigit() else 0
        done = n >= max_commits or not (start and _SHA.fullmatch(start))
        if not done:
            try:
                old = _read_log(
                    root,
                    [*_LOG_ARGS, f"--skip={n}", f"--max-count={max_commits - n}", start or "", "--"],
                    budget_s=budget_s,
                    timeout_s=timeout_s,
                )
            except OSError as exc:
                return _problem(root, f"git log failed: {exc}")
            added += store.add_history(reversed(list(parse_log(old.out, complete=old.ok))), head=head)
            n += len(_records(old.out, complete=old.ok))
            if old.ok:  # the walk reached its end
                done = True
            elif old.finished:  # git failed (a damaged or partial object store): what was read stays
                problem = problem or f"git log stopped early ({n} commits read): {old.error}"
                log.warning("%s: %s", root, problem)
                done = True
            elif budget_s is None:  # the timeout: the next run goes on from here
                problem = problem or f"git log took more than {timeout_s:.0f} s ({n} commits read)"
        store.set_meta("history_seen", "done" if done or n >= max_commits else str(n))
    if signature is not None and store.get_meta("history_seen") == "done" and problem is None:
        store.set_meta("history_sig", signature)
    return HistoryReport(head, added, reset, problem)


def _problem(root: Path, problem: str) -> HistoryReport:
    log.warning("%s: history not read: %s", root, problem)
    return HistoryReport(None, problem=problem)
