"""Trust boundaries (issue 8 §3, and file names from §4): nothing outside the root is read,
indexed or served; nothing private is leaked. Hostile repositories against the real parts:
the walker, SQLite, the CLI in its own process, the daemon, `nav lsp` (pytest-lsp) and
`nav mcp` (the mcp package's client)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import pytest_lsp
from lsprotocol import types
from mcp import Client
from pytest_lsp import ClientServerConfig, LanguageClient

from navigator import Navigator
from navigator.confine import read_inside
from navigator.errors import NavError, OutsideRootError, SymbolNotFoundError, UnsafeIndexDirError, UsageError
from navigator.exact_targets import Files
from navigator.frontends.client import DaemonClient
from navigator.frontends.mcp_server import build_server
from navigator.paths import daemon_paths, ensure_nav_dir, socket_dir
from navigator.walk import WalkOptions, walk

SECRET = "sk-live-7f3a9c0d2e1b"
NOBODY = 65534
IS_ROOT = os.geteuid() == 0


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """A repository next to a private sibling folder, with symlinks that lead out of it."""
    secrets = tmp_path / "secrets"
    write(secrets, {"key.py": f'API_KEY = "{SECRET}"\n\n\ndef leak_me():\n    return API_KEY\n'})
    (secrets / "key.py").chmod(0o600)
    root = tmp_path / "repo"
    write(
        root,
        {
            "app.py": "def hello():\n    return 1\n\n\ndef main():\n    return hello()\n",
            "lib/util.py": "from app import hello\n\n\ndef twice():\n    return hello() + hello()\n",
        },
    )
    (root / "passwd.py").symlink_to("/etc/passwd")
    (root / "key.py").symlink_to(secrets / "key.py")
    (root / "lib" / "alias.py").symlink_to(root / "app.py")  # inside the root: the target is indexed
    return root


def cli(
    root: Path, *args: str, daemon: bool = False, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NAV_DAEMON_NO_EMBED": "1", "NAV_DAEMON_NO_WARM": "1"}
    if daemon:
        env.pop("NAV_NO_DAEMON", None)
    flags = [] if daemon else ["--no-daemon"]
    return subprocess.run(
        [sys.executable, "-m", "navigator.frontends.cli", *flags, "-C", str(root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


# -- 1. symlinks are never followed out of the root ------------------------------------------


def test_symlinks_leaving_the_root_are_not_indexed_searched_or_resolved(hostile: Path) -> None:
    nav = Navigator(hostile)
    report = nav.index()
    indexed = {row for row in nav.store.file_rows()}
    assert indexed == {"app.py", "lib/util.py"}  # not passwd.py, key.py, nor the alias of app.py
    skipped = dict(report.skipped)
    assert skipped["passwd.py"] == skipped["key.py"] == "symlink to a file outside the root: not followed"
    assert "lib/alias.py" not in skipped  # a link inside the root is no news: its target is indexed
    with pytest.raises(SymbolNotFoundError):
        nav.definitions("leak_me")
    hits = nav.search("root:x:0:0 API_KEY " + SECRET, k=20).items
    assert all(h.path in indexed for h in hits)
    assert not any(SECRET in h.snippet or "root:x:0:0" in h.snippet for h in hits)
    nav.close()


def test_the_cli_finds_no_password_file(hostile: Path) -> None:
    assert cli(hostile, "index").returncode == 0
    out = cli(hostile, "search", "root:x:0:0")
    assert out.returncode == 0 and "root:x:0:0" not in out.stdout and "passwd.py" not in out.stdout
    refs = cli(hostile, "refs", "leak_me")
    assert refs.returncode == 4 and SECRET not in refs.stdout + refs.stderr


def test_a_symlink_swapped_in_after_indexing_is_not_read(hostile: Path) -> None:
    nav = Navigator(hostile, refresh=False)
    nav.index()
    util = hostile / "lib" / "util.py"
    util.unlink()
    util.symlink_to(hostile.parent / "secrets" / "key.py")  # same name, now leading out
    assert read_inside(hostile, "lib/util.py") is None
    assert read_inside(hostile, "app.py") is not None
    files = Files(nav.root, nav.exact.table)
    assert files.lines("lib/util.py") is None and files.line("lib/util.py", 1) == ""
    assert files.lines(str(util)) is None  # absolute, as a server would report it
    with pytest.raises(OutsideRootError, match="util.py` is outside the root .* through a symlink"):
        nav.outline("lib/util.py")
    # the daemon's path-by-path update drops it too
    nav.index(only=["lib/util.py"])
    assert "lib/util.py" not in nav.store.file_rows()
    nav.close()


def test_server_locations_outside_the_root_are_left_out_with_a_note(tmp_path: Path) -> None:
    """A real server's answer that points outside the root (here typeshed's `json`) is not read
    or served; the note says so."""
    root = tmp_path / "repo"
    write(root, {"app.py": "import json\n\n\ndef dump(x):\n    return json.dumps(x)\n"})
    with Navigator(root) as nav:
        nav.index()
        resp = nav.definition("app.py:5:17", deadline_s=90)
        assert resp.source and resp.source.startswith("lsp:")
        assert resp.items == () and "1 location outside the root left out" in " ".join(resp.notes)


def test_references_a_server_finds_through_a_symlink_are_left_out(tmp_path: Path) -> None:
    """basedpyright follows a file symlink to a sibling's secret on its own; before, `nav refs`
    served its lines (the secret on the same line as the call)."""
    write(tmp_path / "secrets", {"key.py": f"from app import hello\n\nX = hello()  # {SECRET}\n"})
    root = tmp_path / "repo"
    write(root, {"app.py": "def hello():\n    return 1\n\n\ndef main():\n    return hello()\n"})
    (root / "key.py").symlink_to(tmp_path / "secrets" / "key.py")
    with Navigator(root) as nav:
        nav.index()
        resp = nav.references("hello", deadline_s=90)
    assert resp.source == "lsp:basedpyright" and resp.complete
    assert {(h.path, h.line) for h in resp.items} == {("app.py", 1), ("app.py", 6)}
    assert not any(SECRET in h.code for h in resp.items)
    assert "2 locations outside the root left out (nav serves only files under it)" in resp.notes


def test_a_symlink_swapped_in_between_walk_and_read_is_not_read(hostile: Path) -> None:
    from navigator.indexer import _read

    walked = next(f for f in walk(hostile).files if f.path == "app.py")
    assert _read(walked, hostile)[0] is not None
    (hostile / "app.py").unlink()
    (hostile / "app.py").symlink_to(hostile.parent / "secrets" / "key.py")
    assert _read(walked, hostile) == (None, "symlink to a file outside the root: not followed")
    (hostile / "lib").rename(hostile / "lib2")  # a folder swapped for a link out, under the file
    (hostile / "lib").symlink_to(hostile.parent / "secrets")
    fake = dataclasses.replace(walked, path="lib/key.py", abspath=str(hostile / "lib" / "key.py"))
    assert _read(fake, hostile) == (None, "symlink to a file outside the root: not followed")


# -- 2. positions outside the root: one check, four front ends -------------------------------

OUTSIDE = [
    "../secrets/key.py:1:1",
    "/etc/passwd:999:1",
    "key.py:1:1",
    "../secrets/nope.py:3:1",
    "/etc/shadow:1",
]


def assert_refused(message: str, target: str) -> None:
    path = target.rsplit(":", 2)[0] if target.count(":") >= 2 else target.rsplit(":", 1)[0]
    assert f"`{path}` is outside the root" in message, message
    assert SECRET not in message and "root:x:0:0" not in message and "lines" not in message


@pytest.mark.parametrize("target", OUTSIDE)
def test_api_refuses_positions_outside_the_root(hostile: Path, target: str) -> None:
    nav = Navigator(hostile)
    nav.index()
    for verb in (nav.hover, nav.references, nav.definition, nav.callers, nav.implementations, nav.query):
        with pytest.raises(OutsideRootError) as err:
            verb(target)
        assert_refused(str(err.value), target)
        assert err.value.exit_code == 2
    assert nav._exact is None or not nav._exact.pool._sessions  # no server was even started
    with pytest.raises(OutsideRootError):
        nav.outline(target.rsplit(":", 2)[0].rsplit(":", 1)[0])
    nav.close()


def test_cli_refuses_positions_outside_the_root(hostile: Path) -> None:
    assert cli(hostile, "index").returncode == 0
    for verb, target in [
        ("hover", OUTSIDE[0]),
        ("refs", OUTSIDE[1]),
        ("callers", OUTSIDE[2]),
        ("find", OUTSIDE[3]),
    ]:
        out = cli(hostile, verb, target)
        assert out.returncode == 2, (verb, out.stdout, out.stderr)
        assert_refused(out.stderr, target)
        assert SECRET not in out.stdout
    out = cli(hostile, "outline", "../secrets/key.py")
    assert out.returncode == 2 and "outside the root" in out.stderr and SECRET not in out.stdout


def test_the_daemon_refuses_them_with_the_same_error(hostile: Path) -> None:
    client = DaemonClient(hostile)
    try:
        with pytest.raises(OutsideRootError) as err:
            client.hover("../secrets/key.py:1:5")
        assert_refused(str(err.value), "../secrets/key.py:1:5")
        out = cli(hostile, "refs", "/etc/passwd:999:1", daemon=True)
        assert out.returncode == 2 and "`/etc/passwd` is outside the root" in out.stderr
        assert client.definitions("hello").items[0].path == "app.py"  # still serving
    finally:
        client.stop()


@pytest.fixture(scope="module")
def lsp_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("lspbounds")
    write(base / "secrets", {"key.py": f'API_KEY = "{SECRET}"\n'})
    root = base / "ws"
    write(root, {"app.py": "def hello():\n    return 1\n"})
    (root / "key.py").symlink_to(base / "secrets" / "key.py")
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=[sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"]),
    scope="module",
)
async def lsp(lsp_client: LanguageClient, lsp_root: Path) -> Any:
    await lsp_client.initialize_session(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=lsp_root.as_uri())
    )
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_nav_lsp_refuses_positions_outside_the_root(lsp: LanguageClient, lsp_root: Path) -> None:
    for method, params, target in [
        ("nav/find", {"query": "../secrets/key.py:1:1"}, "../secrets/key.py:1:1"),
        ("nav/refs", {"name": "/etc/passwd:999:1"}, "/etc/passwd:999:1"),
        ("nav/find", {"query": "key.py:1:1"}, "key.py:1:1"),
    ]:
        with pytest.raises(Exception) as err:
            await lsp.protocol.send_request_async(method, params)
        assert_refused(str(err.value), target)
    for uri in [(lsp_root.parent / "secrets" / "key.py").as_uri(), (lsp_root / "key.py").as_uri()]:
        with pytest.raises(Exception, match="is outside the root") as err:
            await lsp.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=0, character=0),
                )
            )
        assert SECRET not in str(err.value)
    symbols = await lsp.workspace_symbol_async(types.WorkspaceSymbolParams(query="hello"))
    assert symbols and symbols[0].location.uri == (lsp_root / "app.py").as_uri()  # still serving


def mcp_text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def test_nav_mcp_refuses_positions_outside_the_root(hostile: Path) -> None:
    nav = Navigator(hostile)
    nav.index()

    async def go() -> list[tuple[str, Any]]:
        async with Client(build_server(nav)) as client:
            return [
                (OUTSIDE[0], await client.call_tool("find", {"query": OUTSIDE[0]})),
                (OUTSIDE[1], await client.call_tool("refs", {"name": OUTSIDE[1]})),
                (OUTSIDE[2], await client.call_tool("find", {"query": OUTSIDE[2]})),
                ("../secrets/key.py:", await client.call_tool("outline", {"path": "../secrets/key.py"})),
            ]

    for target, result in anyio.run(go):
        assert result.is_error
        assert_refused(mcp_text(result), target)
    nav.close()


# -- 3, 4. .nav is private, and never a symlink or someone else's -----------------------------


def mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def test_nav_folder_and_files_are_private(hostile: Path) -> None:
    (hostile / "app.py").chmod(0o600)
    nav = Navigator(hostile)
    nav.index()
    nav.embed()  # writes the vectors file too (a search never embeds)
    nav_dir = hostile / ".nav"
    wal = [nav_dir / "index.db-wal", nav_dir / "index.db-shm"]
    assert [mode(p) for p in wal] == [0o600, 0o600]  # SQLite gives them the database's mode
    nav.close()
    assert mode(nav_dir) == 0o700
    files = [p for p in nav_dir.iterdir() if p.is_file()]
    assert {"index.db", "index.lock", ".gitignore"} <= {p.name for p in files}
    assert any(p.name.startswith("vectors-") for p in files)
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}


def test_an_old_world_readable_nav_is_tightened(hostile: Path) -> None:
    nav_dir = hostile / ".nav"
    nav_dir.mkdir(mode=0o755)
    os.chmod(nav_dir, 0o755)
    for name in ("index.db", "daemon.log", "vectors-old.npz"):
        (nav_dir / name).touch()
        os.chmod(nav_dir / name, 0o644)
    with Navigator(hostile) as nav:
        nav.index()
    assert mode(nav_dir) == 0o700
    assert {p.name: mode(p) for p in nav_dir.iterdir()} == {p.name: 0o600 for p in nav_dir.iterdir()}


def test_daemon_files_and_socket_are_private(hostile: Path) -> None:
    client = DaemonClient(hostile)
    try:
        client.definitions("hello")
        paths = daemon_paths(hostile)
        for p in (paths.nav_dir / "daemon.lock", paths.log, paths.info, paths.socket):
            assert mode(p) == 0o600, p
    finally:
        client.stop()


def test_a_nav_symlink_is_refused_and_nothing_is_written_through_it(hostile: Path, tmp_path: Path) -> None:
    victim = tmp_path / "someone-elses"
    victim.mkdir()
    (victim / "data.sqlite").write_bytes(b"precious")
    (hostile / ".nav").symlink_to(victim)
    with pytest.raises(UnsafeIndexDirError, match=r"the index folder `.*\.nav` is a symlink"):
        Navigator(hostile).index()
    out = cli(hostile, "index")
    assert out.returncode == 5 and "is a symlink" in out.stderr and "Traceback" not in out.stderr
    out = cli(hostile, "def", "hello", daemon=True)
    assert out.returncode == 5 and "is a symlink" in out.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["data.sqlite"]
    assert (victim / "data.sqlite").read_bytes() == b"precious"


@pytest.mark.skipif(not IS_ROOT, reason="needs root to give a folder to another user")
def test_a_nav_owned_by_another_user_is_refused(hostile: Path) -> None:
    nav_dir = hostile / ".nav"
    nav_dir.mkdir(mode=0o777)
    os.chown(nav_dir, NOBODY, NOBODY)
    with pytest.raises(UnsafeIndexDirError, match=f"belongs to another user \\(uid {NOBODY}"):
        Navigator(hostile).index()
    assert list(nav_dir.iterdir()) == []


# -- 5. likely secrets stay out; .gitignore changes apply while the daemon runs ---------------

SECRET_FILES = {
    ".env": f"TOKEN={SECRET}\n",
    ".env.production": f"TOKEN={SECRET}\n",
    "prod.env": f"TOKEN={SECRET}\n",  # issue 17: indexed and searchable
    "config/Staging.ENV": f"TOKEN={SECRET}\n",
    "deploy/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n",
    "deploy/id_ed25519": f"{SECRET}\n",
    "config/credentials.json": f'{{"token": "{SECRET}"}}\n',
    "certs/server.pem": f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n",
    "certs/server.key": f"{SECRET}\n",
    "certs/store.p12": f"{SECRET}\n",
    ".netrc": f"machine x login y password {SECRET}\n",
    "secrets.yaml": f"token: {SECRET}\n",
}
TEMPLATES = {".env.example": "TOKEN=changeme\n", "config/settings.json": '{"debug": true}\n'}


def test_likely_secret_files_are_left_out_and_reported(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {**SECRET_FILES, **TEMPLATES, "app.py": "def hello():\n    return 1\n"})
    with Navigator(root) as nav:
        report = nav.index()
        assert set(nav.store.file_rows()) == {"app.py", *TEMPLATES}
        assert {p for p, why in report.skipped if "likely secret" in why} == set(SECRET_FILES)
        hits = nav.search(SECRET, k=20).items
        assert not any(SECRET in h.snippet for h in hits)
    out = cli(root, "index")
    assert (
        out.returncode == 0
        and "skipped .env: likely secret" in out.stderr
        and "include_secrets" in out.stderr
    )


def test_positions_in_likely_secret_files_are_refused_unless_taken_in(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {".env": f"TOKEN={SECRET}\nOTHER=1\n", "app.py": "def hello():\n    return 1\n"})
    with Navigator(root) as nav:
        nav.index()
        for target in (".env:1:1", ".env:99:1"):
            with pytest.raises(UsageError, match="`.env` looks like a secret") as err:
                nav.references(target)
            assert SECRET not in str(err.value) and "lines" not in str(err.value)
    write(root, {".nav.toml": "[index]\ninclude_secrets = true\n"})
    with Navigator(root) as nav:
        nav.index()
        with pytest.raises(UsageError, match="line 99 is outside `.env`, which has 2 lines"):
            nav.references(".env:99:1")  # taken in: an ordinary file again


def test_config_takes_secrets_back_in(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {**SECRET_FILES, ".nav.toml": "[index]\ninclude_secrets = true\n"})
    with Navigator(root) as nav:
        nav.index()
        assert set(SECRET_FILES) <= set(nav.store.file_rows())
    write(root, {".nav.toml": '[index]\ninclude_secrets = "yes"\n'})
    with Navigator(root) as nav:
        assert any("include_secrets" in w and "not a valid bool" in w for w in nav.config.warnings)
        nav.index()
        assert not set(SECRET_FILES) & set(nav.store.file_rows())


def test_a_config_file_linked_out_of_the_root_is_not_read(hostile: Path) -> None:
    (hostile.parent / "secrets" / "other.toml").write_text(f'[index]\n{SECRET} = "{SECRET}"\n')
    (hostile / ".nav.toml").symlink_to(hostile.parent / "secrets" / "other.toml")
    with Navigator(hostile) as nav:
        assert nav.config.warnings == (".nav.toml is a symlink out of the root; not read (using defaults)",)
        assert not any(SECRET in n for n in nav.status().notes)


def test_a_gitignore_change_applies_while_the_daemon_runs(hostile: Path) -> None:
    write(hostile, {"notes/private_notes.py": f"def private_plan():\n    return '{SECRET}'\n"})
    client = DaemonClient(hostile)
    try:
        assert client.definitions("private_plan").items[0].path == "notes/private_notes.py"
        syncs = client.daemon_status()["syncs"]
        (hostile / ".gitignore").write_text("notes/\n")
        deadline = time.monotonic() + 20
        while client.daemon_status()["syncs"] <= syncs:  # the event: the watcher re-indexed
            assert time.monotonic() < deadline, "the watcher never re-indexed"
            time.sleep(0.02)  # polling the daemon's own counter over RPC, bounded
        with pytest.raises(SymbolNotFoundError):
            client.definitions("private_plan")
        assert not any(SECRET in h.snippet for h in client.search(SECRET, k=20).items)
    finally:
        client.stop()


# -- 6. the socket of a deep root lives in a folder only the user can enter --------------------


def deep_root(tmp_path: Path) -> Path:
    root = tmp_path / ("d" * 60) / ("e" * 60) / "repo"
    write(root, {"app.py": "def hello():\n    return 1\n"})
    return root


def test_deep_roots_socket_is_in_a_private_checked_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir(mode=0o1777)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    root = deep_root(tmp_path)
    sock = daemon_paths(root).socket
    assert sock.parent == tmp_path / "tmp" / f"nav-{os.getuid()}"
    assert not sock.name.startswith(f"nav-{os.getuid()}-")  # the old predictable name is gone
    client = DaemonClient(root)
    try:
        assert client.definitions("hello").items[0].path == "app.py"
        assert mode(sock.parent) == 0o700 and os.lstat(sock.parent).st_uid == os.getuid()
        assert mode(sock) == 0o600
    finally:
        client.stop()


@pytest.mark.skipif(not IS_ROOT, reason="needs root to act as another local user")
def test_a_socket_folder_made_first_by_another_user_does_not_block_the_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another local user who makes `<tmp>/nav-<uid>` first (a folder of theirs, a symlink) used to
    stop every deep root's daemon (exit 5); the sockets now go under the user's own cache folder."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "tmp").mkdir(mode=0o1777)
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    planted = tmp_path / "tmp" / f"nav-{os.getuid()}"
    planted.mkdir(mode=0o777)
    os.chown(planted, 12345, 12345)  # the other user got there first
    fallback = tmp_path / "cache" / "nav" / "run"
    assert socket_dir() == fallback and mode(fallback) == 0o700
    root = deep_root(tmp_path)
    assert daemon_paths(root).socket.parent == fallback  # the client and the daemon agree
    out = cli(root, "def", "hello", daemon=True)
    try:
        assert out.returncode == 0 and "app.py" in out.stdout, out.stderr
        assert list(planted.iterdir()) == []  # nothing was bound in the other user's folder
        assert [p.suffix for p in fallback.iterdir()] == [".sock"]
    finally:
        cli(root, "daemon", "stop", daemon=True)
    planted.rmdir()
    planted.symlink_to(tmp_path)  # or planted a symlink
    assert socket_dir() == fallback
    planted.unlink()
    planted.mkdir(mode=0o755)
    assert socket_dir() == planted and mode(planted) == 0o700  # ours, too open: tightened
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o755)
    os.chmod(xdg, 0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    assert socket_dir() == planted  # an XDG_RUNTIME_DIR open to others is not used
    os.chmod(xdg, 0o700)
    assert socket_dir() == xdg


@pytest.mark.skipif(not IS_ROOT, reason="needs root to act as another local user")
def test_a_nav_folder_in_an_ancestor_does_not_capture_the_repository(tmp_path: Path) -> None:
    """`/tmp/.nav`, made by anyone, made `/tmp` the root of every checkout below it: the nearest
    marker wins, and a `.nav` that is not this user's real folder marks nothing."""
    from navigator.frontends import entry
    from navigator.paths import find_root

    repo = tmp_path / "work" / "repo"
    write(repo, {"app.py": "def hello():\n    return 1\n"})
    (repo / ".git").mkdir()
    sub = repo / "src"
    sub.mkdir()
    theirs = tmp_path / ".nav"
    theirs.mkdir(mode=0o777)
    os.chown(theirs, 12345, 12345)
    for start in (repo, sub):
        assert find_root(start) == repo and entry.find_root(str(start)) == str(repo)
    # this user's own .nav in an ancestor: still the nearer .git wins
    os.chown(theirs, os.getuid(), os.getgid())
    assert find_root(sub) == repo and entry.find_root(str(sub)) == str(repo)
    # no .git at all: someone else's .nav, or a symlink named .nav, is not a root marker
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    (tmp_path / "plain" / ".nav").symlink_to(tmp_path / "work")
    theirs.rmdir()
    assert find_root(plain) == plain and entry.find_root(str(plain)) == str(plain)
    stranger = tmp_path / "plain" / "dir" / "x"
    stranger.mkdir()
    (plain / ".nav").mkdir()
    os.chown(plain / ".nav", 12345, 12345)
    assert find_root(stranger) == stranger and entry.find_root(str(stranger)) == str(stranger)
    os.chown(plain / ".nav", os.getuid(), os.getgid())
    assert find_root(stranger) == plain and entry.find_root(str(stranger)) == str(plain)
    os.chown(plain / ".nav", 12345, 12345)
    (tmp_path / ".nav").mkdir(mode=0o777)
    os.chown(tmp_path / ".nav", 12345, 12345)
    for args in (["index"], ["def", "hello"]):  # the CLI, run from the repository's subfolder
        out = subprocess.run(
            [sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", *args],
            capture_output=True, text=True, timeout=120, cwd=sub,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
    assert "app.py" in out.stdout and (repo / ".nav" / "index.db").exists()
    assert list((tmp_path / ".nav").iterdir()) == []


HOSTILE_SERVER = """
import os, socket, sys
path = sys.argv[1]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o777)
os.setgid(65534); os.setuid(65534)   # SO_PEERCRED reports who called listen()
srv.listen(5)
print("listening", flush=True)
srv.settimeout(20)
conn, _ = srv.accept()
conn.settimeout(3)
got = b""
try:
    while chunk := conn.recv(65536):
        got += chunk
except OSError:
    pass
print(f"received {len(got)}", flush=True)
if got:
    conn.sendall(b'{"jsonrpc": "2.0", "id": 1, "result": {"forged": true}}\\n')
"""


@pytest.mark.skipif(not IS_ROOT, reason="needs root to act as another local user")
def test_the_client_sends_nothing_to_a_daemon_of_another_user(hostile: Path) -> None:
    paths = daemon_paths(hostile)
    ensure_nav_dir(paths.nav_dir)
    with subprocess.Popen(
        [sys.executable, "-c", HOSTILE_SERVER, str(paths.socket)], stdout=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
            with pytest.raises(UnsafeIndexDirError, match=f"served by another user \\(uid {NOBODY}"):
                DaemonClient(hostile).definitions("hello")
            assert proc.stdout.readline().strip() == "received 0"  # not one byte of the query
            assert proc.wait(timeout=10) == 0
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()


# -- 7. file names: not UTF-8, or with a newline ---------------------------------------------


def test_a_file_name_that_is_not_utf8_is_skipped_and_reported(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {"app.py": "def hello():\n    return 1\n"})
    with open(os.fsencode(root) + b"/bad\xffname.py", "wb") as fh:
        fh.write(b"def bad():\n    pass\n")
    os.mkdir(os.fsencode(root) + b"/dir\xfe")
    result = walk(root, WalkOptions())
    assert [f.path for f in result.files] == ["app.py"]
    assert ("bad\\xffname.py", "file name is not valid UTF-8; rename it to index it") in result.skipped
    out = cli(root, "index")
    assert out.returncode == 0, out.stderr
    assert (
        "Traceback" not in out.stderr
        and "skipped bad\\xffname.py: file name is not valid UTF-8" in out.stderr
    )
    out = cli(root, "index", "--json")
    assert (
        out.returncode == 0
        and ["bad\\xffname.py", "file name is not valid UTF-8; rename it to index it"]
        in json.loads(out.stdout)["skipped"]
    )


def test_a_newline_in_a_file_name_is_escaped_in_human_output(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root, {"new\nline.py": "def newline_thing():\n    return 1\n"})
    assert cli(root, "index").returncode == 0
    out = cli(root, "def", "newline_thing")
    assert out.returncode == 0 and out.stdout.splitlines() == [
        "new\\nline.py:1:5  function  newline_thing  def newline_thing()"
    ]
    js = json.loads(cli(root, "def", "newline_thing", "--json").stdout)
    assert js["items"][0]["path"] == "new\nline.py"  # the data keeps the real name
    with Navigator(root) as nav:
        from navigator.frontends.textout import render_response

        assert (
            render_response(nav.definitions("newline_thing")).splitlines()[0].startswith("new\\nline.py:1:5")
        )


def test_every_refusal_is_a_nav_error_with_a_short_message(hostile: Path) -> None:
    long_target = "../" + "x" * 3000 + ".py:1:1"  # under the 4,096-character cap on targets
    with Navigator(hostile) as nav, pytest.raises(OutsideRootError) as err:
        nav.hover(long_target)
    assert isinstance(err.value, NavError) and len(str(err.value)) < 400 and "…" in str(err.value)
