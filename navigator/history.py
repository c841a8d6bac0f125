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

_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_BOT = re.compile(r"\[bot\]|dependabot|renovate|pre-commit-ci|github-actions", re.IGNORECASE)
_TRAILER = re.compile(r"^(signed-off-by|co-authored-by|reviewed-by|acked-by|cc|change-id):.*$", re.I | re.M)
_FORMAT = "--format=%x01%H%x00%an%x00%ae%x00%B"


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


def _git(root: Path, *args: str, timeout_s: float = 10.0) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-c", "core.fsmonitor=false", "-C", str(root), *args],
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


def parse_log(out: bytes, *, complete: bool = True) -> Iterator[HistoryCommit]:
    """The commits of ``git log --name-only -z`` output in :data:`_FORMAT`; ``complete=False``:
    the output stopped early, its last record may be cut and is dropped. Records that do not
    parse (a message holding the separator) are skipped."""
    records = out.decode("utf-8", "replace").split("\x01")[1:]
    if not complete and records:
        records.pop()
    for record in records:
        fields = record.split("\x00")
        if len(fields) < 4 or not _SHA.fullmatch(fields[0]):
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


def index_history(
    root: Path,
    store: Store,
    *,
    rev: str = "HEAD",
    max_commits: int = MAX_COMMITS,
    timeout_s: float = TIMEOUT_S,
) -> HistoryReport:
    """Bring the index's history up to date with ``rev`` (a commit of the repository at
    ``root``; the working tree's ``HEAD`` by default). Never raises for git's failures: the
    report says what went wrong and the history stays as it was."""
    if not is_repository_top(root):
        return HistoryReport(None, problem="not a git repository's top level")
    if partial_clone(root):
        return HistoryReport(None, problem="a partial clone: reading its history would fetch what it lacks")
    signature = head_signature(root) if rev == "HEAD" else None
    if signature is not None and store.get_meta("history_sig") == signature:
        return HistoryReport(store.get_meta("history_head"))
    try:
        got = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _problem(root, f"git rev-parse failed: {exc}")
    head = got.stdout.decode("ascii", "replace").strip()
    if got.returncode != 0 or not _SHA.fullmatch(head):
        if signature is not None:  # not asked again until HEAD moves
            store.set_meta("history_sig", signature)
        return HistoryReport(None, problem="no commit to read (an empty repository, or git refused it)")
    known = store.get_meta("history_head")
    if known == head:
        if signature is not None:
            store.set_meta("history_sig", signature)
        return HistoryReport(head)
    # only the commits not read before: a rewrite or a branch switch keeps what was read (a
    # message still says what its files do), and costs the new commits alone
    reset = known is None
    span = [head]
    if known is not None and _SHA.fullmatch(known):
        try:  # the commit read to may be gone (a rewrite, then gc): read from HEAD, known ones skipped
            if _git(root, "cat-file", "-e", f"{known}^{{commit}}").returncode == 0:
                span.append(f"^{known}")
        except (OSError, subprocess.TimeoutExpired):
            pass
    args = ["log", "--no-merges", "--name-only", "-z", "--no-color", "--no-ext-diff", "--no-textconv"]
    try:
        done = _git(root, *args, f"--max-count={max_commits}", _FORMAT, *span, "--", timeout_s=timeout_s)
    except subprocess.TimeoutExpired:
        return _problem(root, f"git log took more than {timeout_s:.0f} s")
    except OSError as exc:
        return _problem(root, f"git log failed: {exc}")
    complete = done.returncode == 0
    commits = list(parse_log(done.stdout, complete=complete))
    if not complete and not commits:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return _problem(root, f"git log failed: {err[-1][:200] if err else done.returncode}")
    # oldest first: ids grow with time (ties in BM25 go to the older commit's lower id)
    added = store.add_history(reversed(commits), head=head, reset=reset)
    if signature is not None and complete:
        store.set_meta("history_sig", signature)
    problem = None
    if not complete:  # a damaged or partial object store: what was read is kept
        problem = f"git log stopped early; {len(commits)} commits read"
        log.warning("%s: %s", root, problem)
    return HistoryReport(head, added, reset, problem)


def _problem(root: Path, problem: str) -> HistoryReport:
    log.warning("%s: history not read: %s", root, problem)
    return HistoryReport(None, problem=problem)
