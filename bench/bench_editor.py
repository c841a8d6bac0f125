"""`nav lsp` against the managed server asked directly, in the same run.

For a Python repository (default: requests 2.32.3 under /work/corpora, copied to a scratch
folder so nothing is written into the shared corpus), both clients speak raw LSP over stdio:

- cold: from process start to the first non-empty definition answer (initialize,
  initialized, didOpen, then definition until it answers), nav lsp vs basedpyright;
- warm: definition, references and hover at N call sites of functions defined in the
  repository, each asked of both servers back to back; medians and the paired difference
  (nav − direct) with a bootstrap 95% interval.

nav lsp runs with ``--no-daemon`` (the index is built first, outside the timing, by
``nav index``), so it answers from its own basedpyright exactly as in an editor.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/bench_editor.py [--repo PATH] [-n 20]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness.jsonrpc import frame, read_frame  # noqa: E402
from bench.harness.stats import bootstrap_ci  # noqa: E402

DEFAULT_REPO = Path("/work/corpora/psf-requests-2.32.3")


class Client:
    """A minimal LSP client over a subprocess's stdio; answers server requests with defaults."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)  # fmt: skip
        self.replies: dict[Any, queue.Queue[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.ids = iter(range(1, 10**9))
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        with self.lock:
            self.proc.stdin.write(frame(obj))
            self.proc.stdin.flush()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            msg = read_frame(out)
            if msg is None:
                return
            if "method" in msg and "id" in msg:  # a request from the server
                result: Any = None
                if msg["method"] == "workspace/configuration":
                    result = [None for _ in msg.get("params", {}).get("items", [])]
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "id" in msg and "method" not in msg:
                self.replies.setdefault(msg["id"], queue.Queue()).put(msg)

    def request(self, method: str, params: Any, timeout: float = 120.0) -> tuple[Any, float]:
        msg_id = next(self.ids)
        box = self.replies.setdefault(msg_id, queue.Queue())
        t = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        reply = box.get(timeout=timeout)
        elapsed = (time.perf_counter() - t) * 1e3
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result"), elapsed

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def initialize(self, root: Path) -> None:
        caps = {"textDocument": {"definition": {}, "references": {}, "hover": {"contentFormat": ["markdown"]}},
                "workspace": {"configuration": True, "workspaceFolders": True}}  # fmt: skip
        self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps,
                                    "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]})  # fmt: skip
        self.notify("initialized", {})

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=20)
            self.notify("exit", None)
            self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001 - a benchmark's teardown: make sure it is gone
            self.proc.kill()
            self.proc.wait()


def call_sites(root: Path, n: int, seed: int) -> list[tuple[Path, int, int]]:
    """``n`` calls of functions defined in the repository: (file, 0-based line, character)."""
    files = [p for p in root.rglob("*.py") if ".nav" not in p.parts and "tests" not in p.parts and "docs" not in p.parts]
    defined = set()
    for f in files:
        defined |= set(re.findall(r"^\s*def ([a-z_][a-z0-9_]{3,})\(", f.read_text(errors="replace"), re.M))
    sites = []
    for f in files:
        for i, line in enumerate(f.read_text(errors="replace").splitlines()):
            for m in re.finditer(r"(?<![\w.])([a-z_][a-z0-9_]{3,})\(", line):
                if m.group(1) in defined and not line.lstrip().startswith(("def ", "#")):
                    sites.append((f, i, m.start(1) + 1))
    random.Random(seed).shuffle(sites)
    return sites[:n]


def doc_pos(path: Path, line: int, char: int) -> dict[str, Any]:
    return {"textDocument": {"uri": path.as_uri()}, "position": {"line": line, "character": char}}


def cold(client: Client, root: Path, site: tuple[Path, int, int]) -> float:
    client.initialize(root)
    path = site[0]
    client.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python",
                                                            "version": 1, "text": path.read_text()}})  # fmt: skip
    for _ in range(600):
        result, _ = client.request("textDocument/definition", doc_pos(*site))
        if result:
            return (time.perf_counter() - client.started) * 1e3
        time.sleep(0.1)  # the direct server answers empty until it has analysed the file: ask again
    raise RuntimeError("no definition answer within 60 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    parser.add_argument("-n", type=int, default=20, help="call sites (warm requests per kind)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-editor-"))
    root = scratch / args.repo.name
    shutil.copytree(args.repo, root, ignore=shutil.ignore_patterns(".nav", ".git"))
    py = sys.executable
    env = {**os.environ, "NAV_NO_DAEMON": "1"}
    subprocess.run([py, "-m", "navigator.frontends.cli", "--no-daemon", "-C", str(root), "index"], check=True,
                   capture_output=True, env=env)  # fmt: skip
    sites = call_sites(root, args.n, args.seed)
    direct_cmd = [str(Path(py).parent / "basedpyright-langserver"), "--stdio"]
    nav_cmd = [py, "-m", "navigator.frontends.cli", "--no-daemon", "lsp"]
    out: dict[str, Any] = {"repo": str(args.repo), "sites": len(sites)}
    try:
        cold_direct = Client(direct_cmd, root)
        out["cold_direct_ms"] = round(cold(cold_direct, root, sites[0]))
        cold_nav = Client(nav_cmd, root, env)
        out["cold_nav_ms"] = round(cold(cold_nav, root, sites[0]))
        for client in (cold_direct, cold_nav):  # warm: both are loaded now
            for path in {s[0] for s in sites}:
                client.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": "python",
                                                                        "version": 1, "text": path.read_text()}})  # fmt: skip
        for method, extra in (("textDocument/definition", {}), ("textDocument/hover", {}),
                              ("textDocument/references", {"context": {"includeDeclaration": True}})):  # fmt: skip
            for client in (cold_direct, cold_nav):  # one untimed round each: caches filled alike
                for site in sites:
                    client.request(method, {**doc_pos(*site), **extra})
            direct, nav = [], []
            for site in sites:
                params = {**doc_pos(*site), **extra}
                order = [(cold_direct, direct), (cold_nav, nav)]
                random.Random(hash(site)).shuffle(order)  # neither always goes first
                for client, times in order:
                    times.append(client.request(method, params)[1])
            diffs = [b - a for a, b in zip(direct, nav, strict=True)]
            lo, hi = bootstrap_ci(diffs, statistic=statistics.median, seed=1, symmetric=False)  # as reported
            name = method.split("/")[1]
            out[name] = {"direct_p50_ms": round(statistics.median(direct), 1), "nav_p50_ms": round(statistics.median(nav), 1),
                         "paired_diff_p50_ms": round(statistics.median(diffs), 1), "ci95": [round(lo, 1), round(hi, 1)]}  # fmt: skip
        cold_direct.close()
        cold_nav.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
