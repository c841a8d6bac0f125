"""The console script's lean path (``navigator.frontends.entry``): a warm ``nav refs NAME``
talks to the daemon with ``_socket`` and ``json`` alone and prints what the click CLI prints;
anything unusual goes to the full client. Real daemon, real processes."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from navigator import paths
from navigator.frontends import client as client_mod
from navigator.frontends import daemon as daemon_mod
from navigator.frontends import entry, fastjson, wire
from navigator.frontends.client import DaemonClient
from navigator.results import Found, Hit, HoverInfo, OutlineEntry, Response, SearchHit, Source, Symbol

SCRIPT = "import sys; from navigator.frontends.entry import run; sys.exit(run())"  # what pip's `nav` runs

FILES = {
    "orders.py": """\
        class Order:
            def total(self) -> int:
                return 0


        def create_sales_order(customer: str) -> Order:
            return Order()
        """,
    "jobs.py": """\
        from orders import create_sales_order


        def nightly() -> None:
            create_sales_order("night")
        """,
}


def test_the_copied_constants_and_fields_equal_the_engines() -> None:
    assert entry._NAV_DIR == paths.NAV_DIR
    assert entry._MAX_SOCKET_PATH == paths._MAX_SOCKET_PATH
    assert entry._REQUEST_TIMEOUT_S == client_mod.REQUEST_TIMEOUT_S
    assert entry._MAX_REPLY_BYTES == wire.MAX_REPLY_BYTES
    assert entry._OTHER_ROOT == client_mod.OTHER_ROOT == daemon_mod.OTHER_ROOT
    assert tuple(f.name for f in dataclasses.fields(Response)) == entry._RESPONSE
    for cls in (Symbol, Hit, HoverInfo, Source, OutlineEntry, SearchHit, Found):
        assert entry._ITEMS[wire.type_tag(cls)] == tuple(f.name for f in dataclasses.fields(cls))


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),  # lone surrogates included, as in file names that are not UTF-8
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_fastjson_is_json(value: object) -> None:
    for ensure_ascii in (True, False):
        text = fastjson.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False)
        assert text == json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False)
    raw = json.dumps(value).encode("ascii")
    assert fastjson.loads(raw) == json.loads(raw)
    assert fastjson.loads(b" \n" + raw + b"\r\n") == json.loads(raw)


@pytest.mark.parametrize(
    "raw", [b"", b"   ", b"{", b'{"a": 1} x', b"[1,]", b"NaN", b'{"a": Infinity}', b"\xff"]
)
def test_fastjson_refuses_what_wire_refuses(raw: bytes) -> None:
    with pytest.raises(ValueError):
        fastjson.loads(raw)
    with pytest.raises(ValueError):
        fastjson.dumps(float("nan"), ensure_ascii=True, allow_nan=False)
    assert fastjson.dumps(float("inf"), ensure_ascii=False, allow_nan=True) == "Infinity"


def test_find_root_and_daemon_possible_match_navigator_paths(tmp_path: Path) -> None:
    tree = tmp_path / "a" / "b" / "c"
    tree.mkdir(parents=True)
    cases = [tree, tmp_path / "a"]
    assert entry.find_root(str(tree)) == str(paths.find_root(tree))  # no marker: start itself
    (tmp_path / "a" / ".git").mkdir()
    assert entry.find_root(str(tree)) == str(paths.find_root(tree)) == str(tmp_path / "a")
    (tmp_path / "a" / "b" / ".nav").mkdir()
    assert entry.find_root(str(tree)) == str(paths.find_root(tree)) == str(tmp_path / "a" / "b")
    link = tmp_path / "link"
    link.symlink_to(tree)
    assert entry.find_root(str(link)) == str(paths.find_root(link))
    ro = tmp_path / "ro"
    ro.mkdir()
    cases += [ro, tmp_path / "missing"]
    ro.chmod(0o500)
    try:
        for c in cases:
            assert entry.daemon_possible(str(c)) == paths.daemon_possible(c), c
        if os.geteuid() != 0:  # root may write anywhere
            assert not entry.daemon_possible(str(ro))
    finally:
        ro.chmod(0o700)


@pytest.fixture
def root(make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    r = make_repo(FILES).resolve()
    yield r
    info = paths.daemon_paths(r).info
    if info.exists():  # never leave a daemon behind
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGKILL)


@pytest.fixture
def client(root: Path) -> Iterator[DaemonClient]:
    c = DaemonClient(root)
    yield c
    c.stop()


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}


def _nav(root: Path, *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, "-c", SCRIPT, "-C", str(root), *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _imported(stderr: str) -> set[str]:
    return {
        line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")
    }


def test_a_warm_refs_imports_only_the_lean_path(root: Path, client: DaemonClient) -> None:
    client.connect()
    assert client.references("create_sales_order", deadline_s=90).complete  # the server is loaded
    proc = _nav(root, "refs", "create_sales_order", importtime=True)
    assert proc.returncode == 0, proc.stderr
    assert "jobs.py:5:5" in proc.stdout
    imported = _imported(proc.stderr)
    assert {"navigator.frontends.entry", "_socket", "_json"} <= imported
    heavy = {
        "json",
        "re",
        "typing",
        "dataclasses",
        "pathlib",
        "socket",
        "inspect",
        "navigator.paths",
        "navigator.results",
        "navigator.frontends.client",
        "navigator.frontends.wire",
        "click",
    }
    assert not imported & heavy, imported & heavy


def test_lean_answers_print_what_the_click_cli_prints(root: Path, client: DaemonClient) -> None:
    client.connect()
    assert client.references("create_sales_order", deadline_s=90).complete
    for args in (
        ["refs", "create_sales_order"],
        ["callers", "create_sales_order"],
        ["def", "Order"],
        ["def", "total"],
        ["refs", "Ordr"],  # an error reply: the daemon's SymbolNotFoundError, its exit code
        ["impl", "Order"],
        ["hover", "create_sales_order"],
        ["show", "Order.total"],
        ["show", "orders.py:2"],
        ["symbols", "sales"],
        ["symbols", "zzzqqq"],  # nothing matches: exit 1 and the same words
        ["outline", "orders.py"],
        ["search", "create", "a", "sales", "order"],
        ["find", "who", "calls", "`create_sales_order`"],
        ["find", "Order"],
        ["status"],
    ):
        fast, slow = _nav(root, *args), _cli(root, *args)
        assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr), (
            args
        )
    for args in (
        ["refs", "create_sales_order", "--json"],
        ["def", "Order", "--json"],
        ["outline", "orders.py", "--json"],
        ["show", "Order", "--json"],
        ["search", "sales", "order", "--json"],
        ["status", "--json"],
    ):
        fast_data, slow_data = json.loads(_nav(root, *args).stdout), json.loads(_cli(root, *args).stdout)
        fast_data.pop("elapsed_ms", None)
        slow_data.pop("elapsed_ms", None)
        assert fast_data == slow_data, args


def test_every_lean_verb_imports_only_the_lean_path(root: Path, client: DaemonClient) -> None:
    """hover, show, symbols, outline, search and find against a warm daemon: no click, no engine,
    no language-server client (the fast path of issue 19: `nav hover` imported multilspy)."""
    client.connect()
    assert client.references("create_sales_order", deadline_s=90).complete
    heavy = {
        "click",
        "multilspy",
        "sqlite_utils",
        "numpy",
        "navigator.api",
        "lsp.pool",
        "navigator.frontends.client",
    }
    for args in (
        ["hover", "create_sales_order"],
        ["show", "Order"],
        ["symbols", "sales"],
        ["outline", "orders.py"],
        ["search", "sales", "order"],
        ["find", "Order"],
        ["status"],
        ["status", "--json"],
    ):
        proc = _nav(root, *args, importtime=True)
        assert proc.returncode == 0, (args, proc.stderr[-2000:])
        imported = _imported(proc.stderr)
        assert "navigator.frontends.entry" in imported
        assert not imported & heavy, (args, imported & heavy)


def test_no_daemon_yet_the_full_client_starts_one(root: Path, client: DaemonClient) -> None:
    assert not paths.daemon_paths(root).socket.exists()
    proc = _nav(root, "def", "Order")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("orders.py:1:7")
    assert client.daemon_status()["pid"] > 0  # the one the script started
    # a stale socket file nobody listens on: the lean path cannot connect, the client restarts
    client.stop()
    sock = paths.daemon_paths(root).socket
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(sock))
    stale.close()
    proc = _nav(root, "def", "Order")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("orders.py:1:7")


def test_a_bad_root_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for bad in (tmp_path / "nowhere", tmp_path / "file"):
        proc = _nav(bad, "refs", "x")
        assert proc.returncode == 2 and str(bad) in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr


def test_status_with_a_team_store_configured_is_the_click_commands(root: Path, client: DaemonClient) -> None:
    """The store line needs the configuration read (tomllib): the lean path leaves it to click."""
    client.connect()
    (root / ".nav.toml").write_text('[store]\nurl = "postgresql://nav:secret@db.example/nav"\n')
    fast, slow = _nav(root, "status"), _cli(root, "status")
    assert fast.returncode == slow.returncode == 0, fast.stderr
    assert "store:" in fast.stdout and "secret" not in fast.stdout
    assert fast.stdout.splitlines()[:3] == slow.stdout.splitlines()[:3]
