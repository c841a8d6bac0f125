"""Bad input always gets a reply, bounded (issue 8 §4): hostile frames to a real daemon process over
its real socket, hostile arguments to the real CLI, the API verbs fuzzed, a real `nav mcp`, and a
client facing a socket that answers garbage.

Every case asserts three things: a clear error (the right JSON-RPC code / exit code / exception
type, naming the bad value shortened to ~100 characters), within a bound, and a daemon that still
answers correctly afterwards.
"""

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
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from navigator.api import Navigator
from navigator.frontends.cli import main
from navigator.frontends.client import DaemonClient
from navigator.frontends.wire import MAX_MESSAGE_BYTES
from navigator.paths import daemon_paths
from storage.errors import NavError, ServerError, UsageError, shorten

FILES = {
    "orders.py": """\
        class Order:
            def total(self) -> int:
                return 0


        def create_sales_order(customer: str) -> Order:
            return Order()
        """,
}
REPO = Path(__file__).parent.parent
QUOTE_BOUND = 100 + 40  # a quoted value: 100 characters, the "…" and "(100,000 characters)"
LINE_BOUND = 400  # a whole error line: the quoted value plus the words around it


# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture
def root(make_repo: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("NAV_DAEMON_NO_EMBED", "1")  # these tests are about input, not the model
    monkeypatch.setenv("NAV_DAEMON_NO_WARM", "1")
    r = make_repo(FILES).resolve()
    yield r
    info = daemon_paths(r).info
    if info.exists():  # never leave a daemon behind
        with contextlib.suppress(ProcessLookupError, ValueError, KeyError):
            os.kill(int(json.loads(info.read_text())["pid"]), signal.SIGKILL)


@pytest.fixture
def client(root: Path) -> Iterator[DaemonClient]:
    c = DaemonClient(root)
    c.connect()  # starts the real daemon process
    yield c
    c.stop()


def daemon_pid(root: Path) -> int:
    return int(json.loads(daemon_paths(root).info.read_text())["pid"])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Raw:
    """A raw socket client: sends exactly the bytes given, reads reply lines, bounded in time."""

    def __init__(self, root: Path, timeout_s: float = 30.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        self.sock.connect(str(daemon_paths(root).socket))
        self.buf = b""

    def send(self, data: bytes) -> None:
        # a big payload is sent from a thread, so the reply can be read while it is still going
        error: list[BaseException] = []

        def go() -> None:
            try:
                self.sock.sendall(data)
            except OSError as exc:
                error.append(exc)

        t = threading.Thread(target=go, daemon=True)
        t.start()
        t.join(timeout=60)
        assert not t.is_alive(), "the daemon stopped reading"

    def reply(self) -> dict[str, Any]:
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            assert chunk, "the daemon closed the connection without a reply"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        value: dict[str, Any] = json.loads(line)
        return value

    def ask(self, data: bytes) -> dict[str, Any]:
        self.send(data)
        return self.reply()

    def ping(self) -> bool:
        return self.ask(b'{"jsonrpc": "2.0", "id": "p", "method": "daemon.ping"}\n').get("result") == {
            "value": "pong"
        }

    def close(self) -> None:
        self.sock.close()


def request(method: str, params: Any, req_id: Any = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": req_id, "method": method, "params": params}).encode() + b"\n"


def still_answers(client: DaemonClient) -> None:
    """The daemon answers a real question correctly after the fault."""
    assert [s.qualified_name for s in client.definitions("create_sales_order").items] == [
        "create_sales_order"
    ]


# -- daemon: JSON-RPC frames -------------------------------------------------------------------


WRONG_TYPES = [
    ("symbols", {"pattern": "order", "limit": "ten"}, "limit", '"ten"'),
    ("symbols", {"pattern": ["order"]}, "pattern", '["order"]'),
    ("definitions", {"name": 5}, "name", "5"),
    ("references", {"target": "Order", "deadline_s": "soon"}, "deadline_s", '"soon"'),
    ("references", {"target": "Order", "limit": 2.5}, "limit", "2.5"),
    ("search", {"text": "order", "k": True}, "k", "true"),
    ("search", {"text": "order", "paths": "src"}, "paths", '"src"'),
    ("outline", {"path": None}, "path", "null"),
    ("repo_map", {"tokens": {"n": 1}}, "tokens", '{"n": 1}'),
    ("index", {"progress": "print"}, "progress", '"print"'),
]


@pytest.mark.parametrize(("method", "params", "param", "shown"), WRONG_TYPES)
def test_wrong_param_types_are_invalid_params_naming_the_parameter(
    root: Path, client: DaemonClient, method: str, params: dict[str, Any], param: str, shown: str
) -> None:
    raw = Raw(root)
    reply = raw.ask(request(method, params))
    assert reply["id"] == 1
    assert reply["error"]["code"] == -32602, reply
    assert f"`{param}`" in reply["error"]["message"] and shown in reply["error"]["message"]
    assert raw.ping()
    raw.close()
    still_answers(client)


def test_out_of_range_values_are_invalid_params_too(root: Path, client: DaemonClient) -> None:
    raw = Raw(root)
    cases = [
        (request("symbols", {"pattern": "a" * 100_000}), "a pattern is too long (100,000 characters"),
        (request("references", {"target": "Order", "deadline_s": 1e308}), "deadline must be between"),
        (request("references", {"target": "orders.py:0:1"}), "line 0 in `orders.py:0:1` is not a position"),
        (request("search", {"text": "order", "k": -1}), "k must be between 1 and 10,000, got -1"),
        (
            request("definitions", {"name": "Or\x1bder"}),
            "cannot contain control characters, got `Or\\x1bder`",
        ),
        (request("definitions", {"name": "Or\udcffder"}), "not valid text"),
        (request("search", {"text": "order", "paths": ["src/\udcff"]}), "an entry of paths is not valid text"),
    ]
    for data, words in cases:
        error = raw.ask(data)["error"]
        assert error["code"] == -32602 and words in error["message"], error
        assert len(error["message"]) < LINE_BOUND
    raw.close()
    still_answers(client)


def test_json_nested_100000_deep_is_answered_and_the_connection_lives(
    root: Path, client: DaemonClient
) -> None:
    raw = Raw(root)
    for deep in (b"[" * 100_000 + b"]" * 100_000, request("symbols", {"pattern": "x"})[:-3] + b"[" * 100_000):
        reply = raw.ask(deep + b"\n")
        assert reply["id"] is None and reply["error"]["code"] in (-32600, -32700), reply
        assert raw.ping()  # the same connection keeps working: the handler thread did not die
    nested: Any = "x"
    for _ in range(40):  # 40 levels: parses fine in Python, refused by the daemon's own bound
        nested = [nested]
    reply = raw.ask(request("symbols", {"pattern": nested}))
    assert reply["error"]["code"] == -32600 and "nested too deep" in reply["error"]["message"]
    raw.close()
    still_answers(client)


def test_a_50_mb_line_is_refused_cheaply_and_the_connection_lives(root: Path, client: DaemonClient) -> None:
    pid = daemon_pid(root)
    raw = Raw(root)
    assert raw.ping()
    cpu_before = cpu_seconds(pid)
    started = time.monotonic()
    reply = raw.ask(
        b'{"jsonrpc": "2.0", "id": 1, "method": "symbols", "params": {"pattern": "'
        + b"a" * 50_000_000
        + b'"}}\n'
    )
    elapsed = time.monotonic() - started
    cpu = cpu_seconds(pid) - cpu_before
    assert reply["error"]["code"] == -32600 and "request too large" in reply["error"]["message"]
    assert elapsed < 10 and cpu < 3, (elapsed, cpu)  # was 31 s of CPU
    assert raw.ping()  # skipped to the line's end: the next request on the connection is served
    raw.close()
    still_answers(client)


def test_a_line_that_never_ends_is_answered_then_dropped(root: Path, client: DaemonClient) -> None:
    raw = Raw(root)
    raw.send(b"x" * (MAX_MESSAGE_BYTES + 10))
    raw.sock.shutdown(socket.SHUT_WR)  # the stream ends before the line does
    error = raw.reply()["error"]
    assert (
        error["code"] == -32600 and "request too large" in error["message"] and "closing" in error["message"]
    )
    assert raw.sock.recv(1) == b""  # and the daemon let the connection go
    raw.close()
    still_answers(client)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"{not json\n", -32700),
        (b"\xff\xfe\xfd\n", -32700),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "symbols", "params": {"pattern": "x", "limit": NaN}}\n',
            -32700,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "symbols", "params": {"pattern": "x", "limit": Infinity}}\n',
            -32700,
        ),
        (b"[1, 2]\n", -32600),
        (b'"just a string"\n', -32600),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "status"}\n', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 42}\n', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "status", "params": "all"}\n', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "symbols", "params": {"__args__": 3}}\n', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "definitions", "params": {"nom": "x"}}\n', -32602),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "__init__"}\n', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "' + b"m" * 100_000 + b'"}\n', -32601),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "status", "params": 7}\n', -32600),
    ],
)
def test_every_malformed_request_gets_a_reply(
    root: Path, client: DaemonClient, data: bytes, code: int
) -> None:
    raw = Raw(root)
    reply = raw.ask(data)
    assert reply["error"]["code"] == code, reply
    assert len(reply["error"]["message"]) < LINE_BOUND + 300  # unknown method lists the verbs
    assert raw.ping()
    raw.close()
    still_answers(client)


@pytest.mark.parametrize(
    ("data", "code", "reply_id"),
    [
        (b"\n", -32700, None),
        (b"   \t\r\n", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "status"}\n', -32600, None),
        (b'{"id": 3, "method": "status"}\n', -32600, 3),
        (b'{"jsonrpc": "2.0", "id": 4}\n', -32600, 4),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "status", "params": [1]}\n', -32602, 5),
        (b'{"jsonrpc": "2.0", "id": 6, "method": "x", "params": {"a": "\xff"}}\n', -32700, 6),
    ],
)
def test_every_line_gets_a_reply_an_empty_one_too(
    root: Path, client: DaemonClient, data: bytes, code: int, reply_id: Any
) -> None:
    """An empty line was skipped: a client that sent one waited for ever (issue 17 §4)."""
    raw = Raw(root)
    reply = raw.ask(data)
    assert reply["error"]["code"] == code and reply["id"] == reply_id, reply
    assert raw.ping()
    raw.close()


def test_a_batch_gets_one_error_per_request_in_it(root: Path, client: DaemonClient) -> None:
    raw = Raw(root)
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "daemon.ping"},
        {"jsonrpc": "2.0", "method": "daemon.ping"},  # a notification: nothing to answer
        {"jsonrpc": "2.0", "id": "b", "method": "daemon.ping"},
    ]
    raw.send(json.dumps(batch).encode() + b"\n")
    replies = [raw.reply(), raw.reply()]
    assert [r["id"] for r in replies] == [1, "b"]
    assert all(r["error"]["code"] == -32600 and "batch" in r["error"]["message"] for r in replies)
    assert raw.ping()  # and nothing else was sent for the batch
    raw.close()


def test_the_client_read_is_bounded_in_all_not_per_read(make_repo: Callable[[dict[str, str]], Path]) -> None:
    """A socket that sends a byte now and then, never a line: the client gives up at its deadline."""
    root = make_repo(FILES).resolve()
    paths = daemon_paths(root)
    paths.nav_dir.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(paths.socket))
    server.listen(1)
    done = threading.Event()

    def trickle() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            while not done.wait(0.2):  # a byte every 0.2 s, within the client's per-read timeout
                with contextlib.suppress(OSError):
                    conn.sendall(b" ")

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    c = DaemonClient(root, autostart=False, timeout_s=2)
    raised: list[BaseException] = []

    def ask() -> None:
        try:
            c.symbols("order")
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            raised.append(exc)

    asker = threading.Thread(target=ask, daemon=True)
    try:
        asker.start()
        asker.join(timeout=30)  # the client's own bound is 2 s; it used to wait for ever
        assert not asker.is_alive(), "the client is still waiting"
        assert isinstance(raised[0], NavError) and "did not answer `symbols` within 2 s" in str(raised[0])
    finally:
        done.set()
        c.close()
        server.close()
        t.join(timeout=10)


def test_a_lone_surrogate_in_a_result_still_crosses(root: Path, client: DaemonClient) -> None:
    """Replies are ASCII JSON: a string that is not valid UTF-8 cannot kill the reply."""
    raw = Raw(root)
    reply = raw.ask(request("definitions", {"name": "x\udcff"}))
    assert reply["error"]["code"] == -32602 and "x\\udcff" in reply["error"]["message"]
    raw.close()


def test_200_concurrent_nonblocking_connects_are_all_accepted_and_answered(
    root: Path, client: DaemonClient
) -> None:
    path = str(daemon_paths(root).socket)
    socks: list[socket.socket] = []
    refused = 0
    for _ in range(200):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except BlockingIOError:  # EAGAIN: the listen backlog was full (162 of 200 with a backlog of 5)
            refused += 1
            s.close()
            continue
        socks.append(s)
    assert refused == 0
    for i, s in enumerate(socks):
        s.setblocking(True)
        s.settimeout(60)
        s.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": "daemon.ping"}).encode() + b"\n")
    answered = 0
    for i, s in enumerate(socks):
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
        answered += json.loads(buf)["id"] == i
        s.close()
    assert answered == 200
    still_answers(client)


def test_client_errors_cross_as_usage_errors_with_the_value_shortened(client: DaemonClient) -> None:
    with pytest.raises(UsageError) as info:
        client.symbols("a" * 100_000)
    assert (
        "a pattern is too long (100,000 characters" in str(info.value) and len(str(info.value)) < LINE_BOUND
    )
    with pytest.raises(UsageError, match="`deadline_s` must be a finite number, got nan"):
        client.references("Order", deadline_s=float("nan"))
    with pytest.raises(UsageError, match="too large"):
        client.search("word " * 1_000_000)  # 5 MB: refused before it is sent, not by a dead pipe
    still_answers(client)


# -- the client's reading side: a socket that answers garbage --------------------------------------


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (b"{not json\n", "unreadable reply"),
        (b"[" * 100_000 + b"\n", "nested too deep"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": NaN}\n', "unreadable reply"),
        (b'{"jsonrpc": "2.0", "id": 1}\n', "unexpected reply"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": [1]}\n', "unexpected result"),
        (b'{"jsonrpc": "2.0", "id": 1, "error": "boom"}\n', "malformed error reply"),
        (b'{"jsonrpc": "2.0", "id": 1, "result": {"type": "os:system", "value": {}}}\n', "cannot read"),
        (
            b'{"jsonrpc": "2.0", "id": 1, "result": {"type": "navigator.results:Response", "value": 3}}\n',
            "cannot read",
        ),
    ],
)
def test_client_turns_a_hostile_reply_into_a_clear_error(
    make_repo: Callable[[dict[str, str]], Path], reply: bytes, words: str
) -> None:
    root = make_repo(FILES).resolve()
    paths = daemon_paths(root)
    paths.nav_dir.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(paths.socket))
    server.listen(1)

    def answer() -> None:
        conn, _ = server.accept()
        with conn, conn.makefile("rb") as f:
            f.readline()
            conn.sendall(reply)

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    c = DaemonClient(root, autostart=False, timeout_s=30)
    try:
        with pytest.raises(ServerError, match=words) as info:
            c.symbols("order")
        assert len(str(info.value)) < LINE_BOUND
    finally:
        c.close()
        server.close()
        t.join(timeout=10)


# -- the CLI, the real process -------------------------------------------------------------------


def run_nav(root: Path, *args: str, daemon: bool) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if daemon:
        env.pop("NAV_NO_DAEMON", None)
    else:
        env["NAV_NO_DAEMON"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "navigator.frontends.entry", "-C", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(REPO),
    )


HUGE = "a" * 100_000
CLI_CASES: list[tuple[list[str], str]] = [
    (["symbols", HUGE], "a pattern is too long (100,000 characters; at most 1,000)"),
    (["def", HUGE], "a symbol name is too long (100,000 characters"),
    (["refs", HUGE], "a symbol name or path:line:col is too long (100,000 characters"),
    (["outline", HUGE], "a path is too long (100,000 characters"),
    (["symbols", "Or\x1bder"], "cannot contain control characters, got `Or\\x1bder`"),
    (["refs", "orders.py:0:1"], "line 0 in `orders.py:0:1` is not a position"),
    (["hover", "orders.py:1:-3"], "column -3 in `orders.py:1:-3` is not a position"),
    (["refs", "orders.py:99999999999999999999:1"], "line 99999999999999999999 is outside `orders.py`"),
    (["refs", "Order", "--deadline", "inf"], "deadline"),
    (["refs", "Order", "--deadline", "nan"], "nan"),
    (["symbols", "x", "-n", HUGE], "is not a valid integer"),
    (["search", "x", "-k", "99999999999"], "k must be between 1 and 10,000, got 99999999999"),
    (["map", "--tokens", "99999999999999999999999"], "tokens must be between 16 and 1,000,000"),
    (["search", "   "], "search text is required"),
    (["daemon", "start", "--idle-timeout", "nan"], "--idle-timeout must be between 1 and 604800 seconds, got nan"),
]


@pytest.mark.parametrize("daemon", [False, True], ids=["in-process", "daemon"])
def test_cli_bad_input_is_a_usage_error_with_the_value_shortened(root: Path, daemon: bool) -> None:
    assert run_nav(root, "index", daemon=False).returncode == 0
    try:
        for args, words in CLI_CASES:
            done = run_nav(root, *args, daemon=daemon)
            label = shorten(" ".join(args))
            assert done.returncode == 2, (label, done.returncode, shorten(done.stderr, 400))
            assert words in done.stderr, (label, shorten(done.stderr, 400))
            assert "Traceback" not in done.stderr and "internal error" not in done.stderr, label
            assert all(len(line) < LINE_BOUND for line in done.stderr.splitlines()), (
                label,
                shorten(done.stderr, 400),
            )
        ok = run_nav(root, "def", "create_sales_order", daemon=daemon)
        assert ok.returncode == 0 and ok.stdout.startswith("orders.py:6:5")
    finally:
        if daemon:
            run_nav(root, "daemon", "stop", daemon=True)


# -- the API verbs and the CLI, fuzzed ------------------------------------------------------------

texts = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
    st.sampled_from(
        ["", " ", "\x00", "a\x00b", "\udcff", "x" * 5000, "orders.py:0:0", "orders.py:-1", "a:1:1"]
    ),
    st.builds(
        lambda n, ln, c: f"{n}:{ln}:{c}",
        st.sampled_from(["orders.py", "../x.py", "/etc/passwd", ""]),
        st.integers(-5, 10**25),
        st.integers(-5, 10**25),
    ),  # fmt: skip
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=3), st.integers(300, 40_000)),
)
numbers = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.none(),
    st.booleans(),
    texts,
)


@pytest.fixture(scope="module")
def fuzz_nav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Navigator]:
    r = tmp_path_factory.mktemp("fuzz")
    (r / "orders.py").write_text("class Order:\n    def total(self) -> int:\n        return 0\n")
    nav = Navigator(r)
    nav.index()
    yield nav
    nav.close()


def check_api_error(exc: NavError) -> None:
    message = str(exc)
    assert len(message) < LINE_BOUND + 200, shorten(message, 300)
    assert "\n" not in message and "\x1b" not in message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(verb=st.sampled_from(["definitions", "symbols", "outline", "references", "callers", "hover"]), value=texts,
       limit=numbers)  # fmt: skip
def test_fuzz_api_verbs_answer_or_raise_a_nav_error(
    fuzz_nav: Navigator, verb: str, value: str, limit: Any
) -> None:
    fn = getattr(fuzz_nav, verb)
    kwargs: dict[str, Any] = {}
    if verb in ("symbols", "references", "callers"):
        kwargs["limit"] = limit
    if verb in ("references", "callers", "hover"):
        kwargs["deadline_s"] = 0.05  # never wait for a server here: any answer or error will do
    try:
        fn(value, **kwargs)
    except NavError as exc:  # anything else (TypeError, OSError, sqlite3...) fails the test
        check_api_error(exc)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, k=numbers, paths=st.one_of(st.none(), st.lists(texts, max_size=3), texts))
def test_fuzz_search_and_map(fuzz_nav: Navigator, text: str, k: Any, paths: Any) -> None:
    for call in (
        lambda: fuzz_nav.search(text, k=k, paths=paths),
        lambda: fuzz_nav.repo_map(tokens=k),
    ):
        try:
            call()
        except NavError as exc:
            check_api_error(exc)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(["def", "symbols", "outline", "refs", "search", "map", "find"]),
       arg=texts.filter(lambda t: "\x00" not in t and not t.startswith("-")),
       option=st.sampled_from([[], ["-n"], ["-k"], ["--deadline"], ["--tokens"]]), number=numbers)  # fmt: skip
def test_fuzz_cli_in_process(
    fuzz_nav: Navigator, command: str, arg: str, option: list[str], number: Any
) -> None:
    args = ["--no-daemon", "-C", str(fuzz_nav.root), command]
    if command != "map":
        args.append(arg)
    if option:
        args += [*option, str(number)]
    if command in ("refs",) and "--deadline" not in option:
        args += ["--deadline", "0.05"]
    result = CliRunner().invoke(main, args, catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1, 2, 3, 4, 7), (result.exit_code, shorten(result.output, 300))
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert all(len(line) < LINE_BOUND for line in result.stderr.splitlines()), shorten(result.stderr, 300)


# -- a real `nav mcp` ------------------------------------------------------------------------------


def test_nav_mcp_find_is_compact_text_and_bad_input_is_a_tool_error(root: Path) -> None:
    assert run_nav(root, "index", daemon=False).returncode == 0
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "navigator.frontends.cli", "--no-daemon", "-C", str(root), "mcp"],
        cwd=str(REPO),
        env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", ""), "NAV_NO_DAEMON": "1"},
    )

    async def go() -> dict[str, Any]:
        async with Client(params) as c:
            out: dict[str, Any] = {}
            out["find"] = await c.call_tool("find", {"query": "create_sales_order", "limit": 5})
            for key, tool, args in [
                ("huge", "find", {"query": HUGE}),
                ("pos", "refs", {"name": "orders.py:0:1"}),
                ("nul", "def", {"name": "Or\x00der"}),
                ("path", "outline", {"path": HUGE}),
                ("type", "find", {"query": "x", "limit": HUGE}),
                ("limit", "search", {"text": "order", "limit": 10**9}),
            ]:
                out[key] = await c.call_tool(tool, args)
            out["after"] = await c.call_tool("def", {"name": "create_sales_order"})
            return out

    out = anyio.run(go)

    def text(result: Any) -> str:
        return "\n".join(c.text for c in result.content if getattr(c, "text", None))

    found = text(out["find"])
    assert not out["find"].is_error
    assert "Found(" not in found and "ranks=" not in found
    assert found.splitlines()[0].startswith("orders.py:6:5  definition  create_sales_order  [")
    assert "    def create_sales_order(customer: str) -> Order" in found
    for key, words in [
        ("huge", "too long (100,000 characters"),
        ("pos", "line 0 in `orders.py:0:1` is not a position"),
        ("nul", "cannot contain control characters"),
        ("path", "a path is too long (100,000 characters"),
        ("type", "limit"),
        ("limit", "limit must be between 1 and 500, got 1000000000"),
    ]:
        assert out[key].is_error and words in text(out[key]), (key, shorten(text(out[key]), 300))
        assert len(text(out[key])) < LINE_BOUND + 200 and "Traceback" not in text(out[key])
    assert text(out["after"]).startswith("orders.py:6:5  function  create_sales_order")


@pytest.mark.parametrize("daemon", [False, True], ids=["in-process", "daemon"])
def test_cli_bad_roots_are_usage_errors(root: Path, tmp_path: Path, daemon: bool) -> None:
    for bad in (tmp_path / "missing", root / "orders.py", tmp_path / ("a" * 5000)):
        done = run_nav(bad, "def", "Order", daemon=daemon)
        assert done.returncode == 2 and "Traceback" not in done.stderr, shorten(done.stderr, 400)
        assert all(len(line) < LINE_BOUND for line in done.stderr.splitlines())
    done = run_nav(root, "index", str(tmp_path / ("a" * 5000)), daemon=daemon)
    assert done.returncode == 2 and "too long" in done.stderr and "Traceback" not in done.stderr


def test_shorten_keeps_messages_one_bounded_line() -> None:
    assert shorten("createSalesOrder") == "createSalesOrder"
    long = shorten("a" * 100_000)
    assert len(long) <= QUOTE_BOUND and long.endswith("(100,000 characters)") and "…" in long
    assert shorten("Or\x1bder\n\x00") == "Or\\x1bder\\n\\x00"  # no cursor moves, no line breaks
    assert shorten("x\udcff") == "x\\udcff"
    nested: Any = []
    for _ in range(10_000):
        nested = [nested]
    assert len(shorten(nested)) < QUOTE_BOUND  # reprlib, bounded in depth as well as length


def test_a_question_ending_in_a_number_is_not_refused_as_a_position(fuzz_nav: Navigator) -> None:
    from navigator import checks

    checks.position("error at line:0", prose=True)  # prose: not a position, nothing to refuse
    with pytest.raises(UsageError, match="line 0 in `orders.py:0:1`"):
        checks.position("orders.py:0:1", prose=True)
    assert fuzz_nav.query("error at line:0", limit=3).items is not None


def test_connections_past_the_cap_are_told_and_closed(root: Path, client: DaemonClient) -> None:
    from navigator.frontends.daemon_socket import MAX_CONNECTIONS

    path = str(daemon_paths(root).socket)
    held: list[socket.socket] = []
    replies: list[dict[str, Any]] = []
    try:
        for i in range(MAX_CONNECTIONS + 10):  # each held open, like an editor that never lets go
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(30)
            s.connect(path)
            held.append(s)
            with contextlib.suppress(OSError):  # a refused connection may be closed already
                s.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": "daemon.ping"}).encode() + b"\n")
            with s.makefile("rb") as f:
                replies.append(json.loads(f.readline()))
        busy = [r for r in replies if "error" in r]
        assert len(busy) >= 10 and len(replies) - len(busy) >= MAX_CONNECTIONS - 5
        assert all(r["error"]["code"] == -32000 and "too many connections" in r["error"]["message"] for r in busy)
    finally:
        for s in held:
            s.close()
    deadline = time.monotonic() + 30  # the slots come back as the daemon sees the connections close
    while True:
        raw = Raw(root)
        try:
            if raw.ping():
                break
        except (AssertionError, KeyError):
            pass
        finally:
            raw.close()
        assert time.monotonic() < deadline, "connection slots never came back"
        time.sleep(0.05)  # waiting for the daemon's handler threads to see EOF, bounded
    still_answers(client)
