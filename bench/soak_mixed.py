"""Mixed use on one root, as users combine nav (issue 17): a daemon, concurrent CLI queries,
``--no-daemon`` queries, Python-API sessions opened and closed, ``nav index`` runs, ``nav lsp`` and
``nav mcp`` sessions opened and closed, file edits, ``git checkout``s, and a second root on the same
machine, all at once for ``--minutes``. Every answer is checked against an oracle that does not share
nav's blind spots: ``rg`` finds the names defined once, and each ``def`` answer must be exactly that
place. Then nav is left idle and its CPU and memory are read from ``/proc``.

    python bench/soak_mixed.py --minutes 30 --idle-minutes 10 --out bench/results/soak-mixed.md
    python bench/soak_mixed.py --repo PATH --second PATH ...   # real repositories (git work trees)

Without ``--repo``, two generated Python repositories (git, two branches) are used. The repositories
are copied into a scratch folder first: the soak edits and checks them out. Reported: answers per
kind with errors (non-zero exit, exception, hang) and wrong answers (differ from the oracle), the
freshness of edits (an added name answered within 10 s), ``PRAGMA integrity_check`` of both indexes
at the end, vectors before and after (0 lost), the daemons' CPU over the idle window, and the RSS of
everything nav left running. Stops every daemon it started. ``tests/test_soak_mixed.py`` runs a
2-minute version and asserts the same properties.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.harness.jsonrpc import frame, read_frame  # noqa: E402

PYTHON = sys.executable
CALL_TIMEOUT_S = 120.0
"""One answer slower than this is a hang (counted as an error)."""
FRESH_WITHIN_S = 10.0
"""An edit or checkout must show in the daemon's answers within this long."""
EDIT_FILE = "soak_edits.py"
BRANCH_FILE = "soak_branch.py"
_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)")


def nav_env(runtime: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("NAV_NO_DAEMON", None)
    env["NAV_RUNTIME_DIR"] = str(runtime)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


def nav(
    root: Path,
    *args: str,
    env: dict[str, str],
    no_daemon: bool = False,
    timeout: float = CALL_TIMEOUT_S,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    cmd = [
        PYTHON,
        "-m",
        "navigator.frontends.cli",
        "-C",
        str(root),
        *(["--no-daemon"] if no_daemon else []),
        *args,
    ]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, input=stdin)


# -- repositories and the oracle ----------------------------------------------------------------------


def generated_repo(root: Path, seed: int, *, files: int = 24) -> Path:
    """A small Python package under git with two branches (``main`` and ``alt``, which differ in
    one file only) and names that are each defined once."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    for i in range(files):
        d = root / f"pkg{i % 4}"
        d.mkdir(exist_ok=True)
        lines = [f'"""Module {i}: orders, invoices and retries ({seed})."""', ""]
        for j in range(5):
            lines += [
                f"class Ledger{seed}_{i}_{j}:",
                f"    def post_entry_{i}_{j}(self, amount):",
                f"        return amount * {rng.randint(2, 99)}",
                "",
                f"def settle_{seed}_{i}_{j}(a, b):",
                f"    return Ledger{seed}_{i}_{j}().post_entry_{i}_{j}(a) - b",
                "",
            ]
        (d / f"mod{i}.py").write_text("\n".join(lines), encoding="utf-8")
    (root / EDIT_FILE).write_text('"""Edited while the soak runs."""\n', encoding="utf-8")
    (root / BRANCH_FILE).write_text("def on_main_branch():\n    return 1\n", encoding="utf-8")
    git = ["git", "-C", str(root), "-c", "user.name=soak", "-c", "user.email=soak@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "main"], check=True)
    subprocess.run([*git, "checkout", "-q", "-b", "alt"], check=True)
    (root / BRANCH_FILE).write_text("def on_alt_branch():\n    return 2\n", encoding="utf-8")
    subprocess.run([*git, "commit", "-q", "-am", "alt"], check=True)
    subprocess.run([*git, "checkout", "-q", "main"], check=True)
    return root


def copy_repo(src: Path, dest: Path) -> Path:
    """A copy of a git work tree (``.nav`` left out) that the soak may edit and check out."""
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(".nav"))
    git = ["git", "-C", str(dest), "-c", "user.name=soak", "-c", "user.email=soak@example.invalid"]
    (dest / EDIT_FILE).write_text('"""Edited while the soak runs."""\n', encoding="utf-8")
    (dest / BRANCH_FILE).write_text("def on_main_branch():\n    return 1\n", encoding="utf-8")
    subprocess.run([*git, "checkout", "-q", "-B", "soak-main"], check=True)
    subprocess.run([*git, "add", EDIT_FILE, BRANCH_FILE], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "soak: main"], check=True)
    subprocess.run([*git, "checkout", "-q", "-B", "soak-alt"], check=True)
    (dest / BRANCH_FILE).write_text("def on_alt_branch():\n    return 2\n", encoding="utf-8")
    subprocess.run([*git, "commit", "-q", "-am", "soak: alt"], check=True)
    subprocess.run([*git, "checkout", "-q", "soak-main"], check=True)
    return dest


def branches(root: Path) -> tuple[str, str]:
    names = subprocess.run(
        ["git", "-C", str(root), "branch", "--format=%(refname:short)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return ("soak-main", "soak-alt") if "soak-main" in names else ("main", "alt")


def oracle(root: Path) -> dict[str, tuple[str, int]]:
    """Python names defined exactly once in the tree, by ``rg`` (git's ignore rules, like nav):
    name -> (path, line). The files the soak edits are left out."""
    out = subprocess.run(
        ["rg", "--no-heading", "-n", "-t", "py", r"^\s*(async\s+)?(def|class)\s+[A-Za-z_]\w*", str(root)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    seen: dict[str, list[tuple[str, int]]] = {}
    for line in out.splitlines():
        path, lineno, text = line.split(":", 2)
        rel = os.path.relpath(path, root)
        if rel in (EDIT_FILE, BRANCH_FILE):
            continue
        m = _DEF.match(text)
        if m:
            seen.setdefault(m.group(1), []).append((rel, int(lineno)))
    real = _real_definitions(root, {p for places in seen.values() for p, _ in places})
    return {
        name: places[0]
        for name, places in seen.items()
        if len(places) == 1 and not name.startswith("_") and (places[0][0], places[0][1], name) in real
    }


def _real_definitions(root: Path, paths: set[str]) -> set[tuple[str, int, str]]:
    """(path, line, name) of every def and class Python's own parser sees: rg's line match also
    takes ``class MyLoader(BaseLoader):`` in a docstring's example, which defines nothing."""
    import ast

    out: set[tuple[str, int, str]] = set()
    for rel in paths:
        try:
            tree = ast.parse((root / rel).read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.add((rel, node.lineno, node.name))
    return out


# -- the tally ----------------------------------------------------------------------------------------


@dataclass
class Tally:
    answers: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    wrong: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)
    stale_s: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ok(self, kind: str) -> None:
        with self.lock:
            self.answers[kind] += 1

    def bad(self, kind: str, what: str, detail: str) -> None:
        with self.lock:
            self.answers[kind] += 1
            (self.errors if what == "error" else self.wrong)[kind] += 1
            if len(self.samples) < 40:
                self.samples.append(f"{kind} {what}: {detail[:400]}")


def def_places(items: list[dict[str, Any]]) -> set[tuple[str, int]]:
    return {(str(i["path"]), int(i["line"])) for i in items}


def check_def_json(
    t: Tally, kind: str, proc: subprocess.CompletedProcess[str], name: str, want: tuple[str, int]
) -> None:
    if proc.returncode != 0:
        t.bad(kind, "error", f"`def {name}` exit {proc.returncode}: {proc.stderr.strip()[-300:]}")
        return
    try:
        got = def_places(json.loads(proc.stdout)["items"])
    except (ValueError, KeyError, TypeError) as exc:
        t.bad(kind, "error", f"`def {name}`: unreadable JSON ({exc}): {proc.stdout[:200]}")
        return
    if got != {want}:
        t.bad(kind, "wrong", f"`def {name}`: {sorted(got)} != {want}")
    else:
        t.ok(kind)


# -- the clients --------------------------------------------------------------------------------------


class Framed:
    """A stdio JSON-RPC peer: LSP's Content-Length frames, or MCP's lines."""

    def __init__(self, cmd: list[str], *, cwd: Path, env: dict[str, str], lsp: bool) -> None:
        self.lsp = lsp
        self.proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.replies: dict[int, dict[str, Any]] = {}
        self.cond = threading.Condition()
        self.closed = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                if self.lsp:
                    msg = read_frame(out)
                    if msg is None:
                        return
                else:
                    line = out.readline()
                    if not line:
                        return
                    msg = json.loads(line)
                if isinstance(msg, dict) and isinstance(msg.get("id"), int) and "method" not in msg:
                    with self.cond:
                        self.replies[msg["id"]] = msg
                        self.cond.notify_all()
        except (ValueError, OSError):
            return
        finally:
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    def send(self, obj: dict[str, Any]) -> None:
        data = frame(obj) if self.lsp else json.dumps(obj).encode() + b"\n"
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(
        self, rid: int, method: str, params: Any, timeout_s: float = CALL_TIMEOUT_S
    ) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout_s
        with self.cond:
            while rid not in self.replies:
                left = deadline - time.monotonic()
                if self.closed:
                    raise RuntimeError(f"{method}: the process closed its output")
                if left <= 0:
                    raise TimeoutError(f"{method}: no reply within {timeout_s:.0f} s")
                self.cond.wait(left)
            return self.replies.pop(rid)

    def close(self, timeout_s: float = 30.0) -> int | None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            return None
        finally:
            with self.cond:  # the reader sees the end of output, then its pipe is closed
                self.cond.wait_for(lambda: self.closed, timeout=10)
            if self.proc.stdout is not None:
                self.proc.stdout.close()


def lsp_session(
    t: Tally,
    root: Path,
    env: dict[str, str],
    names: list[str],
    want: dict[str, tuple[str, int]],
    rng: random.Random,
) -> None:
    peer = Framed([PYTHON, "-m", "navigator.frontends.cli", "lsp"], cwd=root, env=env, lsp=True)
    try:
        reply = peer.request(
            1, "initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {}}
        )
        if "result" not in reply:
            t.bad("lsp", "error", f"initialize: {reply}")
            return
        peer.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        for rid in range(2, 5):
            name = rng.choice(names)
            reply = peer.request(rid, "workspace/symbol", {"query": name})
            if "result" not in reply:
                t.bad("lsp", "error", f"workspace/symbol {name}: {reply.get('error')}")
                continue
            path, line = want[name]
            hits = {
                (
                    os.path.relpath(Path(s["location"]["uri"].removeprefix("file://")), root),
                    s["location"]["range"]["start"]["line"] + 1,
                )
                for s in reply["result"] or []
                if str(s.get("name")).rsplit(".", 1)[-1] == name  # nav lsp names symbols qualified
            }
            if (path, line) not in hits:
                t.bad("lsp", "wrong", f"workspace/symbol {name}: {sorted(hits)[:5]} lacks {(path, line)}")
            else:
                t.ok("lsp")
        reply = peer.request(9, "shutdown", None)
        peer.send({"jsonrpc": "2.0", "method": "exit", "params": None})
    except (RuntimeError, TimeoutError, OSError) as exc:
        t.bad("lsp", "error", str(exc))
    finally:
        peer.close()


def mcp_session(
    t: Tally,
    root: Path,
    env: dict[str, str],
    names: list[str],
    want: dict[str, tuple[str, int]],
    rng: random.Random,
) -> None:
    peer = Framed(
        [PYTHON, "-m", "navigator.frontends.cli", "-C", str(root), "mcp"], cwd=root, env=env, lsp=False
    )
    try:
        reply = peer.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "soak", "version": "1"},
            },
        )
        if "result" not in reply:
            t.bad("mcp", "error", f"initialize: {reply}")
            return
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for rid in range(2, 5):
            name = rng.choice(names)
            reply = peer.request(rid, "tools/call", {"name": "def", "arguments": {"name": name}})
            result = reply.get("result") or {}
            text = "\n".join(c.get("text", "") for c in result.get("content", []))
            path, line = want[name]
            if "result" not in reply or result.get("isError"):
                t.bad("mcp", "error", f"def {name}: {reply.get('error') or text[:300]}")
            elif f"{path}:{line}" not in text:
                t.bad("mcp", "wrong", f"def {name}: {text[:300]!r} lacks {path}:{line}")
            else:
                t.ok("mcp")
    except (RuntimeError, TimeoutError, OSError) as exc:
        t.bad("mcp", "error", str(exc))
    finally:
        peer.close()


def api_session(
    t: Tally, root: Path, names: list[str], want: dict[str, tuple[str, int]], rng: random.Random
) -> None:
    from navigator import Navigator
    from navigator.errors import NavError

    try:
        with Navigator(root) as n:
            for _ in range(3):
                name = rng.choice(names)
                got = {(d.path, d.line) for d in n.definitions(name).items}
                if got != {want[name]}:
                    t.bad("api", "wrong", f"definitions({name}): {sorted(got)} != {want[name]}")
                else:
                    t.ok("api")
    except NavError as exc:
        t.bad("api", "error", f"{type(exc).__name__}: {exc}")


# -- the soak -----------------------------------------------------------------------------------------


def vectors(root: Path) -> int:
    """Vectors in the root's index (its embedding cache), read by a separate process: this one may
    hold connections to the file (closing another descriptor of it here would drop their locks)."""
    code = (
        "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
        "print(c.execute('SELECT count(*) FROM embeddings').fetchone()[0])"
    )
    out = subprocess.run(
        [PYTHON, "-c", code, str(root / ".nav" / "index.db")], capture_output=True, text=True, timeout=60
    )
    return int(out.stdout.strip() or -1)


def integrity(root: Path) -> str:
    code = (
        "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); "
        "print('; '.join(r[0] for r in c.execute('PRAGMA integrity_check')))"
    )
    out = subprocess.run(
        [PYTHON, "-c", code, str(root / ".nav" / "index.db")], capture_output=True, text=True, timeout=300
    )
    return (out.stdout.strip() or out.stderr.strip())[:300]


def daemon_pid(root: Path) -> int | None:
    try:
        return int(json.loads((root / ".nav" / "daemon.json").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def tree(pid: int) -> list[int]:
    """``pid`` and every live process below it."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                if stat[0] != "Z":
                    kids.setdefault(int(stat[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def cpu_s(pids: list[int]) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(f[11]) + int(f[12])) / tick
    return total


def rss_by_process(pids: list[int]) -> list[tuple[float, int, str]]:
    """(MB, pid, command) of each process, largest first."""
    out = []
    for p in pids:
        with contextlib.suppress(OSError, ValueError):
            kb = next(
                int(ln.split()[1])
                for ln in Path(f"/proc/{p}/status").read_text().splitlines()
                if ln.startswith("VmRSS:")
            )
            cmd = (
                Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            )
            out.append((kb / 1024, p, cmd[:120]))
    return sorted(out, reverse=True)


def rss_mb(pids: list[int]) -> float:
    total = 0
    for p in pids:
        with contextlib.suppress(OSError, ValueError):
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total / 1024


def wait_for(pred: Any, timeout_s: float, step_s: float = 0.25) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step_s)  # polling the outside world (a daemon's answers) with a deadline
    return bool(pred())


@dataclass
class SoakResult:
    tally: Tally
    integrity: dict[str, str]
    vectors_before: dict[str, int]
    vectors_after: dict[str, int]
    idle_cpu_pct: float
    idle_s: float
    rss_left_mb: float
    left_running: int
    duration_s: float
    rss_by_process: list[tuple[float, int, str]] = field(default_factory=list)


def soak(
    root: Path,
    second: Path,
    *,
    duration_s: float,
    idle_s: float,
    rss_after_s: float,
    runtime: Path,
    seed: int = 0,
    embed: bool = True,
    log: Any = print,
) -> SoakResult:
    """Run the mixed phase on ``root`` (and queries on ``second``), then the idle window."""
    env = nav_env(runtime)
    rng = random.Random(seed)
    want = oracle(root)
    want2 = oracle(second)
    names = sorted(want)
    names2 = sorted(want2)
    if len(names) < 5 or len(names2) < 5:
        raise SystemExit(
            f"too few names defined once ({len(names)}, {len(names2)}): a bigger repository, please"
        )
    for r in (root, second):
        done = nav(r, "index", *(["--embed"] if embed else []), env=env, no_daemon=True, timeout=3600)
        if done.returncode != 0:
            raise SystemExit(f"nav index {r}: exit {done.returncode}: {done.stderr[-500:]}")
    before = {str(root): vectors(root), str(second): vectors(second)}
    for r in (root, second):
        nav(r, "daemon", "start", env=env, timeout=300)
    log(f"soak: {len(names)} + {len(names2)} names defined once; vectors {before}; {duration_s:.0f} s")
    t = Tally()
    stop = threading.Event()
    writes = threading.Lock()  # edits and checkouts, one at a time
    main_branch, alt_branch = branches(root)

    def loop(fn: Any, pause_s: float) -> Any:
        def run() -> None:
            local = random.Random(rng.random())
            while not stop.is_set():
                try:
                    fn(local)
                except subprocess.TimeoutExpired as exc:
                    t.bad(fn.__name__, "error", f"hang: {exc}")
                except Exception as exc:  # a soak counts every failure, it does not die of one
                    t.bad(fn.__name__, "error", f"{type(exc).__name__}: {exc}")
                stop.wait(pause_s)

        return threading.Thread(target=run, name=fn.__name__, daemon=True)

    def cli(local: random.Random) -> None:
        name = local.choice(names)
        check_def_json(t, "cli", nav(root, "def", name, "--json", env=env), name, want[name])

    def no_daemon(local: random.Random) -> None:
        name = local.choice(names)
        check_def_json(
            t, "no-daemon", nav(root, "def", name, "--json", env=env, no_daemon=True), name, want[name]
        )

    def second_root(local: random.Random) -> None:
        name = local.choice(names2)
        check_def_json(t, "second-root", nav(second, "def", name, "--json", env=env), name, want2[name])

    def search(local: random.Random) -> None:
        code = local.random() < 0.5  # the code view (its learned order) as often as the files view
        view = ["--code"] if code else []
        done = nav(root, "search", "where are ledger entries posted", "-k", "5", *view, "--json", env=env)
        kind = "search --code" if code else "search"
        if done.returncode != 0:
            t.bad(kind, "error", f"exit {done.returncode}: {done.stderr[-300:]}")
            return
        items = json.loads(done.stdout)["items"]
        if not items:
            t.bad(kind, "wrong", "no hits")
        elif code and not all(h["start_line"] <= h["snippet_line"] <= h["end_line"] for h in items):
            t.bad(kind, "wrong", f"a snippet outside its span: {items[0]}")
        else:
            t.ok(kind)

    def index(local: random.Random) -> None:
        done = nav(root, "index", env=env, timeout=600)
        if done.returncode != 0:
            t.bad("index", "error", f"exit {done.returncode}: {done.stderr[-300:]}")
        else:
            t.ok("index")

    def api(local: random.Random) -> None:
        api_session(t, root, names, want, local)

    def lsp(local: random.Random) -> None:
        lsp_session(t, root, env, names, want, local)

    def mcp(local: random.Random) -> None:
        mcp_session(t, root, env, names, want, local)

    counter = [0]

    def fresh(name: str, present: bool) -> bool:
        done = nav(root, "def", name, "--json", env=env)
        if done.returncode == 0:
            return present and bool(json.loads(done.stdout)["items"])
        return not present and done.returncode == 4

    def edit(local: random.Random) -> None:
        with writes:
            counter[0] += 1
            name = f"soak_added_{counter[0]}"
            path = root / EDIT_FILE
            path.write_text(
                path.read_text(encoding="utf-8") + f"\n\ndef {name}():\n    return {counter[0]}\n",
                encoding="utf-8",
            )
            began = time.monotonic()
            if not wait_for(lambda: fresh(name, True), FRESH_WITHIN_S):
                t.bad(
                    "edit",
                    "wrong",
                    f"`{name}` added to {EDIT_FILE} not answered within {FRESH_WITHIN_S:.0f} s",
                )
            else:
                t.ok("edit")
                t.stale_s.append(time.monotonic() - began)
            if counter[0] % 3 == 0:  # and take them out again
                path.write_text('"""Edited while the soak runs."""\n', encoding="utf-8")
                if not wait_for(lambda: fresh(name, False), FRESH_WITHIN_S):
                    t.bad(
                        "edit",
                        "wrong",
                        f"`{name}` removed from {EDIT_FILE} still answered after {FRESH_WITHIN_S:.0f} s",
                    )
                else:
                    t.ok("edit")

    def checkout(local: random.Random) -> None:
        with writes:
            git = ["git", "-C", str(root)]
            subprocess.run([*git, "stash", "-q", "--include-untracked"], capture_output=True, check=False)
            for branch, name in ((alt_branch, "on_alt_branch"), (main_branch, "on_main_branch")):
                subprocess.run([*git, "checkout", "-q", branch], check=True, capture_output=True)
                if not wait_for(lambda name=name: fresh(name, True), FRESH_WITHIN_S):  # type: ignore[misc]
                    t.bad("checkout", "wrong", f"after `git checkout {branch}`: `{name}` not answered")
                else:
                    t.ok("checkout")
            subprocess.run([*git, "stash", "pop", "-q"], capture_output=True, check=False)

    threads = [
        loop(cli, 0.2),
        loop(cli, 0.5),
        loop(no_daemon, 1.0),
        loop(second_root, 0.5),
        loop(search, 2.0),
        loop(index, 15.0),
        loop(api, 2.0),
        loop(lsp, 3.0),
        loop(mcp, 3.0),
        loop(edit, 3.0),
        loop(checkout, 10.0),
    ]
    began = time.monotonic()
    for th in threads:
        th.start()
    stop.wait(duration_s)
    stop.set()
    for th in threads:
        th.join(timeout=CALL_TIMEOUT_S + 30)
    duration = time.monotonic() - began
    log(f"soak: mixed phase over after {duration:.0f} s: {dict(t.answers)}")

    # idle: the daemons (and their language servers) left alone
    pids = [p for r in (root, second) if (p := daemon_pid(r)) is not None]
    procs = [q for p in pids for q in tree(p)]
    wait_for(lambda: False, min(30.0, idle_s / 4))  # let the last re-index settle before the window
    c0 = cpu_s(procs)
    w0 = time.monotonic()
    wait_for(lambda: False, idle_s, step_s=1.0)
    idle_cpu = 100.0 * (cpu_s(procs) - c0) / max(time.monotonic() - w0, 1e-6)
    if rss_after_s > idle_s:
        wait_for(lambda: False, rss_after_s - idle_s, step_s=1.0)
    left = [q for p in pids for q in tree(p)]
    rss = rss_mb(left)
    by_process = rss_by_process(left)
    for r in (root, second):
        nav(r, "daemon", "stop", env=env, timeout=120)
    after = {str(root): vectors(root), str(second): vectors(second)}
    checks = {str(root): integrity(root), str(second): integrity(second)}
    wait_for(lambda: not [p for p in left if alive(p)], 30.0)
    still = [p for p in left if alive(p)]
    return SoakResult(t, checks, before, after, idle_cpu, idle_s, rss, len(still), duration, by_process)


def report(r: SoakResult) -> str:
    t = r.tally
    lines = [
        f"mixed phase {r.duration_s:.0f} s; answers checked against rg",
        "",
        "| kind | answers | errors | wrong |",
        "|---|---|---|---|",
    ]
    for kind in sorted(t.answers):
        lines.append(f"| {kind} | {t.answers[kind]} | {t.errors[kind]} | {t.wrong[kind]} |")
    total = sum(t.answers.values())
    lines.append(f"| **all** | {total} | {sum(t.errors.values())} | {sum(t.wrong.values())} |")
    stale = sorted(t.stale_s)
    if stale:
        lines.append(f"\nedit -> answered: median {stale[len(stale) // 2]:.2f} s, max {stale[-1]:.2f} s")
    lines += [
        "",
        f"integrity_check: {r.integrity}",
        f"vectors before {r.vectors_before}, after {r.vectors_after}",
        f"idle CPU of the daemons and their servers over {r.idle_s:.0f} s: {r.idle_cpu_pct:.2f}% of a core",
        f"RSS of everything nav left running: {r.rss_left_mb:.0f} MB; processes alive after `nav daemon stop`: {r.left_running}",
    ]
    if r.rss_by_process:
        lines += [
            "",
            "what was resident then:",
            *(f"- {mb:.0f} MB  {cmd}" for mb, _pid, cmd in r.rss_by_process[:8]),
        ]
    if t.samples:
        lines += ["", "first failures:", *(f"- {s}" for s in t.samples)]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--idle-minutes", type=float, default=5.0, help="the idle CPU window")
    ap.add_argument("--rss-after-minutes", type=float, default=10.0, help="idle time before RSS is read")
    ap.add_argument("--repo", type=Path, help="a git work tree (copied first); default: generated")
    ap.add_argument("--second", type=Path, help="the second root (copied first); default: generated")
    ap.add_argument("--no-embed", action="store_true", help="skip `nav index --embed` before the soak")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nav-soak-"))
    runtime = work / "runtime"
    runtime.mkdir(mode=0o700)
    try:
        root = copy_repo(args.repo, work / "root") if args.repo else generated_repo(work / "root", 1)
        second = (
            copy_repo(args.second, work / "second") if args.second else generated_repo(work / "second", 2)
        )
        result = soak(
            root,
            second,
            duration_s=args.minutes * 60,
            idle_s=args.idle_minutes * 60,
            rss_after_s=args.rss_after_minutes * 60,
            runtime=runtime,
            embed=not args.no_embed,
        )
        text = report(result)
        print(text)
        if args.out:
            args.out.write_text(
                f"# Mixed-use soak ({time.strftime('%Y-%m-%d')})\n\n    {' '.join(sys.argv)}\n\n{text}\n",
                encoding="utf-8",
            )
        bad = sum(result.tally.errors.values()) + sum(result.tally.wrong.values())
        return 1 if bad else 0
    finally:
        for r in (work / "root", work / "second"):
            if r.exists():
                nav(r, "daemon", "stop", env=nav_env(runtime), timeout=120)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
