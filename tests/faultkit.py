"""Helpers for the fault tests and the fault bench: generated repositories, real processes, /proc.

No sleeps to wait for something: every wait polls for the event with a deadline.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable


def nav_env() -> dict[str, str]:
    """The environment for a `python -m navigator.frontends.cli` subprocess running this checkout's code."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("NAV_NO_DAEMON", None)
    return env


def nav_cmd(root: Path, *args: str, no_daemon: bool = True) -> list[str]:
    return [PYTHON, "-m", "navigator.frontends.cli", "-C", str(root), *(["--no-daemon"] if no_daemon else []), *args]


def run_nav(
    root: Path, *args: str, timeout: float = 120.0, no_daemon: bool = True
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        nav_cmd(root, *args, no_daemon=no_daemon),
        env=nav_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def write_module(root: Path, i: int, rng: random.Random, version: int = 0) -> None:
    d = root / f"pkg{i % 8}"
    d.mkdir(parents=True, exist_ok=True)
    lines = [f'"""module {i} v{version}"""', ""]
    for j in range(6):
        lines += [
            f"class Model{i}_{j}:",
            f"    def handle_{j}(self, value):",
            f"        return value * {rng.randint(1, 99)} + {version}",
            "",
            f"def helper_{i}_{j}(a, b):",
            f"    return Model{i}_{j}().handle_{j}(a) - b",
            "",
        ]
    (d / f"mod{i}.py").write_text("\n".join(lines), encoding="utf-8")


def make_repo(root: Path, *, files: int = 220, seed: int = 0) -> Path:
    """A Python repository big enough that the indexer uses its process pool (150+ files)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    (root / "config.py").write_text("class Config:\n    debug = False\n", encoding="utf-8")
    for i in range(files):
        write_module(root, i, rng)
    return root


def rewrite_modules(root: Path, *, files: int, rng: random.Random, version: int) -> None:
    """Change every module, so the next run re-parses them all (through the pool)."""
    for i in range(files):
        write_module(root, i, rng, version)


def descendants(pid: int) -> list[int]:
    """The live processes below ``pid``: its children, theirs (a forkserver's parse workers)..."""
    out: list[int] = []
    todo = [pid]
    while todo:
        kids = children(todo.pop())
        out += kids
        todo += kids
    return out


def parse_workers(pid: int) -> list[int]:
    """The processes parsing for ``pid``'s index run: forked by it, or by its forkserver
    (multiprocessing's forkserver and resource tracker count too: they must end with it)."""
    return [p for p in descendants(pid) if "multiprocessing" in _cmdline(p) or _cmdline(p) == _cmdline(pid)]


def workers_of(pid: int) -> list[int]:
    """The parse workers themselves: ``pid``'s forked copies, or its forkserver's children."""
    out = []
    for kid in children(pid):
        if _cmdline(kid) == _cmdline(pid):
            out.append(kid)
        elif "multiprocessing.forkserver" in _cmdline(kid):
            out += children(kid)
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def children(pid: int) -> list[int]:
    """The live (non-zombie) child processes of ``pid``, from /proc."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(entry))
    return out


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has ended: it only waits to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_until(pred: object, timeout: float, what: str) -> float:
    """Poll ``pred()`` until true; return the seconds it took; raise TimeoutError naming ``what``."""
    start = time.monotonic()
    delay = 0.005
    while True:
        if pred():  # type: ignore[operator]
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def lock_is_free(path: Path) -> bool:
    """True when nobody holds an flock on ``path``."""
    import fcntl

    if not path.exists():
        return True
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


DAEMON_LAUNCH = r"""
import json, os, sys
events = []

def hook(event, args):
    if event == "import" and str(args[0]).split(".")[0] == "multilspy":
        events.append("import multilspy")
    elif event == "subprocess.Popen":
        events.append("spawn " + os.path.basename(str(args[1][0] if args[1] else args[0])))

sys.addaudithook(hook)
from navigator.frontends.daemon import main

code = main(sys.argv[1:])
print(json.dumps(events))
sys.exit(code)
"""
"""``python -c DAEMON_LAUNCH ROOT ...``: the daemon's ``main`` under an audit hook that records, in
order, when multilspy is imported and each process spawned (printed as JSON on exit)."""


def running_in(root: Path) -> list[str]:
    """Processes (not zombies) whose working folder is ``root`` (the language servers run there),
    as ``"pid: command line"``."""
    out: list[str] = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd") != str(root):
                continue
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[-1].split()[0] == "Z":
                    continue
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{pid}: {cmd}")
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return out
