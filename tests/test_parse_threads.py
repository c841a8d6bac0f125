"""Parsing on several threads at once (the editor server parses open buffers on a thread pool)
gives each thread's answer as one thread alone gives it, and never crashes the process: a
tree-sitter parser holds the state of the parse under way, so each thread has its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = r"""
import sys, threading
from pathlib import Path
from semantic.parse import parse_source

ws = Path(sys.argv[1])
texts = [p.read_text() * 40 for p in sorted((ws / "typescript" / "src").glob("*.ts"))]
alone = [parse_source("x.ts", t, "typescript") for t in texts]
wrong = []

def work(k):
    for _ in range(6):
        for i, t in enumerate(texts):
            if parse_source("x.ts", t, "typescript") != alone[i]:
                wrong.append(i)

threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("differ", len(wrong))
"""


def test_parsing_on_four_threads_at_once_matches_one_thread_and_does_not_crash() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROOT / "tests" / "workspaces")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert out.returncode == 0, f"the parsing process died ({out.returncode}): {out.stderr[-2000:]}"
    assert out.stdout.strip() == "differ 0"
