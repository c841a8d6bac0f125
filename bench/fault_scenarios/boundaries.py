"""Fault scenarios for trust boundaries (issue 8 §3, file names from §4).

Hostile inputs against the real parts: symlinks out of the root, positions outside it through
every front end (Python API, CLI process, daemon, ``nav lsp`` over stdio, ``nav mcp``), a
``.nav`` that is a symlink, world-readable index files, likely-secret files, a ``.gitignore``
changed under a running daemon, a socket folder or listener planted by another user, and file
names that are not UTF-8 or hold a newline.

Columns: ``honest`` = refused or answered with a clear error / report and nothing private in any
output; ``recovered`` = the next ordinary query answered correctly with no hand step; ``lost`` =
*leaks*: a secret marker in any answer or output, a byte written through a hostile link, an index
file readable by others, a query byte sent to another user's socket. ``lost`` must be 0.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.fault_scenarios import FaultResult, Scenario
from bench.harness.jsonrpc import frame

AREA = "boundaries"
SECRET = "sk-live-bench-5e2c"
NOBODY = 65534
_ENV = {**os.environ, "NAV_DAEMON_NO_EMBED": "1", "NAV_DAEMON_NO_WARM": "1", "HF_HUB_OFFLINE": "1"}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _hostile_repo(workdir: Path) -> Path:
    secrets = workdir / "secrets"
    _write(secrets, {"key.py": f'API_KEY = "{SECRET}"\n\n\ndef leak_me():\n    return API_KEY\n'})
    (secrets / "key.py").chmod(0o600)
    root = workdir / "repo"
    _write(root, {"app.py": "def hello():\n    return 1\n\n\ndef main():\n    return hello()\n"})
    return root


def _cli(
    root: Path, *args: str, daemon: bool = False, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = dict(_ENV)
    env.pop("NAV_NO_DAEMON", None)
    if not daemon:
        env["NAV_NO_DAEMON"] = "1"
    flags = [] if daemon else ["--no-daemon"]
    return subprocess.run(
        [sys.executable, "-m", "navigator.frontends.cli", *flags, "-C", str(root), *args],
        capture_output=True, text=True, timeout=timeout, env=env,
    )  # fmt: skip


def _leaks(text: str) -> int:
    return int(SECRET in text or "root:x:0:0" in text)


def _hello_ok(nav: Any) -> bool:
    try:
        return bool(nav.definitions("hello").items[0].path == "app.py")
    except Exception:
        return False


# -- symlinks --------------------------------------------------------------------------------


def symlinks_out_of_the_root(workdir: Path) -> list[FaultResult]:
    from navigator import Navigator

    root = _hostile_repo(workdir)
    links = {
        "passwd.py": Path("/etc/passwd"),
        "key.py": workdir / "secrets" / "key.py",
        "deep/chain.py": root / "hop.py",  # a link to a link that leaves the root
    }
    (root / "hop.py").symlink_to(workdir / "secrets" / "key.py")
    for rel, target in links.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).symlink_to(target)
    injected = len(links) + 1
    with Navigator(root) as nav:
        report = nav.index()
        skipped = {p for p, why in report.skipped if "outside the root" in why}
        outputs = [repr(nav.search(q, k=20).items) for q in ("root:x:0:0", SECRET, "API_KEY leak_me")]
        try:
            outputs.append(repr(nav.definitions("leak_me").items))
        except Exception as exc:
            outputs.append(str(exc))
        db = (nav.index_path).read_bytes()
        honest = len(skipped & {*links, "hop.py"})
        lost = sum(_leaks(o) for o in outputs) + int(SECRET.encode() in db)
        recovered = injected if _hello_ok(nav) else 0
    return [FaultResult(AREA, "file symlinks leading out of the root (/etc/passwd, a sibling's secret, a chain)",
                        injected, honest, recovered, lost)]  # fmt: skip


def server_follows_a_symlink(workdir: Path) -> list[FaultResult]:
    """The language server reads a linked file on its own; its locations there must not be served."""
    from navigator import Navigator

    root = _hostile_repo(workdir)
    _write(workdir / "secrets", {"calls.py": f"from app import hello\n\nX = hello()  # {SECRET}\n"})
    (root / "calls.py").symlink_to(workdir / "secrets" / "calls.py")
    with Navigator(root) as nav:
        nav.index()
        resp = nav.references("hello", deadline_s=90)
        served = [h for h in resp.items if h.path not in ("app.py",)]
        lost = len(served) + sum(_leaks(h.code) for h in resp.items)
        honest = int(not served and any("outside the root left out" in n for n in resp.notes))
        recovered = int({(h.path, h.line) for h in resp.items} == {("app.py", 1), ("app.py", 6)})
    return [
        FaultResult(AREA, "a language server's locations reached through a file symlink out of the root (refs)",
                    1, honest, recovered, lost, note=f"server: {resp.source}")
    ]  # fmt: skip


def symlink_swapped_in_after_indexing(workdir: Path) -> list[FaultResult]:
    from navigator import Navigator
    from navigator.confine import read_inside
    from navigator.exact_targets import Files

    root = _hostile_repo(workdir)
    _write(root, {"util.py": "from app import hello\n\n\ndef twice():\n    return hello() + hello()\n"})
    nav = Navigator(root, refresh=False)
    nav.index()
    (root / "util.py").unlink()
    (root / "util.py").symlink_to(workdir / "secrets" / "key.py")
    outputs: list[str] = []
    honest = 0
    files = Files(nav.root, nav.exact.table)
    checks = [read_inside(root, "util.py") is None, files.lines("util.py") is None]
    honest += sum(checks)
    try:
        outputs.append(repr(nav.outline("util.py")))
    except Exception as exc:
        outputs.append(str(exc))
        honest += int("outside the root" in str(exc))
    nav.close()
    lost = sum(_leaks(o) for o in outputs) + (len(checks) - sum(checks))
    with Navigator(root) as fresh:
        recovered = 3 if _hello_ok(fresh) and "util.py" not in fresh.store.file_rows() else 0
    return [FaultResult(AREA, "an indexed file replaced by a symlink out of the root, then read (lines, outline)",
                        3, honest, recovered, lost)]  # fmt: skip


# -- positions outside the root, every front end ----------------------------------------------

POSITIONS = ["../secrets/key.py:1:1", "/etc/passwd:999:1", "key.py:4:5", "../secrets/missing.py:1:1"]


def _refused(text: str) -> bool:
    return "is outside the root" in text and not _leaks(text)


def positions_outside_the_root(workdir: Path) -> list[FaultResult]:
    import anyio
    from mcp import Client

    from navigator import Navigator
    from navigator.frontends.client import DaemonClient
    from navigator.frontends.mcp_server import build_server

    root = _hostile_repo(workdir)
    (root / "key.py").symlink_to(workdir / "secrets" / "key.py")
    rows: list[FaultResult] = []
    nav = Navigator(root)
    nav.index()

    # Python API
    outputs = []
    for pos in POSITIONS:
        for verb in (nav.hover, nav.references, nav.definition, nav.query):
            try:
                outputs.append(repr(verb(pos)))
            except Exception as exc:
                outputs.append(str(exc))
    n = len(outputs)
    rows.append(FaultResult(AREA, "PATH:LINE:COL outside the root: Python API (hover/refs/def/query)", n,
                            sum(_refused(o) for o in outputs), n if _hello_ok(nav) else 0,
                            sum(_leaks(o) for o in outputs)))  # fmt: skip

    # MCP, in-process through the mcp package's own client
    async def mcp_calls() -> list[str]:
        async with Client(build_server(nav)) as client:
            out = []
            for pos in POSITIONS:
                for tool, arg in (("find", "query"), ("refs", "name")):
                    res = await client.call_tool(tool, {arg: pos})
                    out.append("\n".join(c.text for c in res.content if getattr(c, "text", None)))
            res = await client.call_tool("def", {"name": "hello"})
            out.append("OK " + "\n".join(c.text for c in res.content if getattr(c, "text", None)))
            return out

    outputs = anyio.run(mcp_calls)
    ok = outputs.pop()
    n = len(outputs)
    rows.append(FaultResult(AREA, "PATH:LINE:COL outside the root: nav mcp (find/refs)", n,
                            sum(_refused(o) for o in outputs), n if "app.py:1:5" in ok else 0,
                            sum(_leaks(o) for o in outputs)))  # fmt: skip
    nav.close()

    # CLI processes (in-process engine) and the daemon
    outputs, codes = [], []
    for verb, pos in zip(("hover", "refs", "callers", "find"), POSITIONS, strict=True):
        out = _cli(root, verb, pos)
        outputs.append(out.stdout + out.stderr)
        codes.append(out.returncode)
    honest = sum(_refused(o) and c == 2 for o, c in zip(outputs, codes, strict=True))
    ok = _cli(root, "def", "hello")
    rows.append(FaultResult(AREA, "PATH:LINE:COL outside the root: CLI (exit 2)", len(outputs), honest,
                            len(outputs) if ok.returncode == 0 and "app.py:1:5" in ok.stdout else 0,
                            sum(_leaks(o) for o in outputs)))  # fmt: skip
    client = DaemonClient(root)
    try:
        outputs = []
        for pos in POSITIONS:
            try:
                outputs.append(repr(client.hover(pos)))
            except Exception as exc:
                outputs.append(str(exc))
        rec = len(outputs) if _hello_ok(client) else 0
    finally:
        client.stop()
    rows.append(FaultResult(AREA, "PATH:LINE:COL outside the root: daemon", len(outputs),
                            sum(_refused(o) for o in outputs), rec, sum(_leaks(o) for o in outputs)))  # fmt: skip

    # nav lsp over stdio, spoken to with raw JSON-RPC frames
    outputs, rec = _lsp_session(root, workdir)
    rows.append(FaultResult(AREA, "PATH:LINE:COL / URI outside the root: nav lsp (nav/find, nav/refs, hover)",
                            len(outputs), sum(_refused(o) for o in outputs), rec,
                            sum(_leaks(o) for o in outputs)))  # fmt: skip
    return rows


def _lsp_session(root: Path, workdir: Path) -> tuple[list[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_ENV,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    buf = b""

    def send(msg: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(frame(msg))
        proc.stdin.flush()

    def reply(req_id: int, timeout_s: float = 60.0) -> dict[str, Any]:
        nonlocal buf
        deadline = time.monotonic() + timeout_s
        assert proc.stdout is not None
        while True:
            head, sep, rest = buf.partition(b"\r\n\r\n")
            if sep:
                length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
                if len(rest) >= length:
                    msg = json.loads(rest[:length])
                    buf = rest[length:]
                    if msg.get("id") == req_id:
                        return dict(msg)
                    continue
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                raise TimeoutError(f"nav lsp did not answer request {req_id}")
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("nav lsp exited")
            buf += chunk

    outputs: list[str] = []
    rec = 0
    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}})  # fmt: skip
        reply(1)
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        req = 2
        calls: list[tuple[str, dict[str, Any]]] = [("nav/find", {"query": p}) for p in POSITIONS]
        calls += [("nav/refs", {"name": p}) for p in POSITIONS]
        for uri in ((workdir / "secrets" / "key.py").as_uri(), (root / "key.py").as_uri()):
            calls.append(("textDocument/hover",
                          {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}))  # fmt: skip
        for method, params in calls:
            send({"jsonrpc": "2.0", "id": req, "method": method, "params": params})
            outputs.append(json.dumps(reply(req)))
            req += 1
        send({"jsonrpc": "2.0", "id": req, "method": "workspace/symbol", "params": {"query": "hello"}})
        ok = reply(req)
        rec = len(outputs) if "app.py" in json.dumps(ok.get("result")) else 0
        send({"jsonrpc": "2.0", "id": req + 1, "method": "shutdown"})
        reply(req + 1)
        send({"jsonrpc": "2.0", "method": "exit"})
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
    return outputs, rec


# -- .nav and the socket -------------------------------------------------------------------------


def _open_to_others(nav_dir: Path) -> int:
    bad = int(stat.S_IMODE(os.lstat(nav_dir).st_mode) & 0o077 != 0)
    for p in nav_dir.iterdir():
        if p.is_file() and stat.S_IMODE(os.lstat(p).st_mode) & 0o077:
            bad += 1
    return bad


def index_files_private(workdir: Path) -> list[FaultResult]:
    from navigator import Navigator

    results = []
    # a fresh index of a 0600 file, and an older world-readable .nav
    for case in ("fresh", "old 0755/0644 .nav"):
        root = _hostile_repo(workdir / case.split()[0])
        (root / "app.py").chmod(0o600)
        if case != "fresh":
            (root / ".nav").mkdir()
            os.chmod(root / ".nav", 0o755)
            (root / ".nav" / "index.db").touch()
            os.chmod(root / ".nav" / "index.db", 0o644)
        with Navigator(root) as nav:
            nav.index()
            nav.search("hello", k=1)
            open_now = _open_to_others(root / ".nav")
            results.append((open_now, _hello_ok(nav)))
    lost = sum(o for o, _ in results)
    return [FaultResult(AREA, "index of a 0600 file (fresh .nav, and an old world-readable one): files open to others",
                        2, sum(o == 0 for o, _ in results), sum(ok for _, ok in results), lost)]  # fmt: skip


def nav_symlink(workdir: Path) -> list[FaultResult]:
    from navigator import Navigator

    root = _hostile_repo(workdir)
    victim = workdir / "someone-elses"
    victim.mkdir()
    (victim / "data.sqlite").write_bytes(b"precious")
    (root / ".nav").symlink_to(victim)
    outputs = []
    try:
        Navigator(root).index()
        outputs.append("indexed through the link")
    except Exception as exc:
        outputs.append(f"{type(exc).__name__}: {exc}")
    for args, daemon in ((("index",), False), (("def", "hello"), True)):
        out = _cli(root, *args, daemon=daemon)
        outputs.append(f"exit {out.returncode}: {out.stderr}")
    honest = sum("is a symlink" in o and "Traceback" not in o for o in outputs)
    lost = len(list(victim.iterdir())) - 1 + int((victim / "data.sqlite").read_bytes() != b"precious")
    return [FaultResult(AREA, ".nav is a symlink to another folder (API, CLI, daemon start)", len(outputs), honest,
                        0, lost, note="refused by design; the user removes the link")]  # fmt: skip


def likely_secrets(workdir: Path) -> list[FaultResult]:
    from navigator import Navigator

    files = {
        ".env": f"TOKEN={SECRET}\n", ".env.local": f"TOKEN={SECRET}\n", "deploy/id_rsa": f"{SECRET}\n",
        "deploy/id_ed25519": f"{SECRET}\n", "config/credentials.json": f'{{"t": "{SECRET}"}}\n',
        "certs/tls.pem": f"{SECRET}\n", "certs/tls.key": f"{SECRET}\n", "certs/a.p12": f"{SECRET}\n",
        ".netrc": f"password {SECRET}\n", ".pgpass": f"*:*:*:*:{SECRET}\n",
    }  # fmt: skip
    root = _hostile_repo(workdir)
    _write(root, files)
    with Navigator(root) as nav:
        report = nav.index()
        reported = {p for p, why in report.skipped if "likely secret" in why}
        found = nav.search(SECRET, k=50).items
        lost = len({h.path for h in found if SECRET in h.snippet}) + len(
            set(files) & set(nav.store.file_rows())
        )
        ok = _hello_ok(nav)
    return [FaultResult(AREA, "likely-secret files not in .gitignore (.env, id_rsa, *.pem, credentials.json…)",
                        len(files), len(reported & set(files)), len(files) if ok else 0, lost)]  # fmt: skip


def gitignore_under_the_daemon(workdir: Path) -> list[FaultResult]:
    from navigator.frontends.client import DaemonClient
    from storage.errors import SymbolNotFoundError

    root = _hostile_repo(workdir)
    _write(root, {"notes/plan.py": f"def private_plan():\n    return '{SECRET}'\n"})
    old = {k: os.environ.get(k) for k in ("NAV_DAEMON_NO_EMBED", "NAV_DAEMON_NO_WARM")}
    os.environ.update(NAV_DAEMON_NO_EMBED="1", NAV_DAEMON_NO_WARM="1")
    client = DaemonClient(root)
    honest = lost = 0
    try:
        client.definitions("private_plan")
        syncs = client.daemon_status()["syncs"]
        (root / ".gitignore").write_text("notes/\n")
        deadline = time.monotonic() + 20
        while client.daemon_status()["syncs"] <= syncs and time.monotonic() < deadline:
            time.sleep(0.02)  # polling the daemon's own counter, bounded
        try:
            client.definitions("private_plan")
            lost += 1
        except SymbolNotFoundError:
            honest += 1
        lost += sum(SECRET in h.snippet for h in client.search(SECRET, k=20).items)
        recovered = 1 if _hello_ok(client) else 0
    finally:
        client.stop()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return [
        FaultResult(
            AREA, ".gitignore changed while the daemon runs (no nav index)", 1, honest, recovered, lost
        )
    ]


_LISTENER = """
import os, socket, sys
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
os.setgid(65534); os.setuid(65534)
srv.listen(5); print("listening", flush=True)
srv.settimeout(20); conn, _ = srv.accept(); conn.settimeout(3); got = b""
try:
    while chunk := conn.recv(65536): got += chunk
except OSError: pass
print(len(got), flush=True)
"""


def hostile_socket(workdir: Path) -> list[FaultResult]:
    import tempfile

    from navigator.frontends.client import DaemonClient
    from navigator.paths import daemon_paths, ensure_nav_dir, socket_dir
    from storage.errors import UnsafeIndexDirError

    if os.geteuid() != 0:
        return [FaultResult(AREA, "socket folder / listener planted by another user", 0, 0, 0, 0,
                            note="skipped: needs root to act as another user")]  # fmt: skip
    rows = []
    # a folder planted at the fallback place, owned by another user or a symlink
    tmp = workdir / "tmp"
    tmp.mkdir(mode=0o1777)
    saved = (os.environ.get("TMPDIR"), os.environ.pop("XDG_RUNTIME_DIR", None), tempfile.tempdir,
             os.environ.get("XDG_CACHE_HOME"))  # fmt: skip
    os.environ["TMPDIR"], tempfile.tempdir = str(tmp), None
    os.environ["XDG_CACHE_HOME"] = str(workdir / "cache")  # the user's own fallback, here not in ~
    planted = tmp / f"nav-{os.getuid()}"
    used: list[Path | None] = []  # the folder nav chose for each planted variant (None: it refused)
    try:
        planted.mkdir(mode=0o777)
        os.chown(planted, NOBODY, NOBODY)
        for undo, redo in ((planted.rmdir, lambda: planted.symlink_to(workdir)), (planted.unlink, None)):
            try:
                used.append(socket_dir())
            except UnsafeIndexDirError:
                used.append(None)
            undo()
            if redo is not None:
                redo()
        recovered = 2 if socket_dir() == planted else 0
    finally:
        for name, value in (("TMPDIR", saved[0]), ("XDG_CACHE_HOME", saved[3])):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if saved[1] is not None:
            os.environ["XDG_RUNTIME_DIR"] = saved[1]
        tempfile.tempdir = saved[2]

    def private(path: Path) -> bool:
        st = os.lstat(path)
        return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not stat.S_IMODE(st.st_mode) & 0o077

    # Honest: refused, or (since cb224da) the user's own private folder instead; lost: the planted one used.
    honest = sum(p is None or (p != planted and private(p)) for p in used)
    rows.append(FaultResult(AREA, "socket folder planted first by another user (owned by nobody, a symlink)",
                            2, honest, recovered, sum(p == planted for p in used),
                            note="nav uses the user's own cache folder instead"))  # fmt: skip

    # a listener of another user where the daemon's socket should be
    root = _hostile_repo(workdir / "peer")
    paths = daemon_paths(root)
    ensure_nav_dir(paths.nav_dir)
    with subprocess.Popen([sys.executable, "-c", _LISTENER, str(paths.socket)], stdout=subprocess.PIPE,
                          text=True) as proc:  # fmt: skip
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
            try:
                DaemonClient(root).definitions("hello")
                message = "answered"
            except Exception as exc:
                message = str(exc)
            received = int(proc.stdout.readline().strip() or "-1")
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
    rows.append(FaultResult(AREA, "the daemon's socket served by another user's process (SO_PEERCRED)", 1,
                            int("served by another user" in message), 0, int(received != 0),
                            note="refused by design; the user removes the socket"))  # fmt: skip
    return rows


def file_names(workdir: Path) -> list[FaultResult]:
    root = _hostile_repo(workdir)
    with open(os.fsencode(root) + b"/bad\xffname.py", "wb") as fh:
        fh.write(b"def bad():\n    pass\n")
    _write(root, {"new\nline.py": "def newline_thing():\n    return 1\n"})
    out = _cli(root, "index")
    honest = int(out.returncode == 0 and "Traceback" not in out.stderr and "bad\\xffname.py" in out.stderr)
    shown = _cli(root, "def", "newline_thing")
    honest += int(shown.returncode == 0 and shown.stdout.splitlines()[:1] == [
        "new\\nline.py:1:5  function  newline_thing  def newline_thing()"])  # fmt: skip
    ok = _cli(root, "def", "hello")
    recovered = 2 if ok.returncode == 0 and "app.py:1:5" in ok.stdout else 0
    return [FaultResult(AREA, "file names not valid UTF-8, or holding a newline (nav index, nav def)", 2, honest,
                        recovered, 0)]  # fmt: skip


def parser_bomb(workdir: Path) -> list[FaultResult]:
    """A file tree-sitter is quadratic on (a Python function holding 20,000 comment lines took
    43 s to index): the run ends within its parse budget and names the file; the rest answers."""
    root = _hostile_repo(workdir)
    _write(root, {"bomb.py": "def bomb():\n" + "".join(f"    # line {i} of marker text\n" for i in range(20_000))
                  + "    return 1\n"})  # fmt: skip
    started = time.monotonic()
    out = _cli(root, "index", timeout=300)
    elapsed = time.monotonic() - started
    honest = int(
        out.returncode == 0 and elapsed < 60 and "Traceback" not in out.stderr
        and "bomb.py (not parsed: the python parser took over" in out.stderr
    )  # fmt: skip
    ok = _cli(root, "def", "hello")
    found = _cli(root, "search", "line 19999 of marker text")
    recovered = int(ok.returncode == 0 and "app.py:1:5" in ok.stdout and "bomb.py" in found.stdout)
    return [FaultResult(AREA, "a file the parser is quadratic on (20,000 comment lines in a function)", 1, honest,
                        recovered, 0, note=f"nav index {elapsed:.0f} s")]  # fmt: skip


SCENARIOS: list[Scenario] = [
    symlinks_out_of_the_root,
    server_follows_a_symlink,
    symlink_swapped_in_after_indexing,
    positions_outside_the_root,
    index_files_private,
    nav_symlink,
    likely_secrets,
    gitignore_under_the_daemon,
    hostile_socket,
    file_names,
    parser_bomb,
]
