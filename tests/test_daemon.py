"""The warm daemon end to end: real processes, a real socket, the real watcher."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from navigator.api import Navigator
from navigator.frontends.client import DaemonClient, start_daemon
from navigator.paths import daemon_paths
from storage.errors import SymbolNotFoundError, UsageError

FILES = {
    "orders.py": """\
        class Order:
            def total(self) -> int:
                return 0


        def create_sales_order(customer: str) -> Order:
            return Order()
        """,
}


def daemon_pid(root: Path) -> int:
    return int(json.loads(daemon_paths(root).info.read_text())["pid"])


def process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie (our own child, not yet reaped) also counts as gone
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split(")")[-1].split()[0] == "Z"


@pytest.fixture
def root(
    make_repo: Callable[[dict[str, str]], Path],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> Iterator[Path]:
    if "background" not in request.node.name:
        monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")  # no model load where the test is not about it
    if "warm" not in request.node.name:
        monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    r = make_repo(FILES).resolve()
    yield r
    info = daemon_paths(r).info
    if info.exists():  # never leave a daemon behind
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(daemon_pid(r), signal.SIGKILL)


@pytest.fixture
def client(root: Path) -> Iterator[DaemonClient]:
    c = DaemonClient(root)
    yield c
    c.stop()


def test_autostart_answers_like_the_api(root: Path, client: DaemonClient) -> None:
    remote = client.definitions("create_sales_order")
    local = Navigator(root, index_dir=root / ".nav-local").definitions("create_sales_order")
    assert remote.items == local.items
    assert (
        client.outline("orders.py").items
        == Navigator(root, index_dir=root / ".nav-local").outline("orders.py").items
    )
    assert client.daemon_status()["pid"] == daemon_pid(root)


def test_errors_cross_the_socket_as_the_same_exceptions(client: DaemonClient) -> None:
    with pytest.raises(SymbolNotFoundError) as info:
        client.definitions("create_sales_ordr")
    assert info.value.suggestions and "create_sales_order" in info.value.suggestions[0]
    with pytest.raises(UsageError, match="bad parameters for `definitions`"):
        client.call("definitions", "a", "b", "c")  # the daemon checks what the wire carries


def test_malformed_requests_do_not_kill_the_daemon(root: Path, client: DaemonClient) -> None:
    client.connect()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(daemon_paths(root).socket))
    f = sock.makefile("rwb")
    replies = []
    for raw in (b"{not json\n", b"[1, 2]\n", b'{"jsonrpc": "2.0", "id": 7, "method": "rm_rf"}\n'):
        f.write(raw)
        f.flush()
        replies.append(json.loads(f.readline()))
    f.close()
    sock.close()
    assert [r["error"]["code"] for r in replies] == [-32700, -32600, -32601]
    assert "unknown method `rm_rf`" in replies[2]["error"]["message"]
    assert client.definitions("Order").items[0].name == "Order"


def wait_for_sync(client: DaemonClient, after: int) -> None:
    """Wait for the event "the watcher re-indexed" (the daemon's sync counter moves)."""
    deadline = time.monotonic() + 20
    while client.daemon_status()["syncs"] <= after:
        assert time.monotonic() < deadline, "the watcher never re-indexed"
        time.sleep(0.02)  # polling the daemon's own counter over RPC, bounded


def test_watcher_makes_edits_visible(root: Path, client: DaemonClient) -> None:
    assert client.definitions("Order").items
    assert client.daemon_status()["watching"]
    syncs = client.daemon_status()["syncs"]
    (root / "billing.py").write_text("def invoice():\n    return 1\n")
    wait_for_sync(client, syncs)
    assert client.definitions("invoice").items[0].path == "billing.py"
    syncs = client.daemon_status()["syncs"]
    (root / "billing.py").unlink()
    wait_for_sync(client, syncs)
    with pytest.raises(SymbolNotFoundError):
        client.definitions("invoice")


def test_kill_9_then_the_next_call_recovers(root: Path, client: DaemonClient) -> None:
    assert client.definitions("Order").items
    pid = daemon_pid(root)
    os.kill(pid, signal.SIGKILL)
    assert daemon_paths(root).socket.exists()  # stale socket left behind
    assert client.definitions("Order").items[0].name == "Order"
    assert daemon_pid(root) != pid


def test_two_starters_at_once_share_one_daemon(root: Path) -> None:
    words: list[str] = []
    threads = [threading.Thread(target=lambda: words.append(start_daemon(root))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(words) == ["busy", "ready"]
    clients = [DaemonClient(root) for _ in range(2)]
    results: list[object] = []

    def ask(c: DaemonClient) -> None:
        results.append(c.symbols("order").items[0].name)

    threads = [threading.Thread(target=ask, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["Order", "Order"]
    assert clients[0].daemon_status()["pid"] == clients[1].daemon_status()["pid"]
    assert clients[0].stop()
    clients[1].close()
    assert not clients[1].stop()  # already gone, and stop() never starts one


def test_idle_timeout_exits_and_cleans_up(root: Path) -> None:
    paths = daemon_paths(root)
    proc = subprocess.Popen(
        [sys.executable, "-m", "navigator.frontends.daemon", str(root), "--idle-timeout", "1", "--no-watch"],
        cwd=Path(__file__).parent.parent,
    )
    assert proc.wait(timeout=30) == 0
    assert not paths.socket.exists() and not paths.info.exists()


def test_cli_uses_the_daemon(root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}
    nav = [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root)]
    first = subprocess.run([*nav, "def", "Order.total"], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.startswith("orders.py:2:9")
    subprocess.run([*nav, "def", "Order"], env=env, capture_output=True, text=True, check=True)
    status = subprocess.run([*nav, "daemon", "status", "--json"], env=env, capture_output=True, text=True)
    assert json.loads(status.stdout)["requests"] >= 3
    missing = subprocess.run([*nav, "def", "Ordr"], env=env, capture_output=True, text=True)
    assert missing.returncode == 4 and "did you mean `Order`" in missing.stderr
    stop = subprocess.run([*nav, "daemon", "stop"], env=env, capture_output=True, text=True)
    assert stop.stdout.strip() == "daemon stopped"


def test_vectors_fill_in_the_background(root: Path, client: DaemonClient) -> None:
    first = client.search("make a new order for a customer", k=3)
    assert first.items  # lexical legs answer at once, whatever the vectors
    deadline = time.monotonic() + 120
    while True:  # wait for the event "background embedding done", reported by the daemon
        vectors = client.daemon_status()["vectors"]
        if vectors and vectors.split("/")[0] == vectors.split("/")[1]:
            break
        assert time.monotonic() < deadline, f"vectors never completed: {vectors}"
        time.sleep(0.05)
    done = client.search("make a new order for a customer", k=3)
    assert done.complete, done.reason
    assert any("vector" in h.ranks for h in done.items)


def test_cli_client_path_imports_no_heavy_modules(root: Path, client: DaemonClient) -> None:
    client.connect()  # a daemon serves the root
    env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "navigator.frontends.cli", "-C", str(root), "def", "Order"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.startswith("orders.py:1:7")
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line
    }
    heavy = {
        "torch",
        "faiss",
        "sentence_transformers",
        "tree_sitter",
        "tree_sitter_language_pack",
        "multilspy",
    }
    assert not imported & heavy, imported & heavy


def test_servers_of_the_main_language_are_warmed_at_start(root: Path, client: DaemonClient) -> None:
    for i in range(5):
        (root / f"job{i}.py").write_text(
            f"from orders import create_sales_order\n\n\ndef job{i}():\n    return create_sales_order('c{i}')\n"
        )
    client.stop()  # start again: the daemon warms servers after its first index
    deadline = time.monotonic() + 180
    while client.daemon_status()["servers"].get("python") != "running":
        assert time.monotonic() < deadline, client.daemon_status()["servers"]
        time.sleep(0.05)  # polling the daemon's own report of the warm-up, bounded
    refs = client.references("create_sales_order", deadline_s=10)
    assert refs.complete and all(h.provenance == ("lsp",) for h in refs.items)
    assert {h.path for h in refs.items} >= {f"job{i}.py" for i in range(5)}
    # a file saved now reaches the warm server through the watcher's paths, not a walk
    syncs = client.daemon_status()["syncs"]
    (root / "late.py").write_text("from orders import create_sales_order\n\nLATE = create_sales_order('z')\n")
    wait_for_sync(client, syncs)
    refs = client.references("create_sales_order", deadline_s=30)
    late = [h for h in refs.items if h.path == "late.py"]
    assert refs.complete and late and all(h.provenance == ("lsp",) for h in late)


def test_servers_of_every_indexed_language_are_warmed_at_start(root: Path, client: DaemonClient) -> None:
    # one Python file and one JavaScript file: each language's server starts with the daemon
    (root / "web").mkdir()
    (root / "web" / "app.js").write_text("function hello() {\n  return 1;\n}\n\nhello();\n")
    deadline = time.monotonic() + 180
    while set(client.daemon_status()["servers"].values()) != {"running"} or len(client.daemon_status()["servers"]) < 2:
        assert time.monotonic() < deadline, client.daemon_status()["servers"]
        time.sleep(0.05)  # polling the daemon's own report of the warm-up, bounded
    assert set(client.daemon_status()["servers"]) == {"python", "javascript"}
    refs = client.references("hello", deadline_s=30)
    assert refs.complete and {(h.path, h.line) for h in refs.items} == {("web/app.js", 1), ("web/app.js", 5)}


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["def", "Order"], (None, "def", "Order", False)),
        (["-C", "/r", "refs", "Order.total", "--json"], ("/r", "refs", "Order.total", True)),
        (["--root=/r", "callers", "f"], ("/r", "callers", "f", False)),
        (["refs", "f", "--deadline", "3"], None),  # any option but --json: the click CLI
        (["refs", "--help"], None),
        (["refs"], None),
        (["search", "how", "do", "we", "retry"], (None, "search", "how do we retry", False)),
        (["search", "--code", "how"], None),  # an option: the click CLI
        (["status"], None),
        (["--no-daemon", "def", "x"], None),
    ],
)
def test_fast_path_takes_only_the_exact_hot_shapes(argv: list[str], parsed: object) -> None:
    from navigator.frontends.entry import _parse

    assert _parse(argv) == parsed


def test_fast_path_prints_what_the_click_cli_prints(root: Path, client: DaemonClient) -> None:
    client.connect()
    env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}

    def run(module: str, *args: str) -> tuple[int, str, str]:
        p = subprocess.run(
            [sys.executable, "-m", module, "-C", str(root), *args], env=env, capture_output=True, text=True
        )
        return p.returncode, p.stdout, p.stderr

    # the server loaded first: an answer that waited for loading says so, and only the first one waits
    assert client.references("create_sales_order", deadline_s=90).complete
    for args in (["def", "Order"], ["def", "total"], ["def", "Ordr"], ["refs", "create_sales_order"]):
        assert run("navigator.frontends.entry", *args) == run("navigator.frontends.cli", *args), args
    fast = json.loads(run("navigator.frontends.entry", "def", "Order", "--json")[1])
    slow = json.loads(run("navigator.frontends.cli", "def", "Order", "--json")[1])
    fast.pop("elapsed_ms")
    slow.pop("elapsed_ms")
    assert fast == slow


def test_a_repository_with_packages_named_like_navs_does_not_stand_in_for_them(
    make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The daemon starts in the caller's folder, usually the repository: its own top-level
    `navigator/` or `storage/` package must not be imported in place of nav's (nor run)."""
    monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    trap = "import pathlib\npathlib.Path(__file__).parent.parent.joinpath('IMPORTED').touch()\nraise ImportError('the repository code ran')\n"
    root = make_repo({**FILES, "navigator/__init__.py": trap, "storage/__init__.py": trap}).resolve()
    monkeypatch.chdir(root)
    c = DaemonClient(root)
    try:
        assert [s.path for s in c.definitions("Order").items] == ["orders.py"]
    finally:
        c.stop()
    assert not (root / "IMPORTED").exists()


def test_a_daemon_whose_code_changed_on_disk_gives_way_to_one_running_the_new_code(
    root: Path, tmp_path: Path
) -> None:
    """nav upgraded (or pulled, editable) while its daemon runs: the next command is answered by
    a new daemon running the new code, not by the stale one, and without an error. nav's
    packages are copied so that this test can change "nav's code on disk"."""
    import shutil

    import navigator

    source = Path(navigator.__file__).resolve().parent.parent
    code = tmp_path / "code"
    for pkg in ("navigator", "semantic", "storage", "lsp"):
        shutil.copytree(source / pkg, code / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "NAV_NO_DAEMON"}
    env["PYTHONPATH"] = str(code)

    def nav(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-P", "-m", "navigator.frontends.entry", "-C", str(root), *args],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip

    first = nav("def", "create_sales_order")
    assert first.returncode == 0 and "orders.py" in first.stdout, first.stderr
    old = daemon_pid(root)
    later = time.time() + 5
    os.utime(code / "navigator" / "api.py", (later, later))  # "the new version" of a module
    time.sleep(1.1)  # the daemon reads its code's stamp at most once a second
    second = nav("def", "create_sales_order")
    assert second.returncode == 0 and "orders.py" in second.stdout, second.stderr
    new = daemon_pid(root)
    assert new != old and process_gone(old)
    assert "code changed on disk" in daemon_paths(root).log.read_text()
    third = nav("def", "create_sales_order")  # the new daemon is not stale: it stays
    assert third.returncode == 0 and daemon_pid(root) == new
    nav("daemon", "stop")
