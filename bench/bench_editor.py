"""`nav lsp` against the managed server asked directly, in the same run.

For a Python repository (default: requests 2.32.3 under /work/corpora) or a TypeScript one
(``--language typescript --repo PATH``), copied to a scratch folder so nothing is written
into the shared corpus, both clients speak raw LSP over stdio:

- cold: from process start to the first non-empty definition answer (initialize,
  initialized, didOpen, then definition until it answers), nav lsp vs the server nav
  manages for the language (basedpyright, typescript-language-server), launched with the
  command line, initialization options and settings nav gives it;
- warm: definition, hover and references at N call sites of functions defined in the
  repository, and workspace/symbol for the N names called there, each asked of both servers
  back to back in random order; medians and the paired difference (nav − direct) with a
  bootstrap 95% interval. Every timed request is asked once per server (the untimed
  warm-up round uses other call sites), so nothing is answered from a memory of the same
  question; ``--repeats`` also times each definition asked again, reported apart.

nav lsp runs with ``--no-daemon`` (the index is built first, outside the timing, by
``nav index``), so it answers from its own managed server exactly as in an editor.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/bench_editor.py [--repo PATH] [-n 20]
    PYTHONPATH=$PWD nice -n 10 .venv/bin/python bench/bench_editor.py --language typescript --repo /tmp/trpc
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
from lsp.registry import available_definition  # noqa: E402

DEFAULT_REPO = Path("/work/corpora/psf-requests-2.32.3")


class Client:
    """A minimal LSP client over a subprocess's stdio; answers server requests with defaults."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str] | None = None,
                 settings: dict[str, Any] | None = None, init_options: Any = None) -> None:  # fmt: skip
        self.settings = settings
        self.init_options = init_options
        self.started = time.perf_counter()
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server; read back if it dies
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr)  # fmt: skip
        self.replies: dict[Any, queue.Queue[dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.ids = iter(range(1, 10**9))
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        with self.lock:
            try:
                self.proc.stdin.write(frame(obj))
                self.proc.stdin.flush()
            except BrokenPipeError:
                self.stderr.seek(0)
                kept = Path(tempfile.gettempdir()) / f"bench-editor-{self.proc.pid}.stderr"
                kept.write_bytes(self.stderr.read())
                raise RuntimeError(
                    f"{self.proc.args[:5]} exited ({self.proc.poll()}); its stderr: {kept}"
                ) from None

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
                    result = [
                        _section(self.settings, i.get("section"))
                        for i in msg.get("params", {}).get("items", [])
                    ]
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
                "window": {"workDoneProgress": True},
                "workspace": {"configuration": True, "workspaceFolders": True}}  # fmt: skip
        self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps,
                                    "initializationOptions": self.init_options,
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


def _section(settings: dict[str, Any] | None, section: str | None) -> Any:
    if settings is None:
        return None
    node: Any = settings
    for part in (section or "").split(".") if section else ():
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


LANGUAGES: dict[str, dict[str, Any]] = {
    "python": {
        "suffixes": {".py"}, "skip": {"tests", "docs"},
        "defs": r"^\s*def ([a-z_][a-z0-9_]{3,})\(",
        "calls": r"(?<![\w.])([a-z_][a-z0-9_]{3,})\(", "not_lines": ("def ", "#"),
    },
    "typescript": {
        "suffixes": {".ts", ".tsx"}, "skip": {"node_modules", "dist", "__tests__", "test", "tests"},
        "defs": r"^\s*(?:export\s+)?(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]{3,})\s*[<(]",
        "calls": r"(?<![\w$.])([A-Za-z_$][\w$]{3,})\(", "not_lines": ("function ", "export function ", "//", "*", "import "),
    },
}  # fmt: skip


def _sources(root: Path, spec: dict[str, Any]) -> list[Path]:
    out = []
    for p in sorted(root.rglob("*")):
        skipped = {".nav", *spec["skip"]} & set(p.relative_to(root).parts)
        if p.suffix in spec["suffixes"] and not p.name.endswith(".d.ts") and not skipped and p.is_file():
            out.append(p)
    return out


def call_sites(root: Path, n: int, seed: int, language: str = "python") -> list[tuple[Path, int, int]]:
    """``n`` calls of functions defined in the repository: (file, 0-based line, character)."""
    spec = LANGUAGES[language]
    files = _sources(root, spec)
    defined = set()
    for f in files:
        defined |= set(re.findall(spec["defs"], f.read_text(errors="replace"), re.M))
    sites = []
    for f in files:
        for i, line in enumerate(f.read_text(errors="replace").splitlines()):
            for m in re.finditer(spec["calls"], line):
                if m.group(1) in defined and not line.lstrip().startswith(spec["not_lines"]):
                    sites.append((f, i, m.start(1) + 1))
    random.Random(seed).shuffle(sites)
    return sites[:n]


def site_name(site: tuple[Path, int, int]) -> str:
    line = site[0].read_text(errors="replace").splitlines()[site[1]]
    m = re.match(r"[\w$]+", line[site[2] :])
    return m.group(0) if m else ""


def open_doc(client: Client, path: Path, language_id: str) -> None:
    client.notify("textDocument/didOpen", {"textDocument": {"uri": path.as_uri(), "languageId": language_id,
                                                            "version": 1, "text": path.read_text()}})  # fmt: skip


def doc_pos(path: Path, line: int, char: int) -> dict[str, Any]:
    return {"textDocument": {"uri": path.as_uri()}, "position": {"line": line, "character": char}}


def cold(client: Client, root: Path, site: tuple[Path, int, int], language_id: str) -> float:
    client.initialize(root)
    open_doc(client, site[0], language_id)
    for _ in range(1200):
        result, _ = client.request("textDocument/definition", doc_pos(*site))
        if result:
            return (time.perf_counter() - client.started) * 1e3
        time.sleep(0.1)  # the direct server answers empty until it has analysed the file: ask again
    raise RuntimeError("no definition answer within 120 s")


def paired(clients: tuple[Client, Client], asks: list[tuple[str, Any]], seed: int) -> dict[str, Any]:
    """Each (method, params) asked of both clients back to back, in random order."""
    direct, nav = [], []
    for k, (method, params) in enumerate(asks):
        order = [(clients[0], direct), (clients[1], nav)]
        random.Random(seed * 100003 + k).shuffle(order)  # neither always goes first
        for client, times in order:
            times.append(client.request(method, params)[1])
    diffs = [b - a for a, b in zip(direct, nav, strict=True)]
    lo, hi = bootstrap_ci(diffs, statistic=statistics.median, seed=1, symmetric=False)  # as reported
    return {"n": len(diffs), "direct_p50_ms": round(statistics.median(direct), 1),
            "nav_p50_ms": round(statistics.median(nav), 1),
            "paired_diff_p50_ms": round(statistics.median(diffs), 1), "ci95": [round(lo, 1), round(hi, 1)]}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--language", choices=sorted(LANGUAGES), default="python")
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO)
    parser.add_argument("-n", type=int, default=20, help="call sites (warm requests per kind)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--repeats", action="store_true", help="also time each definition asked a second time"
    )
    parser.add_argument("--out", type=Path, help="write the figures here as JSON too")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-editor-"))
    root = scratch / args.repo.name
    shutil.copytree(args.repo, root, ignore=shutil.ignore_patterns(".nav", ".git"), symlinks=True)
    py = sys.executable
    env = {**os.environ, "NAV_NO_DAEMON": "1"}
    subprocess.run([py, "-m", "navigator.frontends.cli", "--no-daemon", "-C", str(root), "index"], check=True,
                   capture_output=True, env=env)  # fmt: skip
    found = available_definition(args.language)
    if found is None:
        raise SystemExit(f"no server installed for {args.language}")
    definition, binary = found
    definition.prepare(root)
    launch = definition.launch(root, binary)
    sites = call_sites(root, 2 * args.n, args.seed, args.language)
    timed, warmup = sites[: args.n], sites[args.n :]  # the warm-up round asks other sites
    nav_cmd = [py, "-X", "faulthandler", "-m", "navigator.frontends.cli", "--no-daemon", "lsp"]
    language_id = definition.language_id(str(timed[0][0]))
    out: dict[str, Any] = {"repo": str(args.repo), "language": args.language, "server": definition.name,
                           "sites": len(timed)}  # fmt: skip
    clients: list[Client] = []
    try:
        cold_direct = Client(list(launch.cmd), root, {**os.environ, **launch.env}, definition.settings(root),
                             definition.initialization_options(root))  # fmt: skip
        clients.append(cold_direct)
        out["cold_direct_ms"] = round(cold(cold_direct, root, timed[0], language_id))
        cold_nav = Client(nav_cmd, root, env)
        clients.append(cold_nav)
        out["cold_nav_ms"] = round(cold(cold_nav, root, timed[0], language_id))
        pair = (cold_direct, cold_nav)
        for client in pair:  # warm: both are loaded now
            for path in sorted({s[0] for s in sites}):
                open_doc(client, path, definition.language_id(str(path)))
        kinds = (("textDocument/definition", {}), ("textDocument/hover", {}),
                 ("textDocument/references", {"context": {"includeDeclaration": True}}))  # fmt: skip
        for method, extra in kinds:
            for client in pair:  # one untimed round each, at other sites: caches filled alike
                for site in warmup:
                    client.request(method, {**doc_pos(*site), **extra})
            asks = [(method, {**doc_pos(*site), **extra}) for site in timed]
            out[method.split("/")[1]] = paired(pair, asks, args.seed)
        names = list(dict.fromkeys(site_name(s) for s in timed))
        for client in pair:
            for name in dict.fromkeys(site_name(s) for s in warmup):
                if name not in names:
                    client.request("workspace/symbol", {"query": name})
        out["workspace_symbol"] = paired(pair, [("workspace/symbol", {"query": q}) for q in names], args.seed)
        if args.repeats:
            asks = [("textDocument/definition", doc_pos(*site)) for site in timed]
            out["definition_repeat"] = paired(pair, asks, args.seed + 1)
    finally:
        for client in clients:
            client.close()
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(out, indent=2))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
