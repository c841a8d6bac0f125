"""Many processes on one index (issue 17, section 1): a daemon answers `nav def` while other
processes open and close the same `.nav/index.db` — `nav --no-daemon def`, `with Navigator(root)`
sessions, `nav --no-daemon index`, `nav index` through the daemon — each after an edit, for a
given time. Every daemon answer is checked (a name defined once, at a known place).

    PYTHONPATH=$PWD python bench/index_sharing.py --seconds 120

Prints: steps, daemon answers, errors, wrong answers, index files the daemon holds deleted,
``integrity_check`` at the end, and whether one daemon served it all.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from faultkit import make_repo, nav_env  # noqa: E402

SESSION = (
    "import sys\nfrom navigator.api import Navigator\n"
    "with Navigator(sys.argv[1]) as nav:\n    assert nav.definitions('Config').items\n"
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="nav-sharing-") as tmp:
        root = make_repo(Path(tmp) / "repo", files=40).resolve()
        env = nav_env()
        env["NAV_DAEMON_NO_EMBED"] = "1"
        env["NAV_DAEMON_NO_WARM"] = "1"

        def nav(*a: str, daemon: bool = True) -> subprocess.CompletedProcess[str]:
            argv = [sys.executable, "-m", "navigator.frontends.cli", "-C", str(root)]
            argv += [] if daemon else ["--no-daemon"]
            return subprocess.run([*argv, *a], env=env, capture_output=True, text=True, timeout=120)

        if nav("index", daemon=False).returncode or nav("def", "Config").returncode:
            print("setup failed", file=sys.stderr)
            return 1
        pid = int(json.loads((root / ".nav" / "daemon.json").read_text())["pid"])
        rng = random.Random(args.seed)
        errors = wrong = answers = steps = 0
        t0 = time.monotonic()
        try:
            while time.monotonic() - t0 < args.seconds:
                steps += 1
                (root / f"soak{steps % 5}.py").write_text(f"def soaked_{steps}():\n    return {steps}\n")
                kind = rng.choice(["no-daemon def", "session", "no-daemon index", "daemon index"])
                if kind == "no-daemon def":
                    other = nav("def", f"soaked_{steps}", daemon=False)
                elif kind == "session":
                    other = subprocess.run(
                        [sys.executable, "-c", SESSION, str(root)],
                        env=env,
                        capture_output=True,
                        text=True,
                        timeout=120,
                    )
                elif kind == "no-daemon index":
                    other = nav("index", daemon=False)
                else:
                    other = nav("index")
                errors += other.returncode != 0
                for name, want in (
                    (f"soaked_{steps}", f"soak{steps % 5}.py:1:5"),
                    ("helper_3_2", "pkg3/mod3.py"),
                ):
                    out = nav("def", name)
                    answers += 1
                    if out.returncode != 0:
                        errors += 1
                        print(f"error after {kind}: {out.stderr.strip()[:200]}", file=sys.stderr)
                    elif not out.stdout.startswith(want):
                        wrong += 1
                        print(f"wrong after {kind}: {out.stdout.strip()[:200]}", file=sys.stderr)
            deleted = 0
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    deleted += "index.db" in target and target.endswith("(deleted)")
            same = json.loads((root / ".nav" / "daemon.json").read_text())["pid"] == pid
        finally:
            nav("daemon", "stop")
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        try:
            with contextlib.closing(sqlite3.connect(root / ".nav" / "index.db")) as db:
                check = str(db.execute("PRAGMA integrity_check").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            check = str(exc)
        print(
            f"steps={steps} daemon_answers={answers} errors={errors} wrong={wrong} "
            f"deleted_index_fds={deleted} integrity={check} one_daemon={same}"
        )
        return 0 if errors == wrong == deleted == 0 and check == "ok" and same else 1


if __name__ == "__main__":
    sys.exit(main())
