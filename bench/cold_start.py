"""Cold start: the first complete ``refs`` answer through nav vs the same server asked directly.

    cp -r /work/corpora/pytest-dev-pytest-8.3.4 /tmp/pytest-cold   # nav writes .nav/ into the root
    python bench/cold_start.py --repo /tmp/pytest-cold --name checked_call --rounds 6

Each round, in alternating order (same run, same machine load):

- **direct**: a minimal LSP client of this file's own (JSON-RPC over the server's stdio, no
  multilspy, no nav code in the loop) starts basedpyright-langserver, answers its requests
  (``workspace/configuration`` with the same settings nav gives), waits for the log line
  that says the workspace is loaded (``Found N source files``), asks ``textDocument/references``
  at the definition, and stops the clock at the answer;
- **nav**: ``nav refs NAME --json`` as a user types it, with no daemon running and the index
  already built: the CLI starts the daemon, which warms the servers of the indexed languages
  as it starts; the clock stops when the command prints an answer whose precise (``lsp``)
  hits are the direct client's answer.

Reported: per round both times and the difference, medians, and the paired difference with a
bootstrap 95% interval. Target (issue 8): nav within +1 s of direct.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import select
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.harness.jsonrpc import frame  # noqa: E402
from bench.harness.run import write_json  # noqa: E402
from bench.harness.stats import bootstrap_ci  # noqa: E402
from lsp.registry import BasedPyright, available_definition  # noqa: E402
from navigator.api import Navigator  # noqa: E402
from navigator.paths import daemon_paths  # noqa: E402


class MiniClient:
    """Just enough LSP over stdio to ask one question."""

    def __init__(self, cmd: list[str], root: Path, settings: dict[str, Any]) -> None:
        self.proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        self.settings = settings
        self.buf = b""
        self.next_id = 1
        self.logs: list[str] = []

    def send(self, payload: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(payload))
        self.proc.stdin.flush()

    def request(self, method: str, params: Any) -> int:
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return rid

    def read(self, timeout_s: float) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout_s
        while True:
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if sep:
                m = re.search(rb"Content-Length: (\d+)", head)
                length = int(m.group(1)) if m else 0
                if len(rest) >= length:
                    self.buf = rest[length:]
                    return dict(json.loads(rest[:length]))
            left = end - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return None
                self.buf += chunk

    def pump(self, until: Any, timeout_s: float) -> dict[str, Any]:
        """Answer the server's requests until ``until(message)`` holds."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            msg = self.read(end - time.monotonic())
            if msg is None:
                break
            if "method" in msg and "id" in msg:  # a request from the server
                result: Any = None
                if msg["method"] == "workspace/configuration":
                    result = [_section(self.settings, i.get("section")) for i in msg["params"]["items"]]
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif msg.get("method") == "window/logMessage":
                self.logs.append(str(msg["params"].get("message", "")))
            if until(msg):
                return msg
        raise TimeoutError("no answer in time")

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, 9)
        self.proc.wait(timeout=10)


def _section(settings: dict[str, Any], section: str | None) -> Any:
    if not section:
        return settings
    if section in settings:
        return settings[section]
    node: Any = settings
    for part in section.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def direct(root: Path, path: Path, line0: int, char: int) -> tuple[float, set[tuple[str, int, int]]]:
    found = available_definition("python")
    assert found is not None and found[0].name == "basedpyright"
    definition, binary = found
    started = time.monotonic()
    client = MiniClient([binary, "--stdio"], root, definition.settings(root))
    try:
        uri = root.as_uri()
        rid = client.request("initialize", {
            "processId": os.getpid(), "rootUri": uri, "workspaceFolders": [{"uri": uri, "name": root.name}],
            "capabilities": {"workspace": {"configuration": True, "workspaceFolders": True},
                             "window": {"workDoneProgress": True}},
        })  # fmt: skip
        client.pump(lambda m: m.get("id") == rid and "method" not in m, 60)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        loaded = BasedPyright._FOUND
        client.pump(lambda m: m.get("method") == "window/logMessage"
                    and bool(loaded.search(str(m["params"].get("message", "")))), 120)  # fmt: skip
        rid = client.request("textDocument/references", {
            "textDocument": {"uri": path.as_uri()}, "position": {"line": line0, "character": char},
            "context": {"includeDeclaration": True},
        })  # fmt: skip
        answer = client.pump(lambda m: m.get("id") == rid and "method" not in m, 120)
        elapsed = time.monotonic() - started
    finally:
        client.close()
    hits = {(Path(_path(r["uri"])).relative_to(root).as_posix(), r["range"]["start"]["line"] + 1,
             r["range"]["start"]["character"] + 1) for r in answer.get("result") or []}  # fmt: skip
    return elapsed, hits


def _path(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)


def through_nav(root: Path, name: str, index_dir_env: dict[str, str]) -> tuple[float, set[tuple[str, int, int]], dict[str, Any]]:
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "navigator.frontends.entry", "-C", str(root), "refs", name, "--json"],
                         capture_output=True, text=True, timeout=300, env=index_dir_env)  # fmt: skip
    elapsed = time.monotonic() - started
    data = json.loads(out.stdout)
    hits = {(h["path"], h["line"], h["col"]) for h in data["items"] if h["provenance"] == ["lsp"]}
    return elapsed, hits, data


def stop_daemon(root: Path, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-m", "navigator.frontends.cli", "-C", str(root), "daemon", "stop"],
                   capture_output=True, timeout=60, env=env)  # fmt: skip
    end = time.monotonic() + 30
    while daemon_paths(root).info.exists() and time.monotonic() < end:
        time.sleep(0.1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--name", default="checked_call")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    root = args.repo.resolve()
    env = {**os.environ, "NAV_DAEMON_NO_EMBED": "1"}

    with Navigator(root) as nav:  # the index is built before the clock: a cold *server*, not a cold index
        nav.index()
        rows = nav.resolve(args.name)
        if len(rows) != 1:
            raise SystemExit(f"`{args.name}` has {len(rows)} definitions; pick a name defined once")
        d = rows[0].definition
    path = root / d.path
    text = path.read_text(encoding="utf-8").splitlines()[d.name_span.start_line - 1]
    from lsp.positions import to_lsp

    line0, char = to_lsp(text, d.name_span.start_line, d.name_span.start_col)
    stop_daemon(root, env)

    results = []
    for k in range(args.rounds):
        order = ("direct", "nav") if k % 2 == 0 else ("nav", "direct")
        row: dict[str, Any] = {}
        for which in order:
            if which == "direct":
                row["direct_s"], row["direct_hits"] = direct(root, path, line0, char)
            else:
                row["nav_s"], nav_hits, data = through_nav(root, args.name, env)
                stop_daemon(root, env)
                row["nav_hits"] = nav_hits
                row["nav_complete"] = data["complete"]
                row["nav_reason"] = data["reason"]
                row["nav_notes"] = data["notes"]
        row["same_answer"] = row["nav_hits"] == row["direct_hits"]
        row["diff_s"] = row["nav_s"] - row["direct_s"]
        print(f"round {k + 1} ({order[0]} first): direct {row['direct_s']:.2f}s ({len(row['direct_hits'])} refs), "
              f"nav {row['nav_s']:.2f}s ({len(row['nav_hits'])} precise, same: {row['same_answer']}), "
              f"diff {row['diff_s']:+.2f}s; nav notes: {row['nav_notes']}", file=sys.stderr, flush=True)  # fmt: skip
        results.append(row)
    diffs = [r["diff_s"] for r in results]
    low, high = bootstrap_ci(diffs, rounds=5000, seed=0, symmetric=False)  # its reported intervals
    summary = {
        "repo": root.name,
        "name": args.name,
        "rounds": len(results),
        "direct_median_s": statistics.median(r["direct_s"] for r in results),
        "nav_median_s": statistics.median(r["nav_s"] for r in results),
        "diff_median_s": statistics.median(diffs),
        "diff_mean_s": statistics.fmean(diffs),
        "diff_mean_ci95": [low, high],
        "all_same_answer": all(r["same_answer"] for r in results),
    }
    out = HERE / "results" / f"cold_start-{root.name}.json"
    write_json(out, {"summary": summary, "rounds": [
        {k: (sorted(v) if isinstance(v, set) else v) for k, v in r.items()} for r in results]})  # fmt: skip
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
