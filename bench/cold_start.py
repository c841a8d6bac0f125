"""Cold start: the first complete ``refs`` answer through nav vs the same server asked directly.

    cp -r /work/corpora/pytest-dev-pytest-8.3.4 /tmp/pytest-cold   # nav writes .nav/ into the root
    python bench/cold_start.py --language python --repo /tmp/pytest-cold --name checked_call --rounds 6
    git --git-dir=/work/.mirror/trpc+trpc/repo archive HEAD | tar -x -C /tmp/trpc
    python bench/cold_start.py --language typescript --repo /tmp/trpc --name NAME --rounds 6
    git --git-dir=/work/.mirror/mochajs+mocha/repo archive HEAD | tar -x -C /tmp/mocha  # plain JS, allowJs
    python bench/cold_start.py --language javascript --repo /tmp/mocha --name createInvalidArgumentTypeError

Each round, in alternating order (same run, same machine load):

- **direct**: a minimal LSP client of this file's own (JSON-RPC over the server's stdio, no
  multilspy, no nav code in the loop) starts the server nav would start for the language, with
  the same command line, initialization options and ``workspace/configuration`` answers (read
  from nav's server table: configuration, not client code), and asks
  ``textDocument/references`` at the definition. When it asks: basedpyright says in a log line
  that the workspace is loaded (``Found N source files``), and it asks once then. The other
  servers have no such line that a client could rely on, so the client opens the file and asks
  again and again until the answer equals the *final* one: the answer of an untimed calibration
  run that waited until the server's progress reports had ended and the answer stayed the
  same three times a second apart. The clock stops at that answer;
- **nav**: ``nav refs NAME --json`` as a user types it, with no daemon running and the index
  already built: the CLI starts the daemon, which warms the servers of the indexed languages
  as it starts; the clock stops when the command prints an answer whose precise (``lsp``)
  hits are the direct client's answer.

Reported: per round both times and the difference, medians, and the paired difference with a
bootstrap 95% interval. Target (issues 8, 19): nav within +1 s of direct, in every language.
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
from lsp.registry import available_definition  # noqa: E402
from navigator.api import Navigator  # noqa: E402
from navigator.paths import daemon_paths  # noqa: E402


class MiniClient:
    """Just enough LSP over stdio to ask one question."""

    def __init__(
        self, cmd: list[str], root: Path, settings: dict[str, Any], env: dict[str, str] | None = None
    ) -> None:
        self.proc = subprocess.Popen(cmd, cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True, env=env)  # fmt: skip
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


_FOUND = re.compile(r"Found \d+ source files?|No source files found")
"""basedpyright's log line once the workspace is loaded (its own wording, matched here)."""

Hits = set[tuple[str, int, int]]


def _hits(root: Path, answer: Any) -> Hits:
    out: Hits = set()
    for r in answer or []:
        if isinstance(r, dict) and "uri" in r:
            rel = Path(_path(r["uri"])).resolve().relative_to(root).as_posix()
            out.add((rel, r["range"]["start"]["line"] + 1, r["range"]["start"]["character"] + 1))
    return out


class Direct:
    """One server started as nav starts it, spoken to by :class:`MiniClient`."""

    def __init__(self, language: str, root: Path) -> None:
        found = available_definition(language)
        if found is None:
            raise SystemExit(f"no server installed for {language}")
        self.definition, binary = found
        self.root = root
        self.language = language
        self.definition.prepare(root)  # nav-owned inputs (compile_commands.json, a shadow go.mod...)
        launch = self.definition.launch(root, binary)
        self.client = MiniClient(list(launch.cmd), Path(launch.cwd), self.definition.settings(root),
                                 env={**os.environ, **launch.env})  # fmt: skip
        self.active: set[str] = set()  # $/progress tokens begun and not ended
        self.progress_seen = False

    def start(self) -> None:
        folder = self.definition.workspace_folder(self.root).as_uri()
        rid = self.client.request("initialize", {
            "processId": os.getpid(), "rootUri": folder, "rootPath": _path(folder),
            "workspaceFolders": [{"uri": folder, "name": self.root.name}],
            "initializationOptions": self.definition.initialization_options(self.root),
            "capabilities": {"workspace": {"configuration": True, "workspaceFolders": True},
                             "window": {"workDoneProgress": True},
                             "textDocument": {"references": {}, "synchronization": {}}},
        })  # fmt: skip
        self.wait(lambda m: m.get("id") == rid and "method" not in m, 120)
        self.client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def wait(self, until: Any, timeout_s: float) -> dict[str, Any]:
        def seen(m: dict[str, Any]) -> bool:
            if m.get("method") == "$/progress":
                value = (m.get("params") or {}).get("value") or {}
                token = str((m.get("params") or {}).get("token"))
                if value.get("kind") == "begin":
                    self.active.add(token)
                    self.progress_seen = True
                elif value.get("kind") == "end":
                    self.active.discard(token)
            return bool(until(m))

        return self.client.pump(seen, timeout_s)

    def open(self, path: Path) -> None:
        self.client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": path.as_uri(), "languageId": self.definition.language_id(str(path)), "version": 1,
            "text": path.read_text(encoding="utf-8")}}})  # fmt: skip

    def references(self, path: Path, line0: int, char: int, timeout_s: float = 300) -> Hits | None:
        rid = self.client.request("textDocument/references", {
            "textDocument": {"uri": path.as_uri()}, "position": {"line": line0, "character": char},
            "context": {"includeDeclaration": True},
        })  # fmt: skip
        answer = self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout_s)
        return None if "error" in answer else _hits(self.root, answer.get("result"))

    def drain(self, seconds: float) -> None:
        """Read (and answer) what the server says for ``seconds``."""
        with contextlib.suppress(TimeoutError):
            self.wait(lambda m: False, seconds)

    def close(self) -> None:
        self.client.close()


def calibrate(language: str, root: Path, path: Path, line0: int, char: int) -> tuple[Hits, float]:
    """The final answer: asked once a second after the file is opened, until no progress is
    running and the same non-empty answer came three times in a row (at most 10 minutes). A
    server that reports its loading (nav waits for it: ``loading`` and not ready at once) must
    have begun it: tsserver's syntax-only server answers a file's own references, the same three
    times, in the seconds before the project load begins (a 3-of-12 "final" answer on mocha)."""
    started = time.monotonic()
    d = Direct(language, root)
    reports = d.definition.loading is not None and not d.definition.ready_after_initialize
    try:
        d.start()
        d.open(path)
        history: list[Hits | None] = []
        while time.monotonic() - started < 600:
            d.drain(1.0)
            history.append(d.references(path, line0, char))
            last = history[-3:]
            loaded = d.progress_seen or not reports
            if len(last) == 3 and last[0] and all(h == last[0] for h in last) and not d.active and loaded:
                assert last[0] is not None
                return last[0], time.monotonic() - started
        raise SystemExit(f"{language}: the answer did not settle within 10 minutes: {history[-3:]}")
    finally:
        d.close()


def direct(
    language: str, root: Path, path: Path, line0: int, char: int, final: Hits | None
) -> tuple[float, Hits, int]:
    """Seconds from launch to the final answer, the answer, and how many times it was asked."""
    started = time.monotonic()
    d = Direct(language, root)
    asked = 0
    try:
        d.start()
        if final is None:  # basedpyright: its own signal, then one question
            d.wait(lambda m: m.get("method") == "window/logMessage"
                   and bool(_FOUND.search(str(m["params"].get("message", "")))), 300)  # fmt: skip
            hits = d.references(path, line0, char)
            asked = 1
        else:
            d.open(path)
            while True:
                hits = d.references(path, line0, char)
                asked += 1
                if hits == final:
                    break
                if time.monotonic() - started > 600:
                    raise SystemExit(f"{language}: no final answer within 10 minutes")
                d.drain(0.05)
        elapsed = time.monotonic() - started
    finally:
        d.close()
    return elapsed, hits or set(), asked


def _path(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)


def through_nav(
    root: Path, name: str, index_dir_env: dict[str, str]
) -> tuple[float, set[tuple[str, int, int]], dict[str, Any]]:
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "navigator.frontends.entry", "-C", str(root), "refs", name, "--json",
                          "--deadline", "600", "--limit", "10000"],
                         capture_output=True, text=True, timeout=700, env=index_dir_env)  # fmt: skip
    elapsed = time.monotonic() - started
    if out.returncode != 0 or not out.stdout.strip():
        raise SystemExit(f"nav refs {name} failed ({out.returncode}): {out.stderr.strip()[-500:]}")
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
    ap.add_argument(
        "--language",
        default="python",
        help="nav's language name: python, typescript, javascript, go, c, cpp, java",
    )
    ap.add_argument("--repo", type=Path, required=True)
    ap.add_argument("--name", default="checked_call")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tag", default="", help="result file: results/cold_start-LANGUAGE[-TAG].json")
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
    server = available_definition(args.language)
    server_name = server[0].name if server else None
    final: Hits | None = None
    settle_s = None
    if server_name != "basedpyright":
        final, settle_s = calibrate(args.language, root, path, line0, char)
        print(
            f"calibration: final answer {len(final)} refs, settled after {settle_s:.1f}s",
            file=sys.stderr,
            flush=True,
        )

    results = []
    for k in range(args.rounds):
        order = ("direct", "nav") if k % 2 == 0 else ("nav", "direct")
        row: dict[str, Any] = {}
        for which in order:
            if which == "direct":
                row["direct_s"], row["direct_hits"], row["direct_asked"] = direct(
                    args.language, root, path, line0, char, final
                )
            else:
                try:
                    row["nav_s"], nav_hits, data = through_nav(root, args.name, env)
                finally:
                    stop_daemon(root, env)  # also when it failed: the bench stops what it started
                row["nav_hits"] = nav_hits
                row["nav_complete"] = data["complete"]
                row["nav_reason"] = data["reason"]
                row["nav_notes"] = data["notes"]
        row["same_answer"] = row["nav_hits"] == row["direct_hits"]
        row["diff_s"] = row["nav_s"] - row["direct_s"]
        print(f"round {k + 1} ({order[0]} first): direct {row['direct_s']:.2f}s ({len(row['direct_hits'])} refs, "
              f"asked {row['direct_asked']}x), nav {row['nav_s']:.2f}s ({len(row['nav_hits'])} precise, "
              f"same: {row['same_answer']}), diff {row['diff_s']:+.2f}s; nav notes: {row['nav_notes']}",
              file=sys.stderr, flush=True)  # fmt: skip
        results.append(row)
    diffs = [r["diff_s"] for r in results]
    low, high = bootstrap_ci(diffs, rounds=5000, seed=0, symmetric=False)  # its reported intervals
    summary = {
        "language": args.language,
        "server": server_name,
        "repo": root.name,
        "name": args.name,
        "refs": len(results[0]["direct_hits"]) if results else None,
        "calibration_settled_s": settle_s,
        "rounds": len(results),
        "direct_median_s": statistics.median(r["direct_s"] for r in results),
        "nav_median_s": statistics.median(r["nav_s"] for r in results),
        "diff_median_s": statistics.median(diffs),
        "diff_mean_s": statistics.fmean(diffs),
        "diff_mean_ci95": [low, high],
        "all_same_answer": all(r["same_answer"] for r in results),
        "all_complete": all(r["nav_complete"] for r in results),
    }
    out = HERE / "results" / f"cold_start-{args.language}{'-' + args.tag if args.tag else ''}.json"
    write_json(out, {"summary": summary, "rounds": [
        {k: (sorted(v) if isinstance(v, set) else v) for k, v in r.items()} for r in results]})  # fmt: skip
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
