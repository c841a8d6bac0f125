"""Fault scenarios, area ``embedding``: the default model's ONNX int8 export broken or impossible.

Each scenario has its own cache folder (``NAV_CACHE_DIR``) and a small real repository, and runs
the real CLI (`nav index --embed`, `nav search --json`) in fresh processes:

- honest: the command exits 0 with no traceback, and a search either has every leg or says it
  is partial with a reason that names the model (``complete: false``);
- recovered: a later fresh process answers complete with vectors, no hand step (a broken export
  is made again on the next start; an unwritable cache means torch from the start);
- lost: always 0 here (the index and its vectors are not touched by these faults).
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

from bench.fault_scenarios import FaultResult, Scenario
from tests.faultkit import make_repo, nav_cmd, nav_env

AREA = "embedding"
QUERY = "helper value of a model"


def _nav(root: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**nav_env(), "NAV_CACHE_DIR": str(cache)}
    env.pop("NAV_EMBED_RUNTIME", None)
    return subprocess.run(nav_cmd(root, *args), env=env, capture_output=True, text=True, timeout=180)


def _search(root: Path, cache: Path) -> tuple[bool, dict[str, object]]:
    """(no traceback and exit 0, the JSON answer)."""
    out = _nav(root, cache, "search", "--json", QUERY)
    ok = out.returncode == 0 and "Traceback" not in out.stderr
    try:
        data = json.loads(out.stdout)
    except ValueError:
        return False, {}
    return ok, data if isinstance(data, dict) else {}


def _complete(data: dict[str, object]) -> bool:
    return data.get("complete") is True and bool(data.get("items"))


def broken_export_file(workdir: Path) -> list[FaultResult]:
    """The cached model-int8.onnx overwritten with random bytes, then cut to half its size."""
    root = make_repo(workdir / "repo", files=12)
    cache = workdir / "cache"
    first = _nav(root, cache, "index", "--embed")
    if first.returncode != 0:
        raise RuntimeError(f"setup failed: {first.stderr[-300:]}")
    rng = random.Random(9)
    honest = recovered = injected = 0
    for how in ("random bytes", "truncated"):
        (model,) = cache.glob("onnx/*/model-int8.onnx")
        if how == "random bytes":
            model.write_bytes(rng.randbytes(4096))
        else:
            data = model.read_bytes()
            model.write_bytes(data[: len(data) // 2])
        injected += 1
        ok, data = _search(root, cache)
        reason = str(data.get("reason") or "")
        if ok and (_complete(data) or ("ONNX" in reason and "NAV_EMBED_RUNTIME" in reason)):
            honest += 1
        ok2, again = _search(root, cache)  # a fresh process: the export is made again
        if ok2 and _complete(again):
            recovered += 1
    return [
        FaultResult(
            AREA,
            "the cached ONNX export corrupted (random bytes; truncated) before a search",
            injected,
            honest,
            recovered,
            note="honest = lexical answer, complete=false, reason names the file and NAV_EMBED_RUNTIME",
        )
    ]


def unwritable_cache(workdir: Path) -> list[FaultResult]:
    """NAV_CACHE_DIR under a regular file: no export can be written; nav must embed with torch."""
    root = make_repo(workdir / "repo", files=12)
    (workdir / "a-file").write_text("", encoding="utf-8")
    cache = workdir / "a-file" / "nav"
    out = _nav(root, cache, "index", "--embed")
    honest = int(out.returncode == 0 and "Traceback" not in out.stderr and "vectors:" in out.stdout)
    ok, data = _search(root, cache)
    return [
        FaultResult(
            AREA,
            "the cache folder for the ONNX export cannot be written",
            1,
            honest,
            int(ok and _complete(data)),
            note="torch embeds, with a log line naming the folder",
        )
    ]


SCENARIOS: list[Scenario] = [broken_export_file, unwritable_cache]
